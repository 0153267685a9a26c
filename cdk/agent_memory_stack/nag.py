"""cdk-nag acknowledgments: one call per finding, the reason next to the code that causes it.

cdk-nag 3.x reads CDK's own `Validations` acknowledgments, under the id cdk-nag prints with each
finding: ``AwsSolutions::<rule>``, where the rule is ``AwsSolutions-OS1``, or for rules that
report several findings per resource the rule and the finding
(``AwsSolutions-IAM5[Resource::*]``). Each finding is acknowledged on its own.
"""

from __future__ import annotations

from typing import cast

from aws_cdk import Acknowledgment, CfnElement, Stack, Validations
from constructs import IConstruct

PACK = "AwsSolutions"


def acknowledge(construct: IConstruct, finding: str, reason: str) -> None:
    """Accept one AwsSolutions finding (``"IAM5[Resource::*]"``) on ``construct``, saying why."""
    if len(reason) < 40:
        raise ValueError(f"say why {finding} is acceptable, in a sentence")
    Validations.of(construct).acknowledge(Acknowledgment(id=f"{PACK}::{PACK}-{finding}", reason=reason))


def logical_id(construct: IConstruct) -> str:
    """The CloudFormation logical id of an L2 construct's resource, as findings print it."""
    return Stack.of(construct).get_logical_id(cast(CfnElement, construct.node.default_child))


def as_finding(scope: IConstruct, value: str) -> str:
    """``value`` (an ARN with tokens) as cdk-nag spells it in a finding id.

    Pseudo parameters stay ``<AWS::Region>`` in an environment-agnostic stack but become the
    literal region when ``cdk`` runs with credentials, so the id is rendered, not hard-coded.
    """
    return _render(Stack.of(scope).resolve(value))


def _render(value: object) -> str:
    if isinstance(value, dict):
        if "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            return str(separator).join(_render(part) for part in parts)
        if "Ref" in value:
            return f"<{value['Ref']}>"
        if "Fn::GetAtt" in value:
            return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return str(value)
