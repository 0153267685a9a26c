"""Exports through the local HTTP API: an end user's export holds every live memory of theirs, in
every agent, with its versions and audit trail, the summaries that hold only their words, and
nothing of anyone else's; an agent's export holds the agent's memory; another tenant finds none
of it; requests that name no subject, or two, are refused.

The runtime's job worker runs the export in the background, as the summarize worker does in
AWS; the tests poll its progress (bounded) and fetch the file from the download route.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error, settled_stats, unique, wait_until
from tests.environment import run_cli

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

DAY = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
U1 = {
    "a1": ["Ines moved to Porto in March.", "Ines prefers the window seat on every flight."],
    "a2": ["Ines asked for the invoice of order 7731 to be resent."],
}
U2 = {"a1": ["Rui keeps the spare office key under the blue plant."]}
NOBODY = {"a1": ["The office closes at six on Fridays."]}


def write(api: Api, key: str, agent: str, user: str | None, contents: list[str], **extra: Any) -> list[str]:
    items = [
        {"content": c, "occurred_at": (DAY + timedelta(minutes=i)).isoformat(), **extra}
        | ({"user_id": user} if user else {})
        for i, c in enumerate(contents)
    ]
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": items}, key=key)
    assert status == 202, body
    return [a["id"] for a in body["accepted"]]


def finished(api: Api, key: str, export_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        status, body = api("GET", f"/v1/admin/exports/{export_id}", key=key)
        assert status == 200, body
        return body if body["status"] in ("done", "failed") else None

    body = wait_until(done, timeout_s=20, interval_s=0.05)
    assert body["status"] == "done", body
    return body


def download(api: Api, key: str, export_id: str) -> list[dict[str, Any]]:
    response = api.request("GET", f"/v1/admin/exports/{export_id}/download", key=key)
    assert response.status == 200, response.data[:300]
    assert response.headers["Content-Type"] == "application/x-ndjson"
    assert "X-Agent-Memory-File" not in response.headers  # the local server's, never passed on
    return [json.loads(line) for line in response.data.decode("utf-8").splitlines()]


@pytest.fixture(scope="module")
def world(api: Api, runtime: LocalRuntime) -> dict[str, Any]:
    """Tenant T: end user u1 in agents a1 and a2, u2 and nobody in a1; one memory of u1
    forgotten; the day summarized (a1's summary folds u1 and u2, a2's only u1)."""
    tenant = unique("t")
    _, key = runtime.keys.create(NewKey(tenant, "pro", admin=True))
    ids: dict[str, list[str]] = {"u1": [], "u2": [], "nobody": []}
    for agent, contents in U1.items():
        ids["u1"] += write(api, key, agent, "u1", contents)
    ids["u2"] += write(api, key, "a1", "u2", U2["a1"])
    ids["nobody"] += write(api, key, "a1", None, NOBODY["a1"])
    [forgotten] = write(api, key, "a2", "u1", ["Ines's old passport number is X-0042."], kind="fact")
    for agent in ("a1", "a2"):
        settled_stats(api, key, agent)
    assert api("DELETE", f"/v1/agents/a2/memories/{forgotten}", key=key)[0] == 200
    status, body = api(
        "POST", "/v1/admin/summarize", {"grain": "daily", "period": DAY.date().isoformat()}, key=key
    )
    assert status == 202, body

    def summaries() -> dict[str, list[dict[str, Any]]] | None:
        found = {a: api("GET", f"/v1/agents/{a}/memories?grain=daily", key=key)[1]["items"] for a in U1}
        return found if all(found.values()) else None

    return {
        "tenant": tenant,
        "key": key,
        "ids": ids,
        "forgotten": forgotten,
        "daily": wait_until(summaries, 10),
    }


def test_an_end_users_export_holds_all_their_memories_and_nothing_of_anyone_else(
    api: Api, world: dict[str, Any]
) -> None:
    # GIVEN u1's memories in two agents, beside u2's and nobody's
    key = world["key"]

    # WHEN the admin exports u1 and fetches the file
    status, started = api("POST", "/v1/admin/exports", {"user_id": "u1"}, key=key)
    assert status == 202, started
    assert started["status"] == "queued" and started["user_id"] == "u1"
    done = finished(api, key, started["id"])
    lines = download(api, key, started["id"])

    # THEN every live memory of u1 is there, with its metadata, versions and audit trail
    memories = [line for line in lines if line["type"] == "memory"]
    assert sorted(m["memory"]["id"] for m in memories) == sorted(world["ids"]["u1"])
    assert {m["memory"]["user_id"] for m in memories} == {"u1"}
    assert {m["memory"]["content"] for m in memories} == {c for cs in U1.values() for c in cs}
    assert all(m["versions"][0]["version"] == 1 and m["versions"][0]["content"] for m in memories)
    # AND nothing of u2, of nobody, or of u1's forgotten memory, anywhere in the file
    text = "\n".join(json.dumps(line) for line in lines)
    for other in [*U2["a1"], *NOBODY["a1"], "X-0042", *world["ids"]["u2"], *world["ids"]["nobody"]]:
        assert other not in text
    assert world["forgotten"] not in text
    # AND a2's summary (only u1's words) is there whole; a1's (u1's and u2's) is named, not shown
    by_agent = {a: s[0]["id"] for a, s in world["daily"].items()}
    summaries = [line for line in lines if line["type"] == "summary"]
    shown = {s["memory"]["id"] for s in summaries if not s.get("withheld")}
    withheld = {s["summary"]["id"] for s in summaries if s.get("withheld")}
    assert (shown, withheld) == ({by_agent["a2"]}, {by_agent["a1"]})
    # AND the file is whole: a header, a trailer with the counts, and the progress said so
    assert lines[0]["type"] == "export" and lines[0]["user_id"] == "u1"
    assert lines[-1] == {
        "type": "end", "memories": 3, "summaries": 1, "withheld_summaries": 1,
        "audit_events": lines[-1]["audit_events"],
    }  # fmt: skip
    assert done["progress"]["memories"] == 3 and done["progress"]["percent"] == 100.0
    assert done["download_url"] == f"/v1/admin/exports/{started['id']}/download"


def test_an_agents_export_holds_every_live_memory_of_the_agent(api: Api, world: dict[str, Any]) -> None:
    # GIVEN
    key = world["key"]
    # WHEN the admin exports agent a1
    status, started = api("POST", "/v1/admin/exports", {"agent_id": "a1"}, key=key)
    assert status == 202, started
    finished(api, key, started["id"])
    lines = download(api, key, started["id"])

    # THEN its memories of every end user and its summary are there, a2's are not
    memories = {line["memory"]["id"] for line in lines if line["type"] == "memory"}
    a1_ids = [*world["ids"]["u1"][:2], *world["ids"]["u2"], *world["ids"]["nobody"]]
    assert memories == set(a1_ids)
    assert [line["memory"]["id"] for line in lines if line["type"] == "summary"] == [
        world["daily"]["a1"][0]["id"]
    ]
    assert U1["a2"][0] not in json.dumps(lines)


def test_a_time_window_keeps_what_speaks_about_it(api: Api, world: dict[str, Any]) -> None:
    # GIVEN a window that ends before u1's second memory of a1 (a minute after the first)
    key = world["key"]
    window = {"user_id": "u1", "since": DAY.isoformat(), "until": (DAY + timedelta(seconds=30)).isoformat()}

    # WHEN
    status, started = api("POST", "/v1/admin/exports", window, key=key)
    assert status == 202, started
    finished(api, key, started["id"])

    # THEN only the memories of that half minute (one in each agent) are in it
    lines = download(api, key, started["id"])
    contents = {line["memory"]["content"] for line in lines if line["type"] == "memory"}
    assert contents == {U1["a1"][0], U1["a2"][0]}


def test_another_tenants_admin_finds_none_of_it(api: Api, world: dict[str, Any], new_key: Any) -> None:
    # GIVEN tenant T's export, and tenant B's admin key
    status, started = api("POST", "/v1/admin/exports", {"user_id": "u1"}, key=world["key"])
    assert status == 202
    finished(api, world["key"], started["id"])
    _, _, other = new_key(admin=True)

    # WHEN B reads, downloads and lists with T's export id
    seen = api.request("GET", f"/v1/admin/exports/{started['id']}", key=other)
    fetched = api.request("GET", f"/v1/admin/exports/{started['id']}/download", key=other)
    listed = api("GET", "/v1/admin/exports", key=other)

    # THEN both are the 404 of an id that exists nowhere, and B's list is empty
    assert (seen.status, fetched.status) == (404, 404)
    assert_error(seen.json(), "not_found")
    nowhere = api.request("GET", "/v1/admin/exports/exp_" + "a" * 26, key=other)
    assert seen.data == nowhere.data
    assert listed == (200, {"items": []})
    # AND B's own export of "u1" holds nothing of T's u1
    status, own = api("POST", "/v1/admin/exports", {"user_id": "u1"}, key=other)
    assert status == 202
    finished(api, other, own["id"])
    assert [line["type"] for line in download(api, other, own["id"])] == ["export", "end"]


def test_the_tenants_exports_are_listed_newest_first(api: Api, new_key: Any) -> None:
    # GIVEN two exports of a fresh tenant
    _, _, key = new_key(admin=True)
    first = api("POST", "/v1/admin/exports", {"agent_id": "a1"}, key=key)[1]["id"]
    second = api("POST", "/v1/admin/exports", {"user_id": "u9"}, key=key)[1]["id"]
    # WHEN
    status, body = api("GET", "/v1/admin/exports", key=key)
    # THEN
    assert status == 200
    assert [item["id"] for item in body["items"]] == [second, first]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"user_id": "u1", "agent_id": "a1"},
        {"user_id": "u1", "since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
        {"user_id": "../etc"},
        {"agent_id": "a1", "format": "csv"},
    ],
)
def test_a_request_naming_no_subject_or_two_is_refused(api: Api, new_key: Any, body: dict[str, Any]) -> None:
    # GIVEN
    _, _, key = new_key(admin=True)
    # WHEN
    response = api.request("POST", "/v1/admin/exports", body, key=key)
    # THEN
    assert response.status == 400, response.data
    assert_error(response.json(), "validation_error")


def test_a_key_bound_to_agents_exports_only_its_agents(api: Api, new_key: Any) -> None:
    # GIVEN an admin key bound to agent a1
    tenant, _, _ = new_key(admin=True)
    _, _, bound = new_key(tenant, admin=True, agents=frozenset({"a1"}))

    # WHEN it exports a1, a2, and an end user (every agent)
    own = api.request("POST", "/v1/admin/exports", {"agent_id": "a1"}, key=bound)
    other = api.request("POST", "/v1/admin/exports", {"agent_id": "a2"}, key=bound)
    user = api.request("POST", "/v1/admin/exports", {"user_id": "u1"}, key=bound)

    # THEN only its own agent's export starts
    assert (own.status, other.status, user.status) == (202, 403, 403)


def test_a_download_before_the_export_is_done_is_a_409(api: Api, new_key: Any, runtime: Any) -> None:
    # GIVEN an export whose job has not run (the job worker is paused meanwhile)
    _, _, key = new_key(admin=True)
    runtime.job_worker.stop()
    try:
        status, started = api("POST", "/v1/admin/exports", {"agent_id": unique("a")}, key=key)
        assert status == 202
        # WHEN
        response = api.request("GET", f"/v1/admin/exports/{started['id']}/download", key=key)
    finally:
        runtime.job_worker = type(runtime.job_worker)(
            runtime.job_worker._queue,
            handler=runtime.job_worker._handler,
            name=runtime.job_worker._name,
            queue_arn=runtime.job_worker._queue_arn,
            retry_base_delay_s=runtime.job_worker._retry_base_delay_s,
        )
        runtime.job_worker.start()
    # THEN
    assert response.status == 409, response.data
    assert_error(response.json(), "conflict")
    finished(api, key, started["id"])


def test_the_cli_exports_an_end_user_to_a_file_with_progress(
    api: Api, world: dict[str, Any], runtime: LocalRuntime, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN u1's memories on a running server
    target = tmp_path / "u1.jsonl"

    # WHEN `agent-memory export` is run against it
    code, out, err = run_cli(
        capsys,
        "export",
        "--user-id",
        "u1",
        "-o",
        str(target),
        "--url",
        runtime.url,
        "--api-key",
        world["key"],
    )

    # THEN the file holds u1's memories, stderr showed the progress, stdout says what was written
    assert code == 0, err
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert sorted(m["memory"]["id"] for m in lines if m["type"] == "memory") == sorted(world["ids"]["u1"])
    assert "100.0%" in err and "3/3 memories" in err and "downloading" in err
    summary = json.loads(out)
    assert summary["memories"] == 3 and summary["bytes"] == target.stat().st_size


def test_the_cli_refuses_without_a_subject_or_a_key(
    runtime: LocalRuntime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no key in the environment
    monkeypatch.delenv("AGENT_MEMORY_API_KEY", raising=False)
    # WHEN / THEN
    assert run_cli(capsys, "export", "--user-id", "u1", "-o", "x.jsonl", "--url", runtime.url)[0] == 2
    with pytest.raises(SystemExit):
        run_cli(capsys, "export", "-o", "x.jsonl")
