"""Integration fixtures: the real wiring (`container`) on the embedded adapters in a temp dir, and
the handlers called as Lambda would call them (sample events: `tests.payloads.load_event`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.environment import configure_local_env

from agent_memory import container
from agent_memory.adapters.local_jobs import JOBS_QUEUE_ARN
from agent_memory.handlers import api, summarize_worker
from agent_memory.local.lambda_context import LocalContext
from agent_memory.local.worker import QueueWorker


@pytest.fixture
def local_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Settings for the embedded runtime with the zero-dependency hashing embedder."""
    configure_local_env(monkeypatch, tmp_path / "data")
    yield tmp_path / "data"
    container.reset()


@pytest.fixture
def lambda_context() -> LocalContext:
    return LocalContext()


def call_api(event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The api handler on ``event``, as API Gateway calls it: the status code and the JSON body."""
    result = api.handler(event, LocalContext())
    return result["statusCode"], json.loads(result["body"])


def drain_writes() -> None:
    """Work the local write queue until it is empty (every accepted write stored)."""
    writes = QueueWorker(container.write_queue(), poll_s=0)  # type: ignore[arg-type]
    while writes.drain_once():
        pass


def drain_queues() -> None:
    """Work both local queues until both are empty, writes first: the summarize jobs, and the
    writes of the summaries they make."""
    jobs = QueueWorker(
        container.job_queue().queue,  # type: ignore[attr-defined]
        poll_s=0,
        handler=summarize_worker.handler,
        name="summarize-worker",
        queue_arn=JOBS_QUEUE_ARN,
    )
    writes = QueueWorker(container.write_queue(), poll_s=0)  # type: ignore[arg-type]
    while writes.drain_once() or jobs.drain_once():
        pass


#: What `cli.main` sets for itself; deleted through monkeypatch so that the test restores them.
_CLI_ENV = (
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
    "POWERTOOLS_LOG_LEVEL",
)


@pytest.fixture
def cli_env(local_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in _CLI_ENV:
        monkeypatch.delenv(name, raising=False)
    return local_env
