"""The store contract for experiences: they read back whole, a confidence floor filters in the
store (inside the vector search), and feedback changes a live experience only."""

from __future__ import annotations

from datetime import timedelta

from tests.contract.test_store_contract import NOW, rec, vec

from agent_memory.experience.rules.confidence import Experience, FeedbackOutcome
from agent_memory.model.records import MemoryKind
from agent_memory.ports import AuditAction, AuditEvent, AuditQuery, MemoryStore, StoredRecord, StoreQuery


def _experience(record_id: str, confidence: float, **fields: object) -> StoredRecord:
    record = rec(
        record_id,
        kind=MemoryKind.FAILURE,
        experience=Experience(context="review", outcome="bug", run_id="r1", prior=confidence),
        **fields,
    )
    return StoredRecord(record, vec(1, 0.1))


def _event(record_id: str, tenant: str = "t1", at_offset: int = 0) -> AuditEvent:
    return AuditEvent(
        tenant_id=tenant,
        agent_id="a1",
        record_id=record_id,
        action=AuditAction.FEEDBACK,
        actor="k",
        at=NOW + timedelta(seconds=at_offset),
        detail={"outcome": "confirmed"},
    )


def test_an_experience_reads_back_whole(store: MemoryStore) -> None:
    # GIVEN an experience with feedback counted
    experience = Experience(context="c", outcome="o", run_id="r7", prior=0.3).after(FeedbackOutcome.CONFIRMED)
    store.put([StoredRecord(rec("m1", kind=MemoryKind.SUCCESS, experience=experience), vec(1))])
    # WHEN / THEN get, list and search give it back as written
    assert store.get("t1", "a1", "m1").experience == experience  # type: ignore[union-attr]
    [hit] = store.search(StoreQuery("t1", "a1", NOW, vector=vec(1)))
    assert hit.record.experience == experience


def test_a_confidence_floor_keeps_experiences_at_or_above_it(store: MemoryStore) -> None:
    # GIVEN experiences at 0.2, 0.6 and 0.9 and a plain note nearest the query
    store.put([_experience("low", 0.2), _experience("mid", 0.6), _experience("high", 0.9)])
    store.put([StoredRecord(rec("note"), vec(1))])
    # WHEN searching by vector, by words and browsing with a floor of 0.6
    by_vector = store.search(StoreQuery("t1", "a1", NOW, vector=vec(1), min_confidence=0.6))
    by_words = store.search(StoreQuery("t1", "a1", NOW, text="memory", min_confidence=0.6))
    browsing = store.search(StoreQuery("t1", "a1", NOW, min_confidence=0.6))
    # THEN only the two sure enough, never the note (it has no confidence)
    for found in (by_vector, by_words, browsing):
        assert {c.record.id for c in found} == {"mid", "high"}


def test_feedback_changes_a_live_experience_and_nothing_else(store: MemoryStore) -> None:
    # GIVEN an experience, searchable by its vector
    store.put([_experience("m1", 0.5)])
    before = store.get("t1", "a1", "m1")
    assert before is not None and before.experience is not None
    after = before.experience.after(FeedbackOutcome.CONFIRMED)
    # WHEN feedback is recorded
    changed = store.set_experience("t1", "a1", "m1", after, _event("m1"))
    # THEN its experience and updated_at changed, its content and vector did not, and the event is there
    now = store.get("t1", "a1", "m1")
    assert changed and now is not None and now.experience == after
    assert now.content == before.content and now.updated_at >= before.updated_at
    [hit] = store.search(StoreQuery("t1", "a1", NOW, vector=vec(1, 0.1), min_confidence=after.confidence))
    assert hit.record.id == "m1" and hit.similarity is not None and hit.similarity > 0.99
    events = store.audit_events(AuditQuery("t1", "a1", record_id="m1")).events
    assert [e.action for e in events] == [AuditAction.FEEDBACK]


def test_feedback_never_touches_a_forgotten_or_another_tenants_experience(store: MemoryStore) -> None:
    # GIVEN one forgotten experience and one of another tenant
    store.put([_experience("gone", 0.5), _experience("theirs", 0.5, tenant="t2")])
    store.soft_delete("t1", "a1", "gone", _event("gone", at_offset=-60))
    sure = Experience(prior=0.99)
    # WHEN feedback is recorded on both through tenant t1
    forgotten = store.set_experience("t1", "a1", "gone", sure, _event("gone", at_offset=1))
    crossing = store.set_experience("t1", "a1", "theirs", sure, _event("theirs", at_offset=1))
    # THEN neither changed, and the forgotten one stays forgotten
    assert (forgotten, crossing) == (False, False)
    gone = store.get("t1", "a1", "gone")
    assert gone is not None and gone.deleted_at is not None
    # (a forget clears what a memory said, its experience included, or leaves it as it was)
    assert gone.experience is None or gone.experience.prior == 0.5
    assert store.get("t2", "a1", "theirs").experience.prior == 0.5  # type: ignore[union-attr]
