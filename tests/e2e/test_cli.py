"""The `agent-memory` CLI against a running local server: keys and local invokes.

The CLI runs in-process (`cli.main([...])`) with the same environment a shell would give it, and
the server runs on loopback from the same data directory, as `make dev` plus a second terminal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error, settled_stats
from tests.environment import configure_local_env, create_key, listed_keys, printed_json, run_cli
from tests.payloads import EVENTS

from agent_memory.local.server import LocalRuntime
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.keys import NewKey

#: Ids of the records in events/sqs_write_batch.json (tenant "acme").
BATCH_RECORDS = {
    ("support-bot", "mem_skoaqt6qjcwegul6x5iywf3nzg"): "Alice moved the launch to March 3.",
    ("support-bot", "mem_h5iurq4tztflqcfxjdrgtdqhap"): "Bob owns the release checklist.",
    ("ops-bot", "mem_ows4kcuq6izvojq5ndrft3iemf"): "The staging database was restarted at 09:00.",
}


@pytest.fixture
def cli_env(local_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`local_env`, plus restore points for what `cli.main` writes into ``os.environ``."""
    monkeypatch.delenv("POWERTOOLS_LOG_LEVEL", raising=False)
    return local_env


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start a runtime on a data directory, as `agent-memory serve --data-dir DIR` would."""
    started: list[LocalRuntime] = []

    def start(data_dir: Path) -> tuple[LocalRuntime, Api]:
        configure_local_env(monkeypatch, data_dir)
        runtime = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
        runtime.start()
        started.append(runtime)
        return runtime, Api(runtime.url)

    yield start
    for runtime in started:
        runtime.stop()


def test_keys_create_prints_a_key_once_that_a_running_server_accepts_at_once(
    cli_env: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    serve: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a server running on a data directory other than the environment's default
    data_dir = tmp_path / "served"
    runtime, api = serve(data_dir)
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", str(cli_env))
    get_settings.cache_clear()  # a fresh CLI process would read the environment anew

    # WHEN a key is created with the CLI, pointed at the server's data directory
    code, out, err = run_cli(
        capsys, "keys", "create", "--tenant", "t", "--plan", "pro", "--data-dir", str(data_dir)
    )

    # THEN it prints one JSON line with the key, and warns on stderr that it is shown only once
    assert code == 0
    [line] = out.splitlines()
    created = json.loads(line)
    assert set(created) == {"key_id", "tenant_id", "plan", "api_key"}
    assert (created["tenant_id"], created["plan"]) == ("t", "pro")
    key = created["api_key"]
    assert key.startswith("amk_") and out.count(key) == 1
    assert "not kept" in err and key not in err
    # AND the key went to that data directory, not to the environment's
    assert {k.key_id for k in runtime.keys.list()} == {created["key_id"]}
    assert not (cli_env / "auth.db").exists()
    # AND the running server accepts it at once, for tenant t
    status, body = api("POST", "/v1/agents/bot/memories", {"items": [{"content": "CLI key works."}]}, key=key)
    assert status == 202, body
    [accepted] = body["accepted"]
    assert settled_stats(api, key, "bot")["records"]["working"] == 1
    status, memory = api("GET", f"/v1/agents/bot/memories/{accepted['id']}", key=key)
    assert (status, memory["content"]) == (200, "CLI key works.")


def test_keys_list_never_prints_a_key_and_revoke_locks_it_out(
    cli_env: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    # GIVEN a running server and two keys made with the CLI on its data directory
    _, api = serve(cli_env)
    keys = [
        create_key(capsys, "t1", "starter"),
        create_key(capsys, "t2", "starter", "--admin", "--agent", "a1"),
    ]

    # WHEN the keys are listed
    listed = listed_keys(capsys, keys)

    # THEN each key shows its id, tenant, plan and scopes (and, as `listed_keys` checked, never the
    # key or its hash)
    for created in keys:
        assert listed[created["key_id"]]["tenant_id"] == created["tenant_id"]
        assert listed[created["key_id"]]["revoked_at"] is None
    assert "admin" in listed[keys[1]["key_id"]]["scopes"].split()
    assert "admin" not in listed[keys[0]["key_id"]]["scopes"].split()
    assert listed[keys[1]["key_id"]]["agents"] == "a1"

    # AND the flags took effect on the server: admin scope, and the agent restriction
    t1_key, t2_key = (k["api_key"] for k in keys)
    assert api("POST", "/v1/admin/patterns", {"agent_id": "a1"}, key=t1_key)[0] == 403
    assert api("POST", "/v1/admin/patterns", {"agent_id": "a1"}, key=t2_key)[0] not in {401, 403}
    # (an admin key bound to a1 runs admin work for a1 only: a tenant-wide run is refused)
    assert api("POST", "/v1/admin/retention", {}, key=t2_key)[0] == 403
    assert api("GET", "/v1/agents/a2/stats", key=t2_key)[0] == 403
    assert api("GET", "/v1/agents/a1/stats", key=t2_key)[0] == 200

    # WHEN the first key is revoked
    code, out, _ = run_cli(capsys, "keys", "revoke", keys[0]["key_id"])

    # THEN the server refuses it at once, the other still works, and the list shows when
    assert (code, out.strip()) == (0, f"revoked {keys[0]['key_id']}")
    status, body = api("GET", "/v1/agents/a1/stats", key=t1_key)
    assert status == 401
    assert_error(body, "unauthorized")
    assert api("GET", "/v1/agents/a1/stats", key=t2_key)[0] == 200
    listed = listed_keys(capsys, keys)
    assert listed[keys[0]["key_id"]]["revoked_at"] is not None
    assert listed[keys[1]["key_id"]]["revoked_at"] is None
    # AND revoking it again, or an unknown id, fails
    code, _, err = run_cli(capsys, "keys", "revoke", keys[0]["key_id"])
    assert code == 1 and keys[0]["key_id"] in err
    assert run_cli(capsys, "keys", "revoke", "key_000000000000")[0] == 1


def test_invoke_api_then_writer_on_sample_events_stores_the_records(
    cli_env: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    # WHEN the api handler is invoked on the sample write event
    code, out, _ = run_cli(capsys, "invoke", "api", str(EVENTS / "api_write.json"))

    # THEN it answers 202 with the accepted id
    assert code == 0
    result = printed_json(out)
    assert result["statusCode"] == 202
    [accepted] = json.loads(result["body"])["accepted"]
    assert accepted["status"] == "queued"

    # WHEN the writer is invoked on the sample SQS batch
    code, out, _ = run_cli(capsys, "invoke", "writer", str(EVENTS / "sqs_write_batch.json"))

    # THEN it reports no failed record
    assert code == 0
    assert printed_json(out) == {"batchItemFailures": []}

    # AND a server on the same data directory serves the batch's records to tenant acme
    runtime, api = serve(cli_env)
    _, key = runtime.keys.create(NewKey("acme", "pro"))
    for (agent, memory_id), content in BATCH_RECORDS.items():
        status, memory = api("GET", f"/v1/agents/{agent}/memories/{memory_id}", key=key)
        assert (status, memory["content"]) == (200, content), memory
    # AND it drains the write `invoke api` queued: the same sentence as the batch's first record,
    # but end user u-7's in conversation c-42, so it is stored as its own record, never merged
    stats = settled_stats(api, key, "support-bot")
    assert stats["records"]["working"] == 3
    status, own = api("GET", f"/v1/agents/support-bot/memories/{accepted['id']}", key=key)
    assert (status, own["id"], own["user_id"], own["merged_from"]) == (200, accepted["id"], "u-7", [])


def test_invoke_unknown_function_fails(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN
    code, _, err = run_cli(capsys, "invoke", "summarizer", str(EVENTS / "api_write.json"))
    # THEN
    assert code == 2 and "unknown function" in err
