"""The SQLite store's embedding spaces beyond the contract: dropping one tenant's space moves only
its own agents' generations, so no other tenant's cached vectors are thrown away."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from tests.payloads import memory_record

from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.ports import SpaceVector, StoredRecord, StoreQuery

NOW = datetime(2026, 11, 25, tzinfo=UTC)


def test_dropping_a_tenants_space_keeps_every_other_tenants_cached_vectors(tmp_path: Path) -> None:
    # GIVEN two tenants' memories, the other tenant's vectors cached by a search
    store = SqliteMemoryStore(tmp_path / "memory.db", 8, "m")
    v = np.eye(8, dtype=np.float32)[0]
    mine = memory_record("mem_aaaaaaaaaaaaaaaa", "mine", tenant="t1")
    theirs = memory_record("mem_bbbbbbbbbbbbbbbb", "theirs", tenant="t2")
    store.put([StoredRecord(mine, v, (SpaceVector("sp_own", v),)), StoredRecord(theirs, v)])
    store.search(StoreQuery("t2", "a1", NOW, vector=v))
    assert store.search(StoreQuery("t1", "a1", NOW, vector=v))[0].similarity == 1.0  # cached too
    cached = store._vectors._cache[("t2", "a1")]
    # WHEN the first tenant's own space and its deployment-space vectors are dropped
    store.drop_space("t1", "sp_own")
    store.drop_space("t1", "")
    # THEN the other tenant's matrix is the very one cached, and it still finds its memory
    assert [c.record.id for c in store.search(StoreQuery("t2", "a1", NOW, vector=v))] == [theirs.id]
    assert store._vectors._cache[("t2", "a1")] is cached
    # AND the first tenant's cached matrix took the drop in: nothing found by vector any more
    assert store.search(StoreQuery("t1", "a1", NOW, vector=v))[0].similarity == 0.0
