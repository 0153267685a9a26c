"""Shared fixtures. Unit tests cannot reach the network; integration tests may use loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import settings
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts
from tests.fakes import FixedClock
from tests.moto_sessions import keep_one_boto3_session

from agent_memory.observability import discard_unpublished_metrics

ROOT = Path(__file__).resolve().parents[1]

keep_one_boto3_session()  # see tests/moto_sessions.py: minutes of model loading spared

# Property tests run the same examples on every run, so a suite that passed once passes again
# (CI must not find a new counter-example by chance). `HYPOTHESIS_PROFILE=explore` searches
# afresh with a random seed and more examples.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(autouse=True)
def _network_policy(request: pytest.FixtureRequest) -> Iterator[None]:
    """No sockets in unit tests; loopback only everywhere else."""
    if "tests/unit" in str(request.node.path):
        disable_socket()
    else:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "localhost", "::1"], allow_unix_socket=True)
    yield
    enable_socket()


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region, so no test can ever talk to a real AWS account."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "agent-memory")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "AgentMemory")


@pytest.fixture(autouse=True)
def _no_metrics_carried_over() -> Iterator[None]:
    """Each test starts with no metric kept back by an earlier one.

    Outside a decorated handler nothing flushes the shared `Metrics`, so the values services add
    pile up in a test process; at 100 values of one metric Powertools flushes by itself, and with
    no namespace set at import that raised in whichever test happened to add the hundredth value.
    """
    yield
    discard_unpublished_metrics()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def bedrock() -> Any:
    """A bedrock-runtime client (fake credentials: see `_aws_env`), for `bedrock_stub` to answer."""
    return boto3.client("bedrock-runtime", region_name="us-east-1")


@pytest.fixture
def bedrock_stub(bedrock: Any) -> Iterator[Stubber]:
    """botocore's Stubber on `bedrock`: the test fails if an answer it queued was never asked for."""
    with Stubber(bedrock) as stub:
        yield stub
        stub.assert_no_pending_responses()
