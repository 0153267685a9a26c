"""The `MemoryStore` contract for the audit trail and stale summaries (what forget relies on)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.contract.test_store_contract import NOW, forget, put, query, rec, summary

from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditAction, AuditEvent, AuditQuery, MemoryStore

SECOND = timedelta(seconds=1)


def stale_event(record_id: str, at=NOW, tenant: str = "t1", agent: str = "a1") -> AuditEvent:
    return AuditEvent(tenant, agent, record_id, AuditAction.STALE, "test", at, {"because": "m1"})


def test_marking_a_summary_stale_hides_it_and_a_later_mark_moves_the_mark(store: MemoryStore) -> None:
    # GIVEN
    put(store, summary("s1", Grain.DAILY, "2026-11-20"))

    # WHEN / THEN
    assert store.mark_stale("t1", "a1", "s1", stale_event("s1"))
    first = store.get("t1", "a1", "s1")
    assert first is not None and first.deleted_at == NOW
    assert store.search(query(grains=(Grain.DAILY,))) == []
    assert store.records_in_span("t1", "a1", Grain.DAILY, NOW - timedelta(days=30), NOW, NOW) == []

    # marked again later (a second forget): the mark moves; an earlier mark does not move it back
    assert store.mark_stale("t1", "a1", "s1", stale_event("s1", NOW + SECOND))
    assert store.mark_stale("t1", "a1", "s1", stale_event("s1", NOW - SECOND))
    again = store.get("t1", "a1", "s1")
    assert again is not None and again.deleted_at == NOW + SECOND


def test_marking_stale_is_scoped_to_the_tenant_and_agent(store: MemoryStore) -> None:
    # GIVEN
    put(store, summary("s1", Grain.DAILY, "2026-11-20"))

    # WHEN / THEN
    assert not store.mark_stale("t2", "a1", "s1", stale_event("s1", tenant="t2"))
    assert not store.mark_stale("t1", "a2", "s1", stale_event("s1", agent="a2"))
    assert not store.mark_stale("t1", "a1", "nope", stale_event("nope"))
    still = store.get("t1", "a1", "s1")
    assert still is not None and still.deleted_at is None
    assert store.audit_events(AuditQuery("t2", "a1")).events == []
    assert store.audit_events(AuditQuery("t1", "a1")).events == []


def test_the_audit_trail_is_newest_first_per_agent_with_details_and_pages(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("m1"), rec("m2"), rec("m3"), rec("x1", agent="a2"))
    # WHEN / THEN
    for i, record_id in enumerate(("m1", "m2", "m3")):
        assert forget(store, record_id, at=NOW + i * SECOND)
    assert forget(store, "x1", agent="a2")
    store.append_audit(
        [
            AuditEvent(
                "t1", "a1", "s1", AuditAction.REMADE, "summarizer", NOW + 9 * SECOND, {"dropped": ["m1"]}
            )
        ]
    )

    everything = store.audit_events(AuditQuery("t1", "a1", limit=10))
    assert [(e.record_id, e.action) for e in everything.events] == [
        ("s1", "remade"),
        ("m3", "forget"),
        ("m2", "forget"),
        ("m1", "forget"),
    ]
    assert everything.events[0].detail == {"dropped": ["m1"]}
    assert everything.events[0].at == NOW + 9 * SECOND
    assert everything.next_cursor is None

    first = store.audit_events(AuditQuery("t1", "a1", limit=3))
    assert len(first.events) == 3 and first.next_cursor is not None
    rest = store.audit_events(AuditQuery("t1", "a1", limit=3, cursor=first.next_cursor))
    assert [e.record_id for e in rest.events] == ["m1"] and rest.next_cursor is None

    only = store.audit_events(AuditQuery("t1", "a1", record_id="m2"))
    assert [(e.record_id, e.actor) for e in only.events] == [("m2", "test")]
    assert [e.record_id for e in store.audit_events(AuditQuery("t1", "a2")).events] == ["x1"]


def test_events_of_one_instant_are_listed_in_the_order_they_were_appended(store: MemoryStore) -> None:
    # GIVEN a stale mark, the forget that made it and a second stale mark, all of one instant
    # (record ids chosen so that neither their order nor the actions' gives the appended one)
    put(store, rec("m1"), summary("s9", Grain.DAILY, "2026-11-20"))
    store.append_audit([stale_event("s9")])
    store.append_audit([AuditEvent("t1", "a1", "m1", AuditAction.FORGET, "test", NOW, {})])
    store.append_audit(
        [
            AuditEvent("t1", "a1", "a0", AuditAction.STALE, "test", NOW, {}),
            AuditEvent("t1", "a1", "z0", AuditAction.REMADE, "test", NOW, {}),
        ]
    )

    # WHEN the trail is read, whole and a page at a time
    whole = store.audit_events(AuditQuery("t1", "a1", limit=10)).events
    first = store.audit_events(AuditQuery("t1", "a1", limit=2))
    rest = store.audit_events(AuditQuery("t1", "a1", limit=2, cursor=first.next_cursor))

    # THEN newest appended first, across pages; an event appended again keeps its place
    appended = [("s9", "stale"), ("m1", "forget"), ("a0", "stale"), ("z0", "remade")]
    assert [(e.record_id, e.action) for e in whole] == appended[::-1]
    assert [(e.record_id, e.action) for e in first.events + rest.events] == appended[::-1]
    store.append_audit([stale_event("s9")])
    assert [(e.record_id, e.action) for e in store.audit_events(AuditQuery("t1", "a1")).events] == appended[
        ::-1
    ]


def test_an_audit_event_written_twice_is_kept_once(store: MemoryStore) -> None:
    # GIVEN
    event = AuditEvent("t1", "a1", "s1", AuditAction.EMPTIED, "summarizer", NOW, {"dropped": []})
    store.append_audit([event])
    # WHEN
    store.append_audit([event])
    # THEN
    assert len(store.audit_events(AuditQuery("t1", "a1")).events) == 1


def test_an_audit_cursor_of_another_agent_or_a_forged_one_is_refused(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("m1"), rec("m2"))
    forget(store, "m1")
    forget(store, "m2", at=NOW + SECOND)
    # WHEN
    cursor = store.audit_events(AuditQuery("t1", "a1", limit=1)).next_cursor
    # THEN
    assert cursor is not None
    for tenant, agent in (("t2", "a1"), ("t1", "a2")):
        with pytest.raises(ValidationFailedError):
            store.audit_events(AuditQuery(tenant, agent, limit=1, cursor=cursor))
    with pytest.raises(ValidationFailedError):
        store.audit_events(AuditQuery("t1", "a1", limit=1, cursor=cursor[:-3] + "abc"))
