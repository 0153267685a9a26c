"""Synthesize the stack once per test session, offline and without Docker, for every infra test.

Three variants: the default (cdk.json as committed: managed domain, the global inference profile
as summary model), the alternative (another stage, timezone and geographic inference profile, an
alarm topic, nothing retained) and the serverless store (tenants' files in S3). Each is built
exactly as ``cdk synth`` builds it (`app.build`, cdk-nag attached), with asset bundling skipped
(``aws:cdk:bundling-stacks = []``), so the layer's pip install never runs here; `make synth`
builds it for real. A finding cdk-nag does not see acknowledged fails the synth, and so the tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_socket import disable_socket, enable_socket
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, committed_context

#: The alternative variant, on top of cdk.json.
ALTERNATIVE = {
    "stage": "alt",
    "timezone": "Europe/Berlin",
    "summary_model_id": "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
    "alarm_topic_arn": "arn:aws:sns:us-east-1:123456789012:oncall",
    "retain_data": False,
    "plans": {"pro": {"working": 720}, "team": {"daily": 2400, "yearly": None}},
    "retention": {"default_ttls": False, "forget_grace_days": 30, "max_working_per_agent": 500},
}


def _synth(
    tmp: Path, context: dict[str, Any], account: str | None = None, region: str | None = None
) -> Synth:
    from aws_cdk import App, Environment
    from aws_cdk.assertions import Template

    import app as cdk_app
    from agent_memory_stack.config import parse_config

    outdir = tmp / "cdk.out"
    app = App(outdir=str(outdir), context={"aws:cdk:bundling-stacks": []})
    disable_socket()  # synthesis must not need the network
    try:
        stack = cdk_app.build(app, parse_config(context), Environment(account=account, region=region))
        app.synth()  # raises on any unacknowledged cdk-nag finding
    finally:
        enable_socket()
    path = outdir / f"{stack.stack_name}.template.json"
    raw = json.loads(path.read_text())
    return Synth(stack=stack, template=Template.from_json(raw), raw=raw, path=path, outdir=outdir)


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    """The stack from cdk.json as committed (managed OpenSearch domain)."""
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    yield _synth(tmp_path_factory.mktemp("default"), committed_context())


@pytest.fixture(scope="session")
def alt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    """The alternative: Europe/Berlin, an EU inference profile, an alarm topic, nothing retained,
    and a concrete account and region (as `cdk` with credentials synthesizes)."""
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    yield _synth(
        tmp_path_factory.mktemp("alternative"),
        {**committed_context(), **ALTERNATIVE},
        account="123456789012",
        region="eu-west-1",
    )


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    """The serverless store (``-c store=serverless``): tenants' files in S3, no OpenSearch."""
    if CDK_MISSING:
        pytest.skip(SKIP_REASON)
    yield _synth(tmp_path_factory.mktemp("files"), {**committed_context(), "store": "serverless"})
