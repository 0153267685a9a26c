"""The embedding-space part of the `MemoryStore` contract (`agent_memory.ports.spaces`), on every
store: a query reads one space only; a put replaces a record's vectors in every space; the
re-embedding's reads and writes (missing, put if unchanged, drop) keep to one tenant."""

from __future__ import annotations

import numpy as np
from tests.contract.test_store_contract import DAY, NOW, query, rec, vec

from agent_memory.ports import MemoryStore, NearestQuery, SpaceVector, StoredRecord

SPACE = "sp_tenantmodel"
OWN_DIM = 5  # a tenant's model need not have the deployment's size


def own(*values: float) -> np.ndarray:
    v = np.zeros(OWN_DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def test_a_query_reads_the_space_it_names_and_no_other(store: MemoryStore) -> None:
    # GIVEN a record with vectors in both spaces, and one in the deployment's only
    both, default_only = rec("mem_aaaaaaaaaaaaaaaa"), rec("mem_bbbbbbbbbbbbbbbb")
    store.put(
        [
            StoredRecord(both, vec(1.0), (SpaceVector(SPACE, own(0.0, 1.0)),)),
            StoredRecord(default_only, vec(1.0)),
        ]
    )
    # WHEN each space is searched by vector
    in_default = store.search(query(vector=vec(1.0)))
    in_own = store.search(query(vector=own(0.0, 1.0), space=SPACE))
    # THEN the deployment's space holds both, the tenant's space only the one embedded there
    assert {c.record.id for c in in_default} == {both.id, default_only.id}
    assert [(c.record.id, round(c.similarity or 0, 4)) for c in in_own] == [(both.id, 1.0)]
    nearest = store.nearest(NearestQuery("t1", "a1", both.grain, own(0.0, 1.0), NOW, space=SPACE))
    assert nearest is not None and nearest[0].id == both.id


def test_a_put_replaces_the_vectors_of_every_space(store: MemoryStore) -> None:
    # GIVEN a record embedded in a tenant's space
    record = rec("mem_cccccccccccccccc")
    store.put([StoredRecord(record, vec(1.0), (SpaceVector(SPACE, own(1.0)),))])
    # WHEN it is written again with the deployment's vector only
    store.put([StoredRecord(record.model_copy(update={"content": "new words"}), vec(1.0))])
    # THEN its old vector in the tenant's space is gone with its old content
    assert store.count_missing("t1", SPACE) == 1
    assert store.search(query(vector=own(1.0), space=SPACE, text=None)) == []


def test_missing_vectors_are_filled_only_for_unchanged_records_of_the_tenant(store: MemoryStore) -> None:
    # GIVEN two tenants' records in the deployment's space only
    mine = [rec(f"mem_{c * 16}", occurred=NOW - DAY) for c in "defg"]
    theirs = rec("mem_hhhhhhhhhhhhhhhh", tenant="t2")
    store.put([StoredRecord(r, vec(1.0)) for r in [*mine, theirs]])
    # WHEN the tenant's missing vectors are read and filled, one record having changed since
    missing = store.missing_in_space("t1", SPACE, 10)
    changed = mine[0].model_copy(update={"updated_at": mine[0].updated_at + DAY})
    store.put([StoredRecord(changed, vec(1.0))])
    stored = store.put_space_vectors("t1", SPACE, [(r, own(1.0)) for r in [*missing, theirs]])
    # THEN only its own unchanged records got a vector; the other tenant's was never touched
    assert sorted(r.id for r in missing) == sorted(r.id for r in mine)
    assert stored == 3
    assert store.count_missing("t1", SPACE) == 1 and store.count_missing("t2", SPACE) == 1
    # WHEN the tenant's space is dropped, and its deployment-space vectors too
    assert store.drop_space("t1", SPACE) == 3
    store.drop_space("t1", "")
    # THEN the tenant has no vector left in either, the other tenant keeps its own
    assert store.count_missing("t1", SPACE) == 4 and store.count_missing("t1", "") == 4
    assert store.count_missing("t2", "") == 0
    assert [c.record.id for c in store.search(query(tenant_id="t2", vector=vec(1.0)))] == [theirs.id]
