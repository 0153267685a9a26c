"""The work a search saves: rows parsed once (`sqlite_retrieval.parsed`), never stale; the text
index matched over the eligible rows' span only, with the scores of the whole index."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.payloads import memory_record

from agent_memory.adapters.sqlite import sqlite_filters, sqlite_retrieval
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.ports import AuditEvent, StoredRecord, StoreQuery
from agent_memory.recall.rules.fusion import scaled_to_best

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DIM = 8


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteMemoryStore]:
    sqlite_retrieval._parsed.cache_clear()
    s = SqliteMemoryStore(tmp_path / "memory.db", DIM, "test-model")
    yield s
    s.close()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows have been validated into records since the test began."""
    count = [0]
    parse = sqlite_retrieval.row_to_record

    def counted(row: Any) -> MemoryRecord:
        count[0] += 1
        return parse(row)

    monkeypatch.setattr(sqlite_retrieval, "row_to_record", counted)
    return count


BUDGET = "the budget review moved to Friday"


def stored(store: SqliteMemoryStore, n: int, content: str = BUDGET) -> MemoryRecord:
    rec = memory_record(f"m{n}", content, at=NOW - timedelta(hours=n + 1))
    store.put([StoredRecord(rec, np.eye(DIM, dtype=np.float32)[n % DIM])])
    return rec


def budget_query() -> StoreQuery:
    return StoreQuery(
        tenant_id="t1", agent_id="a1", now=NOW, vector=np.ones(DIM, dtype=np.float32), text="budget", limit=10
    )


def found(store: SqliteMemoryStore) -> dict[str, MemoryRecord]:
    return {c.record.id: c.record for c in store.search(budget_query())}


def test_a_row_searched_again_is_not_parsed_again(store: SqliteMemoryStore, parses: list[int]) -> None:
    # GIVEN three memories, found once
    for n in range(3):
        stored(store, n)
    first = found(store)
    assert parses[0] == 3

    # WHEN the same search runs again
    again = found(store)

    # THEN no row is validated a second time, and every record reads as it did
    assert parses[0] == 3
    assert again == first


def test_a_row_changed_since_is_read_as_it_is_now(store: SqliteMemoryStore, parses: list[int]) -> None:
    # GIVEN two memories found once
    older, newer = stored(store, 0), stored(store, 1)
    assert found(store)[older.id].superseded_by is None

    # WHEN one of them is marked superseded
    event = AuditEvent("t1", "a1", older.id, "superseded", "test", NOW)
    validity = RecordValidity(valid_to=NOW, superseded_by=newer.id)
    assert store.set_validity("t1", "a1", older.id, validity, event)

    # THEN the next search reads its new fields (its row is parsed again, the other's is not)
    assert found(store)[older.id].superseded_by == newer.id
    assert parses[0] == 3


def test_a_callers_change_to_a_record_does_not_reach_the_next_search(store: SqliteMemoryStore) -> None:
    # GIVEN a memory found by one caller, who changes the record it was handed
    rec = stored(store, 0)
    found(store)[rec.id].content = "changed by a caller"

    # WHEN another search finds it
    again = found(store)[rec.id]

    # THEN it reads as stored
    assert again.content == rec.content


def test_a_long_row_is_parsed_each_time(store: SqliteMemoryStore, parses: list[int]) -> None:
    # GIVEN a memory longer than a kept row may be
    stored(store, 0, "budget " * (sqlite_retrieval.PARSED_ROW_CHARS // 7 + 1))

    # WHEN it is found twice
    found(store)
    found(store)

    # THEN it was parsed both times (not kept)
    assert parses[0] == 2


def test_a_small_agents_lexical_hits_beside_a_large_one_score_as_over_the_whole_index(
    store: SqliteMemoryStore,
) -> None:
    # GIVEN a large agent's memories written first, then a small agent's, all sharing words
    for n in range(40):
        other = memory_record(f"o{n}", f"budget review {n} with the finance team", agent="big")
        store.put([StoredRecord(other, np.eye(DIM, dtype=np.float32)[n % DIM])])
    for n in range(5):
        stored(store, n, f"the budget review moved to day {n}" + " budget" * n)

    # WHEN the small agent is searched by vector and words
    hits = store.search(budget_query())

    # THEN its lexical scores are those of a match over the whole index, in the same order
    where, params = sqlite_filters.query_filter(budget_query())
    with store._db.transaction(write=False) as conn:
        whole = scaled_to_best(sqlite_retrieval._lexical_hits(conn, ["budget"], where, params, 10, 45))
        ids = dict(conn.execute("SELECT seq, id FROM records").fetchall())
    assert sorted((c.lexical, c.record.id) for c in hits if c.lexical is not None) == sorted(
        (score, ids[rowid]) for rowid, score in whole.items()
    )
    assert len(whole) == 5


def test_no_eligible_row_means_no_lexical_hits(store: SqliteMemoryStore) -> None:
    # GIVEN a memory of another agent that the words match
    store.put([StoredRecord(memory_record("o1", "budget", agent="big"), np.ones(DIM, dtype=np.float32))])

    # WHEN the lexical hits are read within a span of no rows
    where, params = sqlite_filters.query_filter(budget_query())
    with store._db.transaction(write=False) as conn:
        hits = sqlite_retrieval._lexical_hits(
            conn, ["budget"], where, params, 10, 1, sqlite_retrieval.EMPTY_SPAN
        )

    # THEN there are none
    assert hits == {}
