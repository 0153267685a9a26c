"""The synthesized stack, deployed into moto and fakes, one fresh deployment per test."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.deployed import templates
from tests.deployed.harness import REGION, Deployment, enforce
from tests.deployed.templates import Template
from tests.infra.support import CDK_MISSING, SKIP_REASON
from tests.moto_sessions import keep_one_boto3_session

keep_one_boto3_session()  # this folder also runs alone, on Lambda's Python, without the root conftest


def _template(variant: str, tmp_path_factory: pytest.TempPathFactory) -> Template:
    """``variant`` (`templates.VARIANTS`): read from the saved files on Lambda's Python (which has
    no CDK), else synthesized here and saved for that run."""
    saved = os.environ.get(templates.ENV)
    if saved:
        return templates.load(Path(saved), variant)
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    template = templates.synthesize(variant, tmp_path_factory.mktemp(f"deployed-{variant}"))
    templates.save(templates.FOLDER, variant, template)
    return template


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The default stack's template, and each function's logical id by the factory's name."""
    return _template("default", tmp_path_factory)


@pytest.fixture(scope="session")
def files_template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The serverless store's stack (``-c store=serverless``), as `template`."""
    return _template("files", tmp_path_factory)


@pytest.fixture
def deploy(
    template: Template, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[dict[str, Any]], None] | None], Deployment]]:
    """Deploy the template (optionally edited first) into moto; every call checked against IAM."""
    yield from _deployments(template, monkeypatch)


@pytest.fixture
def deploy_files(
    files_template: Template, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[dict[str, Any]], None] | None], Deployment]]:
    """`deploy`, of the serverless store's stack (its bucket in moto's S3)."""
    yield from _deployments(files_template, monkeypatch)


def _deployments(
    template: Template, monkeypatch: pytest.MonkeyPatch
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
