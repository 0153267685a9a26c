"""Shared fixtures. Unit tests cannot reach the network; integration tests may use loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts
from tests.fakes import FixedClock

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"


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


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()
