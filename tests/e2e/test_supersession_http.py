"""Facts that change over months, through the local HTTP API as a client sees them: the current
value first, the old one kept and marked, ``as_of`` right for each period, the history complete,
an admin's restore, and nothing of another tenant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.e2e.conftest import Api, settled_stats, unique, wait_until

START = (datetime.now(UTC) - timedelta(days=300)).replace(hour=9, minute=0, second=0, microsecond=0)
FACTS = [  # (days after START, text): where the user lives and their favourite drink, changing
    (0, "I live in Berlin, in a flat near Tempelhof."),
    (10, "My favourite drink is green tea."),
    (95, "I moved to Lisbon last week, my new flat is in Alfama."),
    (130, "Actually I switched from green tea to black coffee."),
    (220, "We relocated to Porto in the autumn."),
]


def _write(api: Api, key: str, agent: str, days: int, text: str) -> str:
    when = (START + timedelta(days=days)).isoformat()
    status, body = api(
        "POST", f"/v1/agents/{agent}/memories", {"items": [{"content": text, "occurred_at": when}]}, key=key
    )
    assert status == 202, body
    return str(body["accepted"][0]["id"])


def _search(api: Api, key: str, agent: str, query: str, **extra: Any) -> list[dict[str, Any]]:
    status, body = api(
        "POST", f"/v1/agents/{agent}/memories/search", {"query": query, "grain": "working", **extra}, key=key
    )
    assert status == 200, body
    return body["results"]  # type: ignore[no-any-return]


def _stored(api: Api, key: str, agent: str, ids: list[str]) -> bool:
    return all(api("GET", f"/v1/agents/{agent}/memories/{i}", key=key)[0] == 200 for i in ids)


def test_changing_facts_answer_with_what_holds_and_what_held(api: Api, new_key: Any) -> None:
    # GIVEN a user's home and favourite drink changing over ten months, written in order
    tenant, _, key = new_key()
    agent = unique("mover")
    ids = [_write(api, key, agent, days, text) for days, text in FACTS]
    wait_until(lambda: _stored(api, key, agent, ids), timeout_s=10)
    settled_stats(api, key, agent)  # search, unlike a read by id, is consistent once none is pending
    berlin, tea, lisbon, coffee, porto = ids
    # WHEN asking where the user lives now, and as of each period
    now = _search(api, key, agent, "where do I live?")
    as_of = {
        label: _search(api, key, agent, "where do I live?", as_of=(START + timedelta(days=d)).isoformat())
        for label, d in (("spring", 40), ("summer", 150), ("winter", 250))
    }
    drink = _search(api, key, agent, "what is my favourite drink?")
    # THEN of the homes, the current one comes first; the older ones follow, marked with who
    # replaced them and when (the drink memories rank among them by the test model's meaning)
    now = [r for r in now if r["id"] in (berlin, lisbon, porto)]
    assert [r["id"] for r in now] == [porto, lisbon, berlin]
    assert now[0]["current"] and not now[1]["current"] and not now[2]["current"]
    assert now[1]["superseded_by"] == porto and now[2]["superseded_by"] == lisbon
    assert now[2]["valid_to"].startswith((START + timedelta(days=95)).date().isoformat())
    # and as_of gives the home of that period, current then
    homes = {k: [r for r in v if r["id"] in (berlin, lisbon, porto)] for k, v in as_of.items()}
    assert [r["id"] for r in homes["spring"]] == [berlin] and homes["spring"][0]["current"]
    assert [r["id"] for r in homes["summer"]] == [lisbon, berlin] and homes["summer"][0]["current"]
    assert [r["id"] for r in homes["winter"]] == [porto, lisbon, berlin]
    assert [r["id"] for r in drink if r["id"] in (tea, coffee)] == [coffee, tea]
    # and another tenant finds none of it, by search or by id
    _, _, other = new_key()
    assert _search(api, other, agent, "where do I live?") == []
    assert api("GET", f"/v1/agents/{agent}/memories/{berlin}/history", key=other)[0] == 404
    assert tenant


def test_history_and_an_admin_restore(api: Api, new_key: Any) -> None:
    # GIVEN Berlin superseded by Lisbon
    tenant, _, key = new_key()
    _, _, admin = new_key(tenant, admin=True)
    agent = unique("restore")
    berlin = _write(api, key, agent, 0, FACTS[0][1])
    lisbon = _write(api, key, agent, 95, FACTS[2][1])
    wait_until(lambda: _stored(api, key, agent, [berlin, lisbon]), timeout_s=10)
    settled_stats(api, key, agent)  # search, unlike a read by id, is consistent once none is pending
    # WHEN the history is read, a plain key tries a restore, then an admin restores version 1
    status, history = api("GET", f"/v1/agents/{agent}/memories/{berlin}/history", key=key)
    denied, _ = api("POST", f"/v1/agents/{agent}/memories/{berlin}/history/1/restore", key=key)
    status2, restored = api("POST", f"/v1/agents/{agent}/memories/{berlin}/history/1/restore", key=admin)
    # THEN the history named both versions and who made them, only an admin restored, and Berlin holds again
    assert status == 200 and [(v["version"], v["change"], v["actor"]) for v in history["versions"]] == [
        (1, "written", "writer"),
        (2, "superseded", "writer"),
    ]
    assert history["versions"][1]["superseded_by"] == lisbon and not history["versions"][1]["current"]
    assert denied == 403
    assert status2 == 200 and restored["version"]["change"] == "restored" and restored["version"]["current"]
    _, memory = api("GET", f"/v1/agents/{agent}/memories/{berlin}", key=key)
    assert memory["current"] and memory["superseded_by"] is None
    _, trail = api("GET", f"/v1/agents/{agent}/audit?record_id={berlin}", key=key)
    assert [e["action"] for e in trail["items"]][:1] == ["restored"]
