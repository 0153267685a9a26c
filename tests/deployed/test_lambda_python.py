"""The environment of the deployed tests' second run in `make test` (``make test-lambda-python``):
Lambda's Python, the layer's locked packages at their locked versions, the function code from the
checkout, and none of the development environment's extras. Skipped in the first run."""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import pytest
from tests.deployed import templates

pytestmark = pytest.mark.skipif(
    not os.environ.get(templates.ENV), reason="only on Lambda's Python (make test-lambda-python)"
)

#: Modules of the local runtime, the CDK and the development tools: the functions must not need them.
EXTRAS = ("onnxruntime", "tokenizers", "usearch", "aws_cdk", "cdk_nag", "hypothesis", "mcp", "mypy", "ruff")


def _layer_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layer_build", templates.ROOT / "layers" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_is_the_python_lambda_runs() -> None:
    # WHEN / THEN
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == _layer_build().PYTHON_VERSION


def test_every_locked_package_is_there_at_its_locked_version() -> None:
    # GIVEN
    lock = _layer_build().locked()
    # WHEN
    installed = {name: version(name) for name in lock}
    # THEN
    assert installed == lock


def test_no_extra_of_the_development_environment_is_importable() -> None:
    # WHEN / THEN
    assert [m for m in EXTRAS if importlib.util.find_spec(m) is not None] == []


def test_the_function_code_is_the_checkouts() -> None:
    # GIVEN
    import agent_memory

    # WHEN / THEN
    assert Path(agent_memory.__file__).resolve().is_relative_to(templates.ROOT / "functions")
