"""The environments tests run the code in, shared by the integration and e2e suites: the
embedded runtime's settings, the AWS write path's settings under moto, and the `agent-memory`
CLI run in-process as a shell would run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.opensearch_cluster import store_behind_api

from agent_memory import container
from agent_memory.local import cli
from agent_memory.tenancy.rules.keys import hash_api_key


def set_env(mp: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """Set every variable of ``env`` (undone when ``mp`` is)."""
    for name, value in env.items():
        mp.setenv(name, value)


def configure_local_env(mp: pytest.MonkeyPatch, data_dir: Path) -> None:
    """The embedded runtime with the zero-dependency hashing embedder, in ``data_dir``; calls out
    may go to loopback, where the tests' webhook receivers and model servers listen."""
    set_env(
        mp,
        {
            "AGENT_MEMORY_DATA_DIR": str(data_dir),
            "AGENT_MEMORY_OUTBOUND_ALLOW_LOOPBACK": "true",
            "AGENT_MEMORY_EMBEDDER": "hashing",
            # the judges have tests of their own (tests/unit/adapters/test_*_judge.py)
            "AGENT_MEMORY_UPDATE_JUDGE": "none",
            "AGENT_MEMORY_ANSWER_JUDGE": "none",
            "AGENT_MEMORY_STORE": "sqlite",
            "AGENT_MEMORY_QUEUE": "local",
            "AGENT_MEMORY_PENDING": "local",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
        },
    )
    container.reset()
    store_behind_api(mp)  # the OpenSearch store instead, with AGENT_MEMORY_TEST_STORE=opensearch


def sqs_write_path_env(data_dir: Path, queue_url: str, dlq_url: str) -> dict[str, str]:
    """The functions' settings for the deployed write path under moto: SQS FIFO write queue and
    dead-letter queue (see `tests.tables.create_write_queues`), pending marks in the DynamoDB
    table ``pending``, the embedded store in ``data_dir``, the hashing embedder."""
    return {
        "AGENT_MEMORY_DATA_DIR": str(data_dir),
        "AGENT_MEMORY_EMBEDDER": "hashing",
        "AGENT_MEMORY_UPDATE_JUDGE": "none",
        "AGENT_MEMORY_ANSWER_JUDGE": "none",
        "AGENT_MEMORY_STORE": "sqlite",
        "AGENT_MEMORY_QUEUE": "sqs",
        "AGENT_MEMORY_WRITE_QUEUE_URL": queue_url,
        "AGENT_MEMORY_DEAD_LETTER_QUEUE_URL": dlq_url,
        "AGENT_MEMORY_PENDING": "dynamodb",
        "AGENT_MEMORY_PENDING_TABLE": "pending",
        "AWS_REGION": "us-east-1",
        # what the CLI would set for itself, set here so that the test restores it
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``agent-memory ARGV...`` in this process: its exit code, stdout and stderr."""
    capsys.readouterr()  # drop anything printed before
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def create_key(capsys: pytest.CaptureFixture[str], tenant: str, plan: str, *extra: str) -> dict[str, Any]:
    """``agent-memory keys create --tenant T --plan P EXTRA...``, which must succeed: what it printed."""
    code, out, err = run_cli(capsys, "keys", "create", "--tenant", tenant, "--plan", plan, *extra)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def listed_keys(capsys: pytest.CaptureFixture[str], made: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``agent-memory keys list``, by key id, having checked that it succeeds, lists exactly the
    keys ``made`` (as `create_key` printed them), and prints none of them nor its hash."""
    code, out, err = run_cli(capsys, "keys", "list")
    assert code == 0, err
    listed = {row["key_id"]: row for row in map(json.loads, out.splitlines())}
    assert set(listed) == {k["key_id"] for k in made}
    for created in made:
        assert created["api_key"] not in out + err
        assert hash_api_key(created["api_key"]) not in out + err
    return listed


def printed_json(out: str) -> Any:
    """The JSON document `agent-memory invoke` prints (indented, so it starts on a line of its own
    ``{``). Handlers may log JSON lines to stdout before it; those are single lines and are skipped."""
    lines = out.splitlines()
    start = max(i for i, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))
