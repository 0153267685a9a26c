"""The `MemoryStore` contract for exports (`ports.export_store.RecordExport`): an export's records a page
at a time, their count, and the audit trail of a page of records, never anyone else's."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from tests.contract.test_store_contract import DAY, NOW, forget, put, rec, summary

from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditAction, AuditEvent, MemoryStore
from agent_memory.ports.export_store import ExportQuery

MINUTE = timedelta(minutes=1)


def walk(store: MemoryStore, query: ExportQuery) -> list[tuple[str, str]]:
    """Every (agent, id) of the export, page after page."""
    seen: list[tuple[str, str]] = []
    cursor = None
    while True:
        page = store.export_records(replace(query, cursor=cursor))
        assert len(page.records) <= query.limit
        seen += [(r.agent_id, r.id) for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            return seen


def test_an_agents_export_pages_through_its_live_records_oldest_first(store: MemoryStore) -> None:
    # GIVEN five memories and a summary of agent a1, one forgotten, one expired, and others' records
    records = [rec(f"m{i}", occurred=NOW - 5 * DAY + i * MINUTE) for i in range(5)]
    put(store, *records, summary("s1", Grain.DAILY, "2026-11-10"))
    put(
        store, rec("gone"), rec("old", expires_at=NOW - MINUTE), rec("x1", agent="a2"), rec("y1", tenant="t2")
    )
    assert forget(store, "gone")

    # WHEN the agent's export is read two records a page
    seen = walk(store, ExportQuery("t1", NOW, agent_id="a1", limit=2))

    # THEN every live record of a1 is there once, oldest first, summaries included
    assert seen == [("a1", "s1"), *(("a1", r.id) for r in records)]
    assert store.count_records(ExportQuery("t1", NOW, agent_id="a1")) == 6


def test_an_end_users_export_spans_the_tenants_agents_and_holds_only_theirs(store: MemoryStore) -> None:
    # GIVEN u1's memories in two agents, u2's and nobody's beside them, and u1 in another tenant
    put(
        store,
        rec("a", agent="b2", user_id="u1", occurred=NOW - 3 * DAY),
        rec("b", agent="b1", user_id="u1", occurred=NOW - 2 * DAY),
        rec("c", agent="b1", user_id="u1", occurred=NOW - 4 * DAY),
        rec("d", agent="b1", user_id="u2"),
        rec("e", agent="b1"),
        rec("f", agent="b1", tenant="t2", user_id="u1"),
        summary("s", Grain.DAILY, "2026-11-10", agent="b1", user_id="u1"),
    )

    # WHEN u1's working memories are read, one a page
    seen = walk(store, ExportQuery("t1", NOW, user_id="u1", grains=(Grain.WORKING,), limit=1))

    # THEN they come by agent, then time; none of u2's, nobody's, another tenant's or a summary
    assert seen == [("b1", "c"), ("b1", "b"), ("b2", "a")]
    assert store.count_records(ExportQuery("t1", NOW, user_id="u1", grains=(Grain.WORKING,))) == 3
    assert store.count_records(ExportQuery("t1", NOW, user_id="u1")) == 4


def test_a_window_keeps_the_records_whose_span_meets_it(store: MemoryStore) -> None:
    # GIVEN memories before, at the edges of, and after a window, and a summary of a day in it
    start, end = NOW - 3 * DAY, NOW - 2 * DAY
    put(
        store,
        rec("before", occurred=start - MINUTE),
        rec("first", occurred=start),
        rec("last", occurred=end),
        rec("after", occurred=end + MINUTE),
        summary("s", Grain.DAILY, (start + MINUTE).date().isoformat()),
    )
    # WHEN
    seen = walk(store, ExportQuery("t1", NOW, agent_id="a1", start=start, end=end))
    # THEN
    assert sorted(i for _, i in seen) == ["first", "last", "s"]


def test_an_export_cursor_walks_only_the_query_it_was_issued_for(store: MemoryStore) -> None:
    # GIVEN a cursor of t1's export of u1
    put(store, *(rec(f"m{i}", user_id="u1", occurred=NOW - DAY + i * MINUTE) for i in range(3)))
    page = store.export_records(ExportQuery("t1", NOW, user_id="u1", limit=1))
    assert page.next_cursor is not None

    # WHEN / THEN another tenant's, another user's or another agent's export refuses it
    for other in (
        ExportQuery("t2", NOW, user_id="u1", cursor=page.next_cursor),
        ExportQuery("t1", NOW, user_id="u2", cursor=page.next_cursor),
        ExportQuery("t1", NOW, agent_id="a1", cursor=page.next_cursor),
    ):
        with pytest.raises(ValidationFailedError):
            store.export_records(other)


def test_the_audit_of_records_is_theirs_alone_oldest_first(store: MemoryStore) -> None:
    # GIVEN events of m1 and m2, of another record, of the same id in another agent and tenant
    def event(record: str, action: str, minutes: int, tenant: str = "t1", agent: str = "a1") -> AuditEvent:
        return AuditEvent(tenant, agent, record, action, "test", NOW + minutes * MINUTE, {"n": minutes})

    store.append_audit(
        [
            event("m1", AuditAction.FEEDBACK, 3),
            event("m2", AuditAction.MERGED, 1),
            event("m1", AuditAction.SUPERSEDED, 2),
            event("m3", AuditAction.FEEDBACK, 0),
            event("m1", AuditAction.FEEDBACK, 4, agent="a2"),
            event("m1", AuditAction.FEEDBACK, 5, tenant="t2"),
        ]
    )
    # WHEN
    events = store.audit_of_records("t1", "a1", ["m1", "m2", "m1"])
    # THEN
    assert [(e.record_id, e.action, e.detail) for e in events] == [
        ("m2", "merged", {"n": 1}),
        ("m1", "superseded", {"n": 2}),
        ("m1", "feedback", {"n": 3}),
    ]
    assert store.audit_of_records("t1", "a1", []) == []
