"""The store contract for supersession: a record's validity fields read back whole wherever it is
read, change only through `set_validity` on a live record of that tenant and agent, and leave
the record's content, vector and place in search as they were."""

from __future__ import annotations

from datetime import timedelta

from tests.contract.test_store_contract import NOW, rec, vec

from agent_memory.model.records import RecordValidity
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    AuditQuery,
    ListQuery,
    MemoryStore,
    StoredRecord,
    StoreQuery,
)

LATER = NOW + timedelta(days=90)


def _event(record_id: str, tenant: str = "t1", action: str = AuditAction.SUPERSEDED) -> AuditEvent:
    return AuditEvent(
        tenant_id=tenant,
        agent_id="a1",
        record_id=record_id,
        action=action,
        actor="writer",
        at=NOW,
        detail={"by": "new", "attribute": "residence"},
    )


def test_validity_written_with_a_record_reads_back_everywhere(store: MemoryStore) -> None:
    # GIVEN a record put with its supersession fields
    record = rec("new", valid_from=LATER, supersedes=["old"])
    store.put([StoredRecord(record, vec(1))])
    # WHEN it is read by get, list and search
    got = store.get("t1", "a1", "new")
    [listed] = store.list(ListQuery("t1", "a1", LATER + timedelta(days=1))).records
    [hit] = store.search(StoreQuery("t1", "a1", LATER + timedelta(days=1), vector=vec(1)))
    # THEN every read gives the same fields back
    for found in (got, listed, hit.record):
        assert found is not None
        assert found.validity == RecordValidity(valid_from=LATER, supersedes=("old",))


def test_set_validity_marks_a_live_record_and_changes_nothing_else(store: MemoryStore) -> None:
    # GIVEN a record searchable by its vector
    store.put([StoredRecord(rec("old"), vec(1, 0.1))])
    before = store.get("t1", "a1", "old")
    validity = RecordValidity(valid_from=NOW, valid_to=LATER, superseded_by="new")
    # WHEN it is marked superseded
    changed = store.set_validity("t1", "a1", "old", validity, _event("old"))
    # THEN the fields changed and updated_at moved, its content and vector did not, and the event is there
    after = store.get("t1", "a1", "old")
    assert changed and before is not None and after is not None
    assert after.validity == validity and after.superseded_at(LATER) and not after.superseded_at(NOW)
    assert after.content == before.content and after.updated_at == max(before.updated_at, NOW)
    [hit] = store.search(StoreQuery("t1", "a1", NOW, vector=vec(1, 0.1)))
    assert hit.record.superseded_by == "new" and hit.similarity is not None and hit.similarity > 0.99
    events = store.audit_events(AuditQuery("t1", "a1", record_id="old")).events
    assert [e.action for e in events] == [AuditAction.SUPERSEDED]


def test_clearing_validity_restores_the_record_exactly(store: MemoryStore) -> None:
    # GIVEN a record marked superseded
    store.put([StoredRecord(rec("old"), vec(1))])
    before = store.get("t1", "a1", "old")
    store.set_validity("t1", "a1", "old", RecordValidity(valid_to=LATER, superseded_by="new"), _event("old"))
    # WHEN the supersession is undone
    store.set_validity("t1", "a1", "old", RecordValidity(), _event("old"))
    # THEN the record is as it was before (but for when it was last changed)
    after = store.get("t1", "a1", "old")
    assert before is not None and after is not None
    assert after.model_copy(update={"updated_at": before.updated_at}) == before


def test_set_validity_never_touches_a_forgotten_or_another_tenants_record(store: MemoryStore) -> None:
    # GIVEN one forgotten record and one of another tenant
    store.put([StoredRecord(rec("gone"), vec(1)), StoredRecord(rec("theirs", tenant="t2"), vec(1))])
    store.soft_delete("t1", "a1", "gone", _event("gone", action=AuditAction.FORGET))
    marked = RecordValidity(valid_to=LATER, superseded_by="new")
    # WHEN either is marked from tenant t1
    forgotten = store.set_validity("t1", "a1", "gone", marked, _event("gone"))
    crossed = store.set_validity("t1", "a1", "theirs", marked, _event("theirs"))
    # THEN neither changed and no superseded event was written for them
    assert not forgotten and not crossed
    theirs = store.get("t2", "a1", "theirs")
    assert theirs is not None and theirs.superseded_by is None
    actions = [e.action for e in store.audit_events(AuditQuery("t1", "a1", record_id="gone")).events]
    assert AuditAction.SUPERSEDED not in actions
