"""The conditional put of the `MemoryStore` contract (`RecordStore.put_if`), on every adapter.

A writer decides from what it read and puts only if the record is still what it read: absent,
or with the same ``deleted_at`` and ``updated_at``. A forget, a stale mark or a delete between
the read and the put refuses the put, writes nothing and appends none of its events; an
unchanged record takes the put and its events.
"""

from __future__ import annotations

from datetime import timedelta

from tests.contract.test_store_contract import NOW, forget, put, rec, summary, vec

from agent_memory.model.grains import Grain
from agent_memory.ports import AuditEvent, AuditQuery, MemoryStore, StoredRecord


def _event(record_id: str, action: str = "merged") -> AuditEvent:
    return AuditEvent("t1", "a1", record_id, action, "writer", NOW + timedelta(seconds=1), {"why": "test"})


def _trail(store: MemoryStore, record_id: str) -> list[str]:
    return [e.action for e in store.audit_events(AuditQuery("t1", "a1", record_id=record_id)).events]


def test_a_put_of_an_absent_record_is_refused_once_it_exists(store: MemoryStore) -> None:
    # WHEN the same id is put twice, each time expecting it absent
    first = store.put_if(StoredRecord(rec("mem_x", content="first"), vec(1.0)), None)
    second = store.put_if(StoredRecord(rec("mem_x", content="second"), vec(1.0)), None, [_event("mem_x")])

    # THEN the first took it, the second wrote nothing and appended nothing
    assert (first, second) == (True, False)
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.content == "first"
    assert _trail(store, "mem_x") == []


def test_a_put_over_what_was_read_takes_it_with_its_events(store: MemoryStore) -> None:
    # GIVEN a stored record, read
    put(store, rec("mem_x", content="first"))
    read = store.get("t1", "a1", "mem_x")

    # WHEN it is put over what was read
    changed = rec("mem_x", content="second", updated_at=NOW + timedelta(seconds=1))
    done = store.put_if(StoredRecord(changed, vec(0.0, 1.0)), read, [_event("mem_x")])

    # THEN it is stored, with the event, and the next put over the old read is refused
    assert done is True
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.content == "second"
    assert _trail(store, "mem_x") == ["merged"]
    assert store.put_if(StoredRecord(rec("mem_x", content="third"), vec(1.0)), read) is False


def test_a_forget_between_the_read_and_the_put_refuses_the_put(store: MemoryStore) -> None:
    # GIVEN a stored record, read, then forgotten
    put(store, rec("mem_x", content="a secret"))
    read = store.get("t1", "a1", "mem_x")
    assert forget(store, "mem_x")

    # WHEN the writer puts what it decided from the read
    done = store.put_if(
        StoredRecord(rec("mem_x", content="a secret again"), vec(1.0)), read, [_event("mem_x")]
    )

    # THEN nothing is written: the record stays forgotten, its words gone
    assert done is False
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.deleted_at is not None and "secret" not in got.content
    assert _trail(store, "mem_x") == ["forget"]


def test_a_stale_mark_between_the_read_and_the_put_refuses_a_summary_version(store: MemoryStore) -> None:
    # GIVEN a stored summary, read, then marked stale
    put(store, summary("sum_d", Grain.DAILY, "2026-11-20", content="Alice said a secret"))
    read = store.get("t1", "a1", "sum_d")
    mark = AuditEvent("t1", "a1", "sum_d", "stale", "test", NOW)
    assert store.mark_stale("t1", "a1", "sum_d", mark)

    # WHEN the version made from the read is put
    version = summary("sum_d", Grain.DAILY, "2026-11-20", content="Alice said a secret, again")
    done = store.put_if(StoredRecord(version, vec(1.0)), read)

    # THEN it is refused: the summary stays hidden
    assert done is False
    got = store.get("t1", "a1", "sum_d")
    assert got is not None and got.deleted_at == NOW and "secret" not in got.content


def test_a_put_over_a_record_deleted_since_it_was_read_is_refused(store: MemoryStore) -> None:
    # GIVEN a stored record, read, then deleted for good
    put(store, rec("mem_x"))
    read = store.get("t1", "a1", "mem_x")
    assert store.delete_records("t1", "a1", ["mem_x"]) == 1

    # WHEN / THEN it is not made again from the old read
    assert store.put_if(StoredRecord(rec("mem_x"), vec(1.0)), read) is False
    assert store.get("t1", "a1", "mem_x") is None


def test_a_put_over_a_tombstone_as_read_brings_the_record_back(store: MemoryStore) -> None:
    # GIVEN a forgotten record, read after its forget (a write accepted again later)
    put(store, rec("mem_x", content="said once"))
    assert forget(store, "mem_x")
    read = store.get("t1", "a1", "mem_x")

    # WHEN it is put over the tombstone it read
    again = rec("mem_x", content="said again", created_at=NOW + timedelta(hours=1))
    done = store.put_if(StoredRecord(again, vec(1.0)), read)

    # THEN it is live again, as written now
    assert done is True
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.deleted_at is None and got.content == "said again"


def test_an_alias_does_not_count_as_the_record(store: MemoryStore) -> None:
    # GIVEN an alias of another record under the id
    put(store, rec("mem_into"))
    store.add_alias("t1", "a1", "mem_x", "mem_into")

    # WHEN / THEN a put expecting the id absent (no record under it) is taken
    assert store.put_if(StoredRecord(rec("mem_x", content="its own"), vec(1.0)), None) is True
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.id == "mem_x" and got.content == "its own"
