"""The synthesized stack, deployed into moto and fakes, one fresh deployment per test."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.deployed.harness import REGION, Deployment, enforce
from tests.infra.support import CDK_MISSING, SKIP_REASON, committed_context


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    """The default stack's template, and each function's logical id by the factory's name."""
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    from tests.infra.conftest import _synth

    synth = _synth(tmp_path_factory.mktemp("deployed"), committed_context())
    functions = {name: synth.logical_id(fn) for name, fn in synth.stack.factory.functions.items()}
    return synth.raw, functions


@pytest.fixture(scope="session")
def files_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    """The serverless store's stack (``-c store=serverless``), as `template`."""
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    from tests.infra.conftest import _synth

    synth = _synth(tmp_path_factory.mktemp("deployed-files"), {**committed_context(), "store": "serverless"})
    functions = {name: synth.logical_id(fn) for name, fn in synth.stack.factory.functions.items()}
    return synth.raw, functions


@pytest.fixture
def deploy(
    template: tuple[dict[str, Any], dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[dict[str, Any]], None] | None], Deployment]]:
    """Deploy the template (optionally edited first) into moto; every call checked against IAM."""
    yield from _deployments(template, monkeypatch)


@pytest.fixture
def deploy_files(
    files_template: tuple[dict[str, Any], dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[dict[str, Any]], None] | None], Deployment]]:
    """`deploy`, of the serverless store's stack (its bucket in moto's S3)."""
    yield from _deployments(files_template, monkeypatch)


def _deployments(
    template: tuple[dict[str, Any], dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[dict[str, Any]], None] | None], Deployment]]:
    from moto import mock_aws

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    mock = mock_aws()
    with mock:
        stack: list[Any] = []

        def make(edit: Callable[[dict[str, Any]], None] | None = None) -> Deployment:
            """A fresh deployment: what an earlier one of this test made is gone."""
            while stack:
                stack.pop().__exit__(None, None, None)
            mock.reset()
            raw, functions = template
            raw = copy.deepcopy(raw)
            if edit is not None:
                edit(raw)
            deployment = Deployment(raw, functions)
            deployment.provision()
            context = enforce(deployment)
            context.__enter__()
            stack.append(context)
            return deployment

        try:
            yield make
        finally:
            for context in reversed(stack):
                context.__exit__(None, None, None)


@pytest.fixture
def deployment(deploy: Callable[..., Deployment]) -> Deployment:
    return deploy()


def events_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "events"
