"""The client and the LLM tools install alone (``pip install agent-memory``, pydantic its only
dependency): importing them must not reach a package of the ``server`` extra. Checked offline in a
fresh interpreter whose imports of those packages fail, as they would where they are not installed
(`benchmarks/client_footprint.py` measures the real install)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
#: The import names of the server extra's distributions (and what they bring).
SERVER_PACKAGES = (
    "aws_lambda_powertools",
    "pydantic_settings",
    "boto3",
    "botocore",
    "opensearchpy",
    "numpy",
    "tzdata",
)
CLIENT_MODULES = ("agent_memory.client", "agent_memory.tools", "agent_memory.client.importing")

BLOCKED_IMPORTS = """
import importlib.abc, sys
blocked = set(sys.argv[1].split(","))
reached = []
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            reached.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Absent())
for module in sys.argv[2].split(","):
    try:
        __import__(module)
    except ModuleNotFoundError as exc:
        print(f"{module}: {exc}")
print("reached:", sorted(set(reached)))
"""


def _import_without(blocked: tuple[str, ...], modules: tuple[str, ...]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORTS, ",".join(blocked), ",".join(modules)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout.splitlines()


def test_the_client_and_the_tools_import_without_any_server_package() -> None:
    # WHEN the client's modules are imported where no server package can be
    printed = _import_without(SERVER_PACKAGES, CLIENT_MODULES)

    # THEN every one imports, and none of them even tried
    assert printed == ["reached: []"]


def test_the_check_sees_a_module_that_needs_a_server_package() -> None:
    # WHEN / THEN the same check on the writer handler (which needs Powertools) names it
    printed = _import_without(SERVER_PACKAGES, ("agent_memory.handlers.writer",))
    assert printed[0].startswith("agent_memory.handlers.writer: No module named")
    assert printed[-1] != "reached: []"


@pytest.mark.parametrize("package", ["boto3", "numpy", "opensearch-py", "aws-lambda-powertools[tracer]"])
def test_the_base_install_is_the_client_and_the_server_is_an_extra(package: str) -> None:
    # GIVEN the package's declared dependencies
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [d.split(">")[0].split("=")[0].split("<")[0] for d in project["dependencies"]]

    # WHEN / THEN pydantic alone is the base; each server package is in the server extra
    assert names == ["pydantic"]
    assert any(d.startswith(package) for d in project["optional-dependencies"]["server"])
