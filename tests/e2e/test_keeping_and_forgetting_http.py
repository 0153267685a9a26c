"""Remember faithfully, forget exactly, through the HTTP API of the local server: merges that
never cross end users or swallow distinct events, retention that deletes only what a summary
holds (late writes and history imports included), and a 202 that always stores.

Each test is a scenario a user tried by hand; they run against the real server, its FIFO queue,
writer, job worker and retention, on the real clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.e2e.conftest import Api, settled_stats, wait_until

NOW = datetime.now(UTC)
# Long sentences where the particulars are a few words: near-identical to any embedder.
PHONE = (
    "My phone number is {number} and I live at {street} Baker Street in Berlin, on the second floor "
    "on the left, right next to the little bakery that opens early every morning of the week."
)
INVOICE = (
    "Paid invoice {number} of $500 to Acme Corp for the yearly cloud hosting, support and maintenance "
    "contract renewal, as agreed with the finance team and the operations lead last spring."
)
VAULT = (
    "The vault code is {number}, as set by the facilities team for the server room in the basement "
    "of the Lisbon office, to be shared only with the on-call engineers of the week."
)


def write(api: Api, key: str, agent: str, *items: dict[str, Any], **headers: str) -> list[str]:
    status, body = api(
        "POST", f"/v1/agents/{agent}/memories", {"items": list(items)}, key=key, headers=headers
    )
    assert status == 202, body
    return [a["id"] for a in body["accepted"]]


def get(api: Api, key: str, agent: str, record_id: str) -> tuple[int, dict[str, Any]]:
    return api("GET", f"/v1/agents/{agent}/memories/{record_id}", key=key)  # type: ignore[no-any-return]


def contents(api: Api, key: str, agent: str, query: str, **fields: Any) -> list[str]:
    body = {"query": query, "grain": "all", "max_results": 50, **fields}
    status, found = api("POST", f"/v1/agents/{agent}/memories/search", body, key=key)
    assert status == 200, found
    return [r["content"] for r in found["results"]]


def retention(api: Api, admin: str) -> dict[str, Any]:
    status, answer = api("POST", "/v1/admin/retention", {}, key=admin)
    assert (status, answer["status"]) == (202, "done"), answer
    return answer["report"]  # type: ignore[no-any-return]


def test_the_same_sentence_of_two_end_users_is_two_memories_and_erasure_takes_only_one(
    api: Api, new_key: Any
) -> None:
    # GIVEN
    _, _, key = new_key()
    agent = "phones"
    u1_text = PHONE.format(number="555-1234", street=12)
    u2_text = PHONE.format(number="555-9876", street=14)
    [u1] = write(api, key, agent, {"content": u1_text, "user_id": "u1"})
    [u2] = write(api, key, agent, {"content": u2_text, "user_id": "u2"})
    # WHEN
    settled_stats(api, key, agent)

    # THEN
    # each user's words are their own record
    assert (get(api, key, agent, u1)[1]["content"], get(api, key, agent, u1)[1]["user_id"]) == (u1_text, "u1")
    assert (get(api, key, agent, u2)[1]["content"], get(api, key, agent, u2)[1]["user_id"]) == (u2_text, "u2")
    assert contents(api, key, agent, "phone number", user_id="u1") == [u1_text]

    # erasing u2 forgets u2's record and nothing of u1's
    status, body = api("DELETE", f"/v1/agents/{agent}/memories?user_id=u2", key=key)
    assert (status, body["forgotten"]) == (200, 1)
    assert get(api, key, agent, u2)[0] == 404
    assert contents(api, key, agent, "phone number Baker Street") == [u1_text]


def test_distinct_events_in_the_same_words_stay_distinct_on_their_own_days(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    agent = "invoices"
    first_day = (NOW - timedelta(days=12)).replace(hour=10, minute=0, second=0, microsecond=0)
    second_day = first_day + timedelta(days=10)
    ids = write(
        api,
        key,
        agent,
        {"content": INVOICE.format(number=1001), "occurred_at": first_day.isoformat()},
        {"content": INVOICE.format(number=1002), "occurred_at": second_day.isoformat()},
        *(
            {"content": VAULT.format(number=code), "occurred_at": first_day.isoformat()}
            for code in range(4410, 4416)
        ),
    )
    # WHEN
    stats = settled_stats(api, key, agent)
    # THEN
    assert stats["records"]["working"] == 8

    # both invoices are there, each on its own day of the timeline
    found = contents(api, key, agent, "paid invoice Acme")
    assert {INVOICE.format(number=1001), INVOICE.format(number=1002)} <= set(found)
    since, until = first_day.date().isoformat(), second_day.date().isoformat()
    status, timeline = api("GET", f"/v1/agents/{agent}/timeline?since={since}&until={until}", key=key)
    assert status == 200, timeline
    working = next(lane for lane in timeline["lanes"] if lane["grain"] == "working")
    days = {p["time_key"]: p["records"] for p in working["periods"]}
    assert days == {since: 7, until: 1}
    # and every vault code is its own memory
    assert len({get(api, key, agent, i)[1]["id"] for i in ids}) == 8


def test_a_late_write_into_a_summarized_day_is_kept_until_its_summary_holds_it(
    api: Api, new_key: Any
) -> None:
    tenant, _, key = new_key(plan="free")
    _, _, admin = new_key(tenant, plan="free", admin=True)
    agent = "late"
    day = (NOW - timedelta(days=5)).replace(hour=9, minute=0, second=0, microsecond=0)
    write(
        api,
        key,
        agent,
        {"content": "Viewed the flat on Elm Road with the agent.", "occurred_at": day.isoformat()},
    )
    settled_stats(api, key, agent)
    status, body = api(
        "POST", "/v1/admin/summarize", {"grain": "daily", "period": day.date().isoformat()}, key=admin
    )
    assert status == 202, body
    wait_until(lambda: api("GET", f"/v1/agents/{agent}/periods/daily/{day.date()}", key=key)[1]["summary"])

    # WHEN a note about that day arrives after its summary was made, and retention runs
    late_text = "Late note: Hannah signed the lease for the flat on Elm Road."
    [late] = write(
        api, key, agent, {"content": late_text, "occurred_at": (day + timedelta(hours=3)).isoformat()}
    )
    settled_stats(api, key, agent)
    retention(api, admin)

    # THEN the late note is still there (no summary listed it), and its day is summarized again
    assert get(api, key, agent, late)[0] == 200

    def summary_holds_it() -> str | None:
        summary = api("GET", f"/v1/agents/{agent}/periods/daily/{day.date()}", key=key)[1]["summary"]
        return summary["content"] if summary and "Hannah" in summary["content"] else None

    wait_until(summary_holds_it, timeout_s=15)
    # AND only now may retention delete it: what it said is in the summary
    retention(api, admin)
    assert "Hannah signed the lease" in contents(api, key, agent, "Hannah lease Elm Road")[0]


def test_an_imported_history_is_summarized_before_retention_deletes_it(api: Api, new_key: Any) -> None:
    # GIVEN
    tenant, _, key = new_key(plan="free")
    _, _, admin = new_key(tenant, plan="free", admin=True)
    agent = "history"
    old = (NOW - timedelta(days=45)).replace(hour=15, minute=0, second=0, microsecond=0)
    text = "Signed the supplier contract with Nordwind Logistics for 3 years."
    [record] = write(api, key, agent, {"content": text, "occurred_at": old.isoformat()})
    settled_stats(api, key, agent)

    report = retention(api, admin)
    # WHEN / THEN
    assert get(api, key, agent, record)[0] == 200  # kept: nothing held it yet
    assert report["summaries_queued"] >= 1

    def summarized() -> bool:
        return any(
            "Nordwind" in c for c in contents(api, key, agent, "Nordwind supplier contract", grain="daily")
        )

    wait_until(summarized, timeout_s=15)
    retention(api, admin)
    assert any("Nordwind" in c for c in contents(api, key, agent, "Nordwind supplier contract"))


def test_a_write_forgotten_and_written_again_at_once_is_stored(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    agent = "again"
    item = {"content": "The alarm code is 2580.", "occurred_at": (NOW - timedelta(hours=1)).isoformat()}
    [record] = write(api, key, agent, item, **{"Idempotency-Key": "first"})
    # WHEN
    settled_stats(api, key, agent)
    # THEN
    assert api("DELETE", f"/v1/agents/{agent}/memories/{record}", key=key)[0] == 200

    assert write(api, key, agent, item, **{"Idempotency-Key": "second"}) == [record]
    settled_stats(api, key, agent)
    status, body = get(api, key, agent, record)
    assert (status, body.get("content")) == (200, "The alarm code is 2580.")
