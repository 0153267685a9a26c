"""cdk-nag acknowledgments: one call per finding, the reason next to the code that causes it.

cdk-nag 3.x reads CDK's own `Validations` acknowledgments. A finding id is the rule
(``AwsSolutions-IAM5``), or for rules that report several findings per resource the rule and the
finding (``AwsSolutions-IAM5[Resource::*]``); each one is acknowledged on its own.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(construct: IConstruct, finding: str, reason: str) -> None:
    """Accept one AwsSolutions finding on ``construct`` (and its children), with why."""
    if len(reason) < 20:
        raise ValueError(f"say why {finding} is acceptable, in a sentence")
    rule = finding if finding.startswith("AwsSolutions-") else f"AwsSolutions-{finding}"
    Validations.of(construct).acknowledge(Acknowledgment(id=rule, reason=reason))
