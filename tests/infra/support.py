"""What the infra tests share: the synthesized stack's wrapper and template helpers."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CDK_DIR = ROOT / "cdk"
if str(CDK_DIR) not in sys.path:
    sys.path.insert(0, str(CDK_DIR))

CDK_MISSING = importlib.util.find_spec("aws_cdk") is None or importlib.util.find_spec("cdk_nag") is None
SKIP_REASON = "aws-cdk-lib / cdk-nag not installed: `pip install -e '.[cdk]'` (make test installs it)"


def committed_context() -> dict[str, Any]:
    """The ``agent_memory`` object of cdk/cdk.json, as committed."""
    context: dict[str, Any] = json.loads((CDK_DIR / "cdk.json").read_text())["context"]["agent_memory"]
    return context


@dataclass
class Synth:
    """A synthesized stack: the construct (for logical ids) and its template."""

    stack: Any
    template: Any  # aws_cdk.assertions.Template
    raw: dict[str, Any]
    path: Path
    outdir: Path

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.raw["Resources"]  # type: ignore[no-any-return]

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == cfn_type}

    def logical_id(self, construct: Any) -> str:
        node = getattr(construct, "node", None)
        child = node.default_child if node is not None and node.default_child is not None else construct
        return str(self.stack.get_logical_id(child))

    def props(self, construct: Any) -> dict[str, Any]:
        return self.resources[self.logical_id(construct)]["Properties"]  # type: ignore[no-any-return]

    def function(self, name: str) -> dict[str, Any]:
        return self.props(self.stack.factory.functions[name])

    def role_statements(self, role: Any) -> list[dict[str, Any]]:
        """Every statement of the identity policies attached to ``role``."""
        ref = {"Ref": self.logical_id(role)}
        statements: list[dict[str, Any]] = []
        for policy in self.of_type("AWS::IAM::Policy").values():
            if ref in policy["Properties"]["Roles"]:
                statements += policy["Properties"]["PolicyDocument"]["Statement"]
        return statements

    def function_statements(self, name: str) -> list[dict[str, Any]]:
        return self.role_statements(self.stack.factory.functions[name].role)


def render(value: Any) -> Any:
    """A template value with intrinsics turned into readable strings (``<Logical.Arn>``, ``<Ref>``)."""
    if isinstance(value, dict):
        if "Fn::Join" in value:
            sep, parts = value["Fn::Join"]
            return sep.join(str(render(p)) for p in parts)
        if "Fn::GetAtt" in value:
            return f"<{'.'.join(value['Fn::GetAtt'])}>"
        if "Ref" in value:
            return f"<{value['Ref']}>"
        return {k: render(v) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v) for v in value]
    return value


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
