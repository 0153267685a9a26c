"""Forget over HTTP reaches the summaries: one memory, or every memory of an end user.

The runtime's job worker re-makes stale summaries in the background, as the summarize worker
does in AWS; the tests wait (bounded) for it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from tests.e2e.conftest import Api, assert_error, settled_stats, wait_until

from agent_memory.model.caller import READ_SCOPE, WRITE_SCOPE
from agent_memory.tenancy.rules.keys import NewKey

DAY = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
VAULT = "The vault code for the Lisbon office is 7391-kestrel."
MOVERS = "Rui booked the movers for the Lisbon office on Friday."
WINDOW = "Ines prefers the window seat on every flight."


def write(api: Api, key: str, agent: str, *items: dict[str, Any]) -> list[str]:
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": list(items)}, key=key)
    assert status == 202, body
    return [a["id"] for a in body["accepted"]]


def daily(api: Api, key: str, agent: str) -> list[dict[str, Any]]:
    status, body = api("GET", f"/v1/agents/{agent}/memories?grain=daily", key=key)
    assert status == 200, body
    return body["items"]  # type: ignore[no-any-return]


def summarize_day(api: Api, admin_key: str, key: str, agent: str) -> dict[str, Any]:
    status, body = api(
        "POST", "/v1/admin/summarize", {"grain": "daily", "period": DAY.date().isoformat()}, key=admin_key
    )
    assert status == 202, body
    (summary,) = wait_until(lambda: daily(api, key, agent), timeout_s=10)
    return summary


def audit(api: Api, key: str, agent: str, **params: Any) -> list[dict[str, Any]]:
    status, body = api("GET", f"/v1/agents/{agent}/audit?{urlencode(params)}", key=key)
    assert status == 200, body
    return body["items"]  # type: ignore[no-any-return]


def test_forgetting_a_memory_remakes_the_daily_summary_without_it(api: Api, new_key: Any) -> None:
    tenant, key_id, key = new_key()
    _, _, admin = new_key(tenant, admin=True)
    agent = "forget-cascade"
    vault, _ = write(
        api,
        key,
        agent,
        {"content": VAULT, "occurred_at": DAY.isoformat(), "importance": 0.9},
        {"content": MOVERS, "occurred_at": (DAY + timedelta(hours=1)).isoformat()},
    )
    settled_stats(api, key, agent)
    summary = summarize_day(api, admin, key, agent)
    assert "7391-kestrel" in summary["content"]

    # WHEN the memory is forgotten
    status, body = api("DELETE", f"/v1/agents/{agent}/memories/{vault}", key=key)

    # THEN the daily summary made from it is named, hidden at once, then re-made without it
    assert (status, body["stale_summaries"]) == (200, [summary["id"]])
    remade = wait_until(lambda: daily(api, key, agent), timeout_s=10)
    assert [s["id"] for s in remade] == [summary["id"]]
    assert "7391" not in remade[0]["content"] and "movers" in remade[0]["content"]
    status, found = api(
        "POST",
        f"/v1/agents/{agent}/memories/search",
        {"query": "vault code 7391-kestrel", "grain": "all"},
        key=key,
    )
    assert status == 200 and not [r for r in found["results"] if "7391" in r["content"]]

    # AND the audit trail shows the stale mark, the forget, the stale mark again (so that a re-make
    # that read the memory between the two is dropped) and the re-make, newest first
    def remade_trail() -> list[dict[str, Any]]:
        trail = audit(api, key, agent)
        return trail if trail and trail[0]["action"] == "remade" else []

    trail = wait_until(remade_trail)
    assert [(e["action"], e["record_id"]) for e in trail] == [
        ("remade", summary["id"]),
        ("stale", summary["id"]),
        ("forget", vault),
        ("stale", summary["id"]),
    ]
    forget_event = next(e for e in trail if e["action"] == "forget")
    assert forget_event["actor"] == key_id and forget_event["detail"]["stale_summaries"] == [summary["id"]]
    assert [e["action"] for e in audit(api, key, agent, record_id=vault)] == ["forget"]


def test_erasing_an_end_user_forgets_all_their_memories(api: Api, new_key: Any) -> None:
    # GIVEN
    tenant, _, key = new_key()
    _, _, admin = new_key(tenant, admin=True)
    agent = "erasure"
    ines = write(
        api,
        key,
        agent,
        {"content": VAULT, "occurred_at": DAY.isoformat(), "user_id": "u-ines"},
        {"content": WINDOW, "occurred_at": (DAY + timedelta(hours=2)).isoformat(), "user_id": "u-ines"},
    )
    (rui,) = write(api, key, agent, {"content": MOVERS, "occurred_at": DAY.isoformat(), "user_id": "u-rui"})
    settled_stats(api, key, agent)
    summary = summarize_day(api, admin, key, agent)

    # WHEN
    status, body = api("DELETE", f"/v1/agents/{agent}/memories?user_id=u-ines", key=key)

    # THEN
    assert status == 200, body
    assert body == {"user_id": "u-ines", "forgotten": 2, "stale_summaries": [summary["id"]]}
    for memory_id in ines:
        assert api("GET", f"/v1/agents/{agent}/memories/{memory_id}", key=key)[0] == 404
    assert api("GET", f"/v1/agents/{agent}/memories/{rui}", key=key)[0] == 200
    remade = wait_until(lambda: daily(api, key, agent), timeout_s=10)
    assert "movers" in remade[0]["content"] and "kestrel" not in remade[0]["content"]
    assert "window seat" not in remade[0]["content"]
    # a second erasure finds nothing left
    assert api("DELETE", f"/v1/agents/{agent}/memories?user_id=u-ines", key=key)[1]["forgotten"] == 0


def test_erasure_needs_a_user_id_and_the_forget_scope(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api("DELETE", "/v1/agents/a1/memories", key=key)
    # THEN
    assert status == 400
    assert_error(body, "validation_error")
    status, body = api("DELETE", "/v1/agents/a1/memories?user_id=" + "x" * 1000, key=key)
    assert status == 400
    assert api("DELETE", "/v1/agents/a1/memories?user_id=u-1", key=key)[1] == {
        "user_id": "u-1",
        "forgotten": 0,
        "stale_summaries": [],
    }


def test_a_key_without_the_forget_scope_cannot_forget_or_erase(api: Api, runtime: Any) -> None:
    # GIVEN
    _, key = runtime.keys.create(NewKey("t-scoped", "pro", scopes=frozenset({READ_SCOPE, WRITE_SCOPE})))
    # WHEN / THEN
    assert api("DELETE", "/v1/agents/a1/memories?user_id=u-1", key=key)[0] == 403
    assert api("DELETE", "/v1/agents/a1/memories/mem_" + "a" * 26, key=key)[0] == 403
    assert api("GET", "/v1/agents/a1/audit", key=key)[0] == 200
