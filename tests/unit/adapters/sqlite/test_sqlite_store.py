"""The embedded SQLite store: the MemoryStore contract, tenant isolation and lexical safety."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.sqlite import sqlite_filters, sqlite_retention, sqlite_retrieval, sqlite_vectors
from agent_memory.adapters.sqlite.sqlite_filters import fts_match, query_terms
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.model.grains import Grain, period_bounds
from agent_memory.model.ids import content_hash, memory_id, summary_id
from agent_memory.model.records import Link, MemoryKind, MemoryRecord, Source
from agent_memory.ports import (
    AuditEvent,
    ListQuery,
    NearestQuery,
    PeriodScan,
    StoredRecord,
    StoreQuery,
    Vector,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DIM = 16
MODEL = "test-model"


def unit(seed: int) -> Vector:
    """A deterministic random unit vector."""
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def near(base: Vector, amount: float, seed: int) -> Vector:
    """A unit vector at a controlled distance from ``base`` (bigger amount: further away)."""
    v = base + amount * unit(seed)
    return (v / np.linalg.norm(v)).astype(np.float32)


def record(content: str = "a memory", **fields: Any) -> MemoryRecord:
    tenant = fields.pop("tenant_id", "t1")
    agent = fields.pop("agent_id", "a1")
    occurred = fields.pop("occurred_at", NOW - timedelta(hours=1))
    rid = fields.pop("id", memory_id(tenant, agent, content, occurred.isoformat()))
    return MemoryRecord(
        id=rid,
        tenant_id=tenant,
        agent_id=agent,
        content=content,
        content_hash=content_hash(content),
        created_at=fields.pop("created_at", occurred),
        updated_at=fields.pop("updated_at", occurred),
        occurred_at=occurred,
        **fields,
    )


def summary(grain: Grain, key: str, content: str = "a summary", **fields: Any) -> MemoryRecord:
    start, end = period_bounds(grain, key)
    return record(
        content,
        id=summary_id(fields.get("tenant_id", "t1"), fields.get("agent_id", "a1"), grain.value, key),
        grain=grain,
        time_key=key,
        period_start=start,
        period_end=end,
        occurred_at=end - timedelta(microseconds=1),
        kind=MemoryKind.SUMMARY,
        **fields,
    )


def put(
    store: SqliteMemoryStore, rec: MemoryRecord, vector: Vector | None = None, seed: int = 0
) -> MemoryRecord:
    store.put([StoredRecord(rec, unit(seed) if vector is None else vector)])
    return rec


def query(**fields: Any) -> StoreQuery:
    return StoreQuery(
        tenant_id=fields.pop("tenant_id", "t1"), agent_id=fields.pop("agent_id", "a1"), now=NOW, **fields
    )


def ids(candidates: list[Any]) -> list[str]:
    return [c.record.id for c in candidates]


def forget_event(rec: MemoryRecord, at: datetime = NOW) -> AuditEvent:
    return AuditEvent(rec.tenant_id, rec.agent_id, rec.id, action="forget", actor="test", at=at)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteMemoryStore]:
    s = SqliteMemoryStore(db, DIM, MODEL)
    yield s
    s.close()


# ---------------------------------------------------------------------------------------------
# put / get
# ---------------------------------------------------------------------------------------------


def test_every_field_round_trips(store: SqliteMemoryStore) -> None:
    # GIVEN a summary record with every field set, odd microseconds and non-ASCII everywhere
    start, end = period_bounds(Grain.DAILY, "2026-11-21")
    full = record(
        "Alice moved the launch to March 3 — café ☕",
        id="sum_abcdefghijklmnop",
        user_id="u-7",
        grain=Grain.DAILY,
        time_key="2026-11-21",
        period_start=start,
        period_end=end,
        kind=MemoryKind.DECISION,
        role="assistant",
        conversation_id="c-42",
        topic="launch date",
        topic_raw="Launch  Date",
        importance=0.8125,
        tags=["launch", "überblick"],
        source=Source(
            platform="slack", channel_id="C1", thread_id="T1", message_id="m-9", url="https://x.test/1"
        ),
        links=[Link(entity_type="person", entity_id="alice", weight=0.25)],
        metadata={"n": 1, "f": 0.1, "nested": {"list": [1, "two", None, True]}, "ключ": "значение"},
        source_ids=["mem_a", "mem_b"],
        access_count=3,
        last_accessed_at=NOW - timedelta(microseconds=123_457),
        created_at=datetime(2026, 11, 22, 0, 5, 1, 999_999, tzinfo=UTC),
        updated_at=datetime(2026, 11, 22, 0, 6, 0, 1, tzinfo=UTC),
        occurred_at=datetime(2026, 11, 21, 23, 59, 59, 999_999, tzinfo=UTC),
        expires_at=datetime(2027, 11, 22, tzinfo=UTC),
    )
    # AND a forgotten record with every optional field left empty
    bare = record("bare", deleted_at=NOW - timedelta(seconds=1))

    # WHEN both are stored and read back
    store.put([StoredRecord(full, unit(1)), StoredRecord(bare, unit(2))])

    # THEN they come back equal, field for field
    assert store.get("t1", "a1", full.id) == full
    assert store.get("t1", "a1", bare.id) == bare


def test_put_overwrites_by_id_and_keeps_the_text_index_in_step(store: SqliteMemoryStore) -> None:
    # GIVEN a record indexed under "alpha"
    first = put(store, record("alpha plans", id="mem_same"), seed=1)

    # WHEN the same id is written again with other words
    second = first.model_copy(update={"content": "beta plans", "content_hash": content_hash("beta plans")})
    put(store, second, seed=2)

    # THEN the new content is stored and only the new words are searchable
    assert store.get("t1", "a1", "mem_same") == second
    assert ids(store.search(query(text="alpha"))) == []
    assert ids(store.search(query(text="beta"))) == ["mem_same"]
    assert store.stats("t1", "a1", NOW).records == {"working": 1}


def test_put_refuses_a_vector_of_the_wrong_dimension_and_writes_nothing(store: SqliteMemoryStore) -> None:
    good, bad = record("good"), record("bad")
    with pytest.raises(ConfigurationError, match="dimension 16"):
        store.put([StoredRecord(good, unit(1)), StoredRecord(bad, np.ones(DIM + 1, dtype=np.float32))])
    assert store.get("t1", "a1", good.id) is None


def test_a_query_vector_of_the_wrong_dimension_is_a_configuration_error(store: SqliteMemoryStore) -> None:
    put(store, record("x"))
    with pytest.raises(ConfigurationError):
        store.search(query(vector=np.ones(DIM * 2, dtype=np.float32)))
    with pytest.raises(ConfigurationError):
        store.nearest(NearestQuery("t1", "a1", Grain.WORKING, np.ones(3, dtype=np.float32), NOW))


def test_the_same_id_in_two_tenants_is_two_records(store: SqliteMemoryStore) -> None:
    # GIVEN two tenants that (by whatever accident) use the same record id
    put(store, record("tenant one's secret", id="mem_shared", tenant_id="t1"))
    put(store, record("tenant two's note", id="mem_shared", tenant_id="t2"))

    # WHEN / THEN neither write overwrote the other
    one, two = store.get("t1", "a1", "mem_shared"), store.get("t2", "a1", "mem_shared")
    assert one is not None and one.content == "tenant one's secret"
    assert two is not None and two.content == "tenant two's note"


def test_get_resolves_an_alias_and_returns_forgotten_records(store: SqliteMemoryStore) -> None:
    # GIVEN
    target = put(store, record("merged target"))
    # WHEN
    store.add_alias("t1", "a1", "mem_alias", target.id)
    # THEN
    assert store.get("t1", "a1", "mem_alias") == target

    store.soft_delete("t1", "a1", target.id, forget_event(target))
    forgotten = store.get("t1", "a1", "mem_alias")
    assert forgotten is not None and forgotten.deleted_at == NOW
    assert store.get("t1", "a1", "mem_unknown") is None


# ---------------------------------------------------------------------------------------------
# Isolation: a record of (t1, a1) is invisible from every other tenant or agent, on every method
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def owned(store: SqliteMemoryStore) -> MemoryRecord:
    rec = put(store, record("the launch moved to March", tags=["launch"], user_id="u1"), vector=unit(7))
    store.add_alias("t1", "a1", "mem_alias_of_owned", rec.id)
    return rec


OTHERS = pytest.mark.parametrize(("tenant", "agent"), [("t2", "a1"), ("t1", "a2")], ids=["tenant", "agent"])


@OTHERS
def test_isolation_get(store: SqliteMemoryStore, owned: MemoryRecord, tenant: str, agent: str) -> None:
    # WHEN / THEN
    assert store.get(tenant, agent, owned.id) is None
    assert store.get(tenant, agent, "mem_alias_of_owned") is None
    # even when the other scope has a record with the aliased id, the owner's alias is not its own
    put(store, record("lookalike", id="mem_lookalike", tenant_id=tenant, agent_id=agent))
    store.add_alias("t1", "a1", "mem_alias_2", "mem_lookalike")
    assert store.get(tenant, agent, "mem_alias_2") is None


@OTHERS
def test_isolation_search(store: SqliteMemoryStore, owned: MemoryRecord, tenant: str, agent: str) -> None:
    # GIVEN the other scope has a record of its own (so its vector cache and index are not empty)
    put(store, record("unrelated", tenant_id=tenant, agent_id=agent), vector=unit(99))
    for q in (
        query(tenant_id=tenant, agent_id=agent, vector=unit(7), text="launch March"),
        query(tenant_id=tenant, agent_id=agent, text="launch"),
        query(tenant_id=tenant, agent_id=agent, tags=("launch",)),
        query(tenant_id=tenant, agent_id=agent, user_id="u1"),
    ):
        assert owned.id not in ids(store.search(q))


@OTHERS
def test_isolation_list_stats_nearest(
    store: SqliteMemoryStore, owned: MemoryRecord, tenant: str, agent: str
) -> None:
    assert store.list(ListQuery(tenant, agent, NOW)).records == []
    assert store.stats(tenant, agent, NOW).records == {}
    assert store.nearest(NearestQuery(tenant, agent, Grain.WORKING, unit(7), NOW)) is None


@OTHERS
def test_isolation_writes(store: SqliteMemoryStore, owned: MemoryRecord, tenant: str, agent: str) -> None:
    # WHEN another scope tries to forget or touch the record, by id or by alias
    assert store.soft_delete(tenant, agent, owned.id, forget_event(owned)) is False
    assert store.soft_delete(tenant, agent, "mem_alias_of_owned", forget_event(owned)) is False
    store.record_access(tenant, agent, [owned.id], NOW)

    # THEN the owner's record is untouched
    assert store.get("t1", "a1", owned.id) == owned


# ---------------------------------------------------------------------------------------------
# Search: windows, expiry, forgetting, filters
# ---------------------------------------------------------------------------------------------


def test_window_overlap_for_working_records_is_inclusive_at_both_ends(store: SqliteMemoryStore) -> None:
    # GIVEN
    start, end = NOW - timedelta(days=2), NOW - timedelta(days=1)
    before = put(store, record("before", occurred_at=start - timedelta(microseconds=1)))
    at_start = put(store, record("at start", occurred_at=start))
    inside = put(store, record("inside", occurred_at=start + timedelta(hours=5)))
    at_end = put(store, record("at end", occurred_at=end))
    after = put(store, record("after", occurred_at=end + timedelta(microseconds=1)))

    found = set(ids(store.search(query(start=start, end=end))))
    # WHEN / THEN
    assert found == {at_start.id, inside.id, at_end.id}
    assert not found & {before.id, after.id}
    assert set(ids(store.search(query(start=start)))) == {at_start.id, inside.id, at_end.id, after.id}
    assert set(ids(store.search(query(end=start)))) == {before.id, at_start.id}


def test_window_overlap_for_summaries_uses_their_half_open_period(store: SqliteMemoryStore) -> None:
    # GIVEN a daily summary of the 21st, i.e. [21st 00:00, 22nd 00:00)
    day = put(store, summary(Grain.DAILY, "2026-11-21", "daily"))
    week = put(store, summary(Grain.WEEKLY, "2026-W47", "weekly"))  # Mon 16th .. Sun 22nd
    d21, d22 = datetime(2026, 11, 21, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC)

    def found(start: datetime | None, end: datetime | None) -> set[str]:
        return set(ids(store.search(query(start=start, end=end, grains=(Grain.DAILY, Grain.WEEKLY)))))

    # WHEN / THEN a window inside the day finds it (the summary covers it) ...
    assert found(d21 + timedelta(hours=10), d21 + timedelta(hours=11)) == {day.id, week.id}
    # ... a window that ends exactly when the day starts touches it ...
    assert found(d21 - timedelta(days=3), d21) == {day.id, week.id}
    # ... but one that starts when the day has ended does not (the end is exclusive)
    assert found(d22, d22 + timedelta(hours=1)) == {week.id}
    assert found(datetime(2026, 11, 23, tzinfo=UTC), None) == set()


def test_expired_records_never_match_at_query_now(store: SqliteMemoryStore) -> None:
    # GIVEN
    expired = put(store, record("expired", expires_at=NOW))
    alive = put(store, record("alive", expires_at=NOW + timedelta(microseconds=1)), vector=unit(3))

    # WHEN / THEN
    assert ids(store.search(query())) == [alive.id]
    assert ids(store.search(query(vector=unit(0), text="expired alive"))) == [alive.id]
    assert [r.id for r in store.list(ListQuery("t1", "a1", NOW)).records] == [alive.id]
    assert store.stats("t1", "a1", NOW).records == {"working": 1}
    nearest = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, unit(0), NOW))
    assert nearest is not None and nearest[0].id == alive.id
    # an hour earlier the first one was still alive
    earlier = StoreQuery("t1", "a1", NOW - timedelta(hours=1))
    assert set(ids(store.search(earlier))) == {expired.id, alive.id}


def test_forgotten_records_are_never_found(store: SqliteMemoryStore) -> None:
    # GIVEN a forgotten record that matches the query exactly, and a worse match that is live
    gone = put(store, record("forgotten launch plan"), vector=unit(1))
    kept = put(store, record("kept launch plan"), vector=near(unit(1), 0.5, 2))
    assert store.soft_delete("t1", "a1", gone.id, forget_event(gone))

    # WHEN / THEN no search, listing or nearest-neighbour lookup finds the forgotten one
    assert ids(store.search(query(vector=unit(1), text="forgotten launch"))) == [kept.id]
    assert ids(store.search(query(text="forgotten"))) == []
    assert ids(store.search(query())) == [kept.id]
    assert [r.id for r in store.list(ListQuery("t1", "a1", NOW)).records] == [kept.id]
    nearest = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, unit(1), NOW))
    assert nearest is not None and nearest[0].id == kept.id


def test_a_record_stored_forgotten_is_not_indexed_until_overwritten_live(store: SqliteMemoryStore) -> None:
    # GIVEN
    rec = record("phoenix project", deleted_at=NOW - timedelta(days=1))
    put(store, rec)
    # WHEN / THEN
    assert ids(store.search(query(text="phoenix"))) == []

    put(store, rec.model_copy(update={"deleted_at": None}))
    assert ids(store.search(query(text="phoenix"))) == [rec.id]


def test_kinds_tags_user_and_grain_filters(store: SqliteMemoryStore) -> None:
    # GIVEN
    fact = put(store, record("fact", kind=MemoryKind.FACT, tags=["a", "b"], user_id="u1"))
    task = put(store, record("task", kind=MemoryKind.TASK, tags=["c"], user_id="u2"))
    note = put(store, record("note", kind=MemoryKind.NOTE))
    day = put(store, summary(Grain.DAILY, "2026-11-21", tags=["a"]))

    # WHEN
    def found(**fields: Any) -> set[str]:
        return set(ids(store.search(query(**fields))))

    # THEN
    assert found(kinds=(MemoryKind.FACT, MemoryKind.TASK)) == {fact.id, task.id}
    assert found(tags=("b",)) == {fact.id}
    assert found(tags=("a", "c")) == {fact.id, task.id, day.id}  # any of the tags
    assert found(tags=("zzz",)) == set()
    assert found(user_id="u2") == {task.id}
    assert found(grains=(Grain.WORKING,)) == {fact.id, task.id, note.id}
    assert found(grains=(Grain.DAILY,)) == {day.id}
    assert found(grains=(Grain.DAILY,), tags=("a",), vector=unit(0), text="summary fact") == {day.id}


# ---------------------------------------------------------------------------------------------
# Search: scores, ranks, merging, browsing
# ---------------------------------------------------------------------------------------------


def test_vector_hits_come_best_first_with_their_cosine(store: SqliteMemoryStore) -> None:
    # GIVEN
    q = unit(1)
    recs = [put(store, record(f"memory {i}"), vector=near(q, 0.3 * i, 10 + i)) for i in range(5)]

    # WHEN
    found = store.search(query(vector=q, limit=3))

    # THEN
    assert ids(found) == [recs[0].id, recs[1].id, recs[2].id]
    for c, i in zip(found, range(3), strict=True):
        expected = float(np.dot(q, near(q, 0.3 * i, 10 + i)))
        assert c.similarity == pytest.approx(expected, abs=1e-5)
        assert c.lexical is None


def test_vectors_are_compared_by_cosine_whatever_their_length(store: SqliteMemoryStore) -> None:
    put(store, record("long vector"), vector=unit(1) * 7.5)
    hit = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, unit(1) * 0.1, NOW))
    assert hit is not None and hit[1] == pytest.approx(1.0, abs=1e-5)


def test_lexical_and_vector_hits_are_merged_by_id(store: SqliteMemoryStore) -> None:
    # GIVEN
    q = unit(1)
    both = put(store, record("the quarterly budget review"), vector=near(q, 0.1, 2))
    vector_only = put(store, record("nothing in common"), vector=near(q, 0.2, 3))
    lexical_only = put(store, record("budget budget budget"), vector=near(q, 3.0, 4))

    # WHEN
    listed = store.search(query(vector=q, text="budget", limit=2))
    found = {c.record.id: c for c in listed}

    # THEN
    # the vector hits in vector order, then the lexical-only hit (recall/rules/ranking.py, *Fusion*)
    assert [c.record.id for c in listed] == [both.id, vector_only.id, lexical_only.id]
    # every candidate has its cosine when the query has a vector, lexical-only ones included
    assert found[lexical_only.id].similarity == pytest.approx(float(np.dot(q, near(q, 3.0, 4))), abs=1e-5)
    # lexical scores are normalised: the best is 1.0, the others a fraction of it
    assert found[lexical_only.id].lexical == 1.0
    assert 0.0 < (found[both.id].lexical or 0.0) < 1.0
    assert found[vector_only.id].lexical is None


def test_text_only_search_has_no_similarity(store: SqliteMemoryStore) -> None:
    rec = put(store, record("Überraschung im Café"))
    (hit,) = store.search(query(text="cafe ÜBERRASCHUNG"))
    assert hit.record.id == rec.id and hit.similarity is None and hit.lexical == 1.0


def test_the_topic_is_searchable(store: SqliteMemoryStore) -> None:
    rec = put(store, record("moved to March", topic="launch date", topic_raw="Launch date"))
    assert ids(store.search(query(text="launch"))) == [rec.id]


def test_without_vector_or_words_the_newest_records_in_the_window_come_back(store: SqliteMemoryStore) -> None:
    # GIVEN
    recs = [put(store, record(f"m{i}", occurred_at=NOW - timedelta(hours=i))) for i in range(6)]
    newest_first = [r.id for r in recs]

    # WHEN / THEN
    assert ids(store.search(query(limit=4))) == newest_first[:4]
    assert ids(store.search(query(text="?! ... --", limit=2))) == newest_first[:2]
    window = query(start=NOW - timedelta(hours=4), end=NOW - timedelta(hours=2))
    assert ids(store.search(window)) == newest_first[2:5]
    assert all(c.similarity is None and c.lexical is None for c in store.search(query()))
    assert store.search(query(limit=0)) == []


def test_common_words_are_dropped_from_lexical_queries_on_big_stores(
    store: SqliteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a store big enough to prune, where "the" is in every document and "falcon" in one
    monkeypatch.setattr(sqlite_retrieval, "COMMON_TERM_MIN_DOCS", 5)
    falcon = put(store, record("the falcon has landed"))
    others = [put(store, record(f"the report number {i}")) for i in range(7)]

    # WHEN the query holds the common word and a rare one, THEN only the rare one matches
    assert ids(store.search(query(text="the falcon"))) == [falcon.id]
    # AND a query of common words only still works as plain BM25
    assert set(ids(store.search(query(text="the")))) == {falcon.id, *(r.id for r in others)}


def test_a_common_word_is_known_by_its_stem(
    store: SqliteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a store where "reports" (indexed as "report") is in nearly every document
    monkeypatch.setattr(sqlite_retrieval, "COMMON_TERM_MIN_DOCS", 5)
    falcon = put(store, record("the falcon reports landed"))
    for i in range(7):
        put(store, record(f"reports number {i}"))

    # WHEN a query says "reports" and "falcon"
    found = ids(store.search(query(text="reports falcon")))

    # THEN the common word was recognised through its stem and left out: only the falcon matches
    assert found == [falcon.id]


def test_a_large_store_reads_the_rarest_words_first(
    store: SqliteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a "large" store where "ember" is in 2 documents, "harbor" in 3 and "quay" in 6
    monkeypatch.setattr(sqlite_retrieval, "COMMON_TERM_MIN_DOCS", 5)
    monkeypatch.setattr(sqlite_retrieval, "LARGE_STORE_DOCS", 5)
    monkeypatch.setattr(sqlite_retrieval, "MAX_POSTINGS", 6)
    texts = ["ember harbor quay", "ember quay", "harbor quay one", "harbor quay two", "quay one", "quay two"]
    texts += [f"filler {i}" for i in range(20)]
    records = [put(store, record(t)) for t in texts]

    # WHEN a query names all three
    with store._db.transaction(write=False) as conn:
        kept = sqlite_retrieval._informative_terms(conn, ["quay", "harbor", "ember"], len(texts))
    found = set(ids(store.search(query(text="quay harbor ember"))))

    # THEN the rarest words within the budget are read (2 + 3 postings), the commonest is not
    assert kept == (["ember", "harbor"], None)
    assert found == {r.id for r in records[:4]}


def test_a_large_store_scores_only_the_newest_matches_of_a_common_lone_word(
    store: SqliteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a "large" store where "marathon" is in 20 documents, and a budget of 5 postings
    monkeypatch.setattr(sqlite_retrieval, "COMMON_TERM_MIN_DOCS", 5)
    monkeypatch.setattr(sqlite_retrieval, "LARGE_STORE_DOCS", 5)
    monkeypatch.setattr(sqlite_retrieval, "MAX_POSTINGS", 5)
    older = [put(store, record(f"marathon training week {i}")) for i in range(15)]
    newer = [put(store, record(f"marathon training day {i}")) for i in range(5)]
    for i in range(40):  # the newest documents of all do not match
        put(store, record(f"filler {i}"))

    # WHEN a question's only searchable word is that one
    found = set(ids(store.search(query(text="who is into marathon?", limit=20))))

    # THEN BM25 scored the newest matches only, about the budget's worth, and none of the oldest
    assert found == {r.id for r in newer}
    assert not found & {r.id for r in older}


# ---------------------------------------------------------------------------------------------
# Lexical query safety
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("a OR b OR c", ["b", "c"]),  # "a" and "or" are function words
        ("NEAR(launch date)", ["near", "launch", "date"]),
        ('"', []),
        ("*", []),
        (")", []),
        ("content:secret", ["content", "secret"]),
        ("-launch +date ^start", ["launch", "date", "start"]),
        ("AND or NOT not", ["and", "or", "not"]),  # nothing but function words: all kept
        ("what did Alice say about the launch?", ["alice", "say", "launch"]),
        ("Café Über 東京 launch LAUNCH", ["café", "über", "東京", "launch"]),
        ("", []),
        (None, []),
    ],
)
def test_query_terms_keep_only_words(text: str | None, terms: list[str]) -> None:
    assert query_terms(text) == terms


def test_query_terms_are_bounded() -> None:
    terms = query_terms(" ".join(f"w{i}" for i in range(10_000)))
    assert len(terms) == sqlite_filters.MAX_QUERY_TOKENS


def test_fts_match_quotes_every_term() -> None:
    assert fts_match(["a", 'b"c']) == '"a" OR "b""c"'


HOSTILE = [
    '"',
    '""',
    "NEAR(",
    "NEAR(a b",
    "a OR b",
    "a AND",
    "NOT",
    "*",
    "launch*",
    "content:x",
    "topic:launch",
    "{content topic}: x",
    ")",
    "((",
    "^a",
    "a + b - c",
    "'; DROP TABLE records; --",
    "\x00\x01\x02",
    "🙂🙂🙂",
    "ǅemal Ǆ ǆ",
    "東京で会議",
    "x" * 5000,
    " ".join(["launch"] * 2000),
    " OR ".join(f"w{i}" for i in range(3000)),
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_lexical_input_never_breaks_a_search(store: SqliteMemoryStore, text: str) -> None:
    # GIVEN records with ordinary words, and one containing the word "x"
    put(store, record("the launch moved to March"), seed=1)
    x = put(store, record("x marks the spot"), seed=2)

    # WHEN hostile text is searched, with and without a vector, THEN nothing raises and the
    # results hold only records that share a word with it (or, lacking words, the newest)
    lexical = store.search(query(text=text))
    store.search(query(text=text, vector=unit(3)))
    words = set(query_terms(text))
    for c in lexical:
        if words:
            assert c.lexical is not None
            assert words & set(query_terms(c.record.content))
    if text == "content:x":
        assert ids(lexical) == [x.id]  # "content" and "x" are words, not a column filter


def test_the_store_is_intact_after_hostile_input(store: SqliteMemoryStore) -> None:
    rec = put(store, record("still here"))
    store.search(query(text="'; DROP TABLE records; --"))
    assert store.get("t1", "a1", rec.id) == rec


# ---------------------------------------------------------------------------------------------
# nearest
# ---------------------------------------------------------------------------------------------


def test_nearest_is_the_closest_live_record_of_the_grain(store: SqliteMemoryStore) -> None:
    # GIVEN
    q = unit(1)
    # WHEN / THEN
    assert store.nearest(NearestQuery("t1", "a1", Grain.WORKING, q, NOW)) is None

    best = put(store, record("best"), vector=near(q, 0.2, 2))
    put(store, record("worse"), vector=near(q, 0.8, 3))
    put(store, summary(Grain.DAILY, "2026-11-21"), vector=q)  # closer, but another grain
    put(store, record("other agent", agent_id="a2"), vector=q)  # closer, but another agent

    hit = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, q, NOW))
    assert hit is not None
    assert hit[0].id == best.id
    assert hit[1] == pytest.approx(float(np.dot(q, near(q, 0.2, 2))), abs=1e-5)
    daily = store.nearest(NearestQuery("t1", "a1", Grain.DAILY, q, NOW))
    assert daily is not None and daily[1] == pytest.approx(1.0, abs=1e-5)


# ---------------------------------------------------------------------------------------------
# list and cursors
# ---------------------------------------------------------------------------------------------


def _walk(store: SqliteMemoryStore, grain: Grain | None = None, limit: int = 3) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        page = store.list(ListQuery("t1", "a1", NOW, grain=grain, limit=limit, cursor=cursor))
        pages.append([r.id for r in page.records])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


def test_list_walks_every_live_record_exactly_once_newest_first(store: SqliteMemoryStore) -> None:
    # GIVEN 10 records, four of them sharing one instant (the id breaks the tie), one forgotten
    same = NOW - timedelta(hours=5)
    recs = [put(store, record(f"r{i}", occurred_at=NOW - timedelta(hours=i))) for i in range(6)]
    recs += [put(store, record(f"tie{i}", id=f"mem_tie{i}", occurred_at=same)) for i in range(4)]
    gone = put(store, record("gone", occurred_at=NOW - timedelta(minutes=30)))
    store.soft_delete("t1", "a1", gone.id, forget_event(gone))
    put(store, summary(Grain.DAILY, "2026-11-20"))

    # WHEN walked three at a time
    pages = _walk(store, grain=Grain.WORKING)

    # THEN every live working record comes exactly once, newest first, ties by id descending
    walked = [rid for page in pages for rid in page]
    expected = sorted(recs, key=lambda r: (r.occurred_at, r.id), reverse=True)
    assert walked == [r.id for r in expected]
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert len(walked) == len(set(walked)) == 10
    # AND without a grain filter the summary is in the walk too
    assert len([rid for page in _walk(store) for rid in page]) == 11


def test_the_last_full_page_has_no_cursor(store: SqliteMemoryStore) -> None:
    for i in range(3):
        put(store, record(f"r{i}", occurred_at=NOW - timedelta(hours=i)))
    page = store.list(ListQuery("t1", "a1", NOW, limit=3))
    assert len(page.records) == 3 and page.next_cursor is None


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def test_list_rejects_forged_and_foreign_cursors(store: SqliteMemoryStore) -> None:
    # GIVEN
    for i in range(4):
        put(store, record(f"r{i}", occurred_at=NOW - timedelta(hours=i)))
        put(store, record(f"r{i}", tenant_id="t2", occurred_at=NOW - timedelta(hours=i)))
    own = store.list(ListQuery("t1", "a1", NOW, limit=2)).next_cursor
    # WHEN
    foreign = store.list(ListQuery("t2", "a1", NOW, limit=2)).next_cursor
    # THEN
    assert own is not None and foreign is not None
    payload = json.loads(base64.urlsafe_b64decode(own + "=" * (-len(own) % 4)))

    bad = [
        foreign,  # another tenant's cursor
        _b64(json.dumps({**payload, "a": "a2"}).encode()),  # another agent's
        _b64(json.dumps({**payload, "o": "yesterday"}).encode()),
        _b64(json.dumps({**payload, "o": True}).encode()),
        _b64(json.dumps({**payload, "i": 5}).encode()),
        _b64(json.dumps({**payload, "o": 10**30}).encode()),  # beyond SQLite's integers
        _b64(b"[" * 1500),  # nested past the JSON parser's recursion limit
        _b64(json.dumps([1, 2]).encode()),
        _b64(b"not json"),
        _b64(b"\xff\xfe"),
        "%%%not-base64%%%",
        "",
        "A" * 5000,
    ]
    for cursor in bad:
        with pytest.raises(ValidationFailedError, match="invalid cursor"):
            store.list(ListQuery("t1", "a1", NOW, limit=2, cursor=cursor))
    # a cursor issued for one grain filter is not valid for another
    with pytest.raises(ValidationFailedError, match="invalid cursor"):
        store.list(ListQuery("t1", "a1", NOW, grain=Grain.WORKING, limit=2, cursor=own))
    # while the genuine one works
    assert len(store.list(ListQuery("t1", "a1", NOW, limit=2, cursor=own)).records) == 2


# ---------------------------------------------------------------------------------------------
# soft_delete, record_access, stats
# ---------------------------------------------------------------------------------------------


def _audit(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT tenant_id, agent_id, record_id, action, actor FROM audit").fetchall()


def _fts_rowids(db: Path, word: str) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [
            r[0]
            for r in conn.execute("SELECT rowid FROM records_fts WHERE records_fts MATCH ?", (f'"{word}"',))
        ]


def test_soft_delete_marks_unindexes_and_audits_once(store: SqliteMemoryStore, db: Path) -> None:
    # GIVEN
    rec = put(store, record("zeppelin sighting"))
    # WHEN / THEN
    assert _fts_rowids(db, "zeppelin")
    at = NOW - timedelta(minutes=1)

    assert store.soft_delete("t1", "a1", rec.id, forget_event(rec, at)) is True
    assert store.soft_delete("t1", "a1", rec.id, forget_event(rec, at)) is False  # already gone
    assert store.soft_delete("t1", "a1", "mem_unknown", forget_event(rec, at)) is False

    stored = store.get("t1", "a1", rec.id)
    assert stored is not None and stored.deleted_at == at
    assert _fts_rowids(db, "zeppelin") == []
    assert _audit(db) == [("t1", "a1", rec.id, "forget", "test")]


def test_soft_delete_through_an_alias(store: SqliteMemoryStore) -> None:
    # GIVEN
    rec = put(store, record("target"))
    # WHEN
    store.add_alias("t1", "a1", "mem_old_name", rec.id)
    # THEN
    assert store.soft_delete("t1", "a1", "mem_old_name", forget_event(rec)) is True
    stored = store.get("t1", "a1", rec.id)
    assert stored is not None and stored.deleted_at is not None


def test_soft_delete_of_an_expired_record_is_refused(store: SqliteMemoryStore, db: Path) -> None:
    rec = put(store, record("old", expires_at=NOW - timedelta(days=1)))
    assert store.soft_delete("t1", "a1", rec.id, forget_event(rec)) is False
    assert _audit(db) == []


def test_record_access_counts_and_keeps_the_latest_time(store: SqliteMemoryStore) -> None:
    # GIVEN
    a, b = put(store, record("a")), put(store, record("b"))
    store.record_access("t1", "a1", [a.id, b.id, a.id], NOW)  # a duplicate counts once
    store.record_access("t1", "a1", [a.id], NOW - timedelta(hours=1))  # a late, older report

    # WHEN
    got_a, got_b = store.get("t1", "a1", a.id), store.get("t1", "a1", b.id)
    # THEN
    assert got_a is not None and (got_a.access_count, got_a.last_accessed_at) == (2, NOW)
    assert got_b is not None and (got_b.access_count, got_b.last_accessed_at) == (1, NOW)
    store.record_access("t1", "a1", [], NOW)  # nothing to do


def test_record_access_waits_quietly_while_another_writer_holds_the_lock_and_lands_after(
    store: SqliteMemoryStore, db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a record, and another writer holding the file's write lock
    rec = put(store, record("busy"))
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    # WHEN an access is counted and written while the lock is held
    try:
        started = time.monotonic()
        store.record_access("t1", "a1", [rec.id], NOW)  # must not raise
        store._activity.flush()  # gives up after a short wait, keeps the count
        assert time.monotonic() - started < 5
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    # THEN the skip was logged, and the count lands once the file is free
    assert "record_access skipped" in caplog.text
    stored = store.get("t1", "a1", rec.id)
    assert stored is not None and stored.access_count == 1


def _generation(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT gen FROM generations WHERE tenant_id = 't1' AND agent_id = 'a1'"
        ).fetchone()
        return int(row[0])


def test_record_access_does_not_invalidate_the_vector_cache(store: SqliteMemoryStore, db: Path) -> None:
    # GIVEN
    rec = put(store, record("a"))
    before = _generation(db)
    # WHEN
    store.record_access("t1", "a1", [rec.id], NOW)
    # THEN
    assert _generation(db) == before
    store.soft_delete("t1", "a1", rec.id, forget_event(rec))
    assert _generation(db) > before


def test_stats_counts_live_records_per_grain(store: SqliteMemoryStore) -> None:
    # WHEN / THEN
    assert store.stats("t1", "a1", NOW).records == {}
    oldest = put(store, record("old", occurred_at=NOW - timedelta(days=30)))
    put(store, record("new", occurred_at=NOW - timedelta(hours=1)))
    newest = put(store, record("gone", occurred_at=NOW - timedelta(minutes=1)))
    put(store, record("expired", occurred_at=NOW - timedelta(days=90), expires_at=NOW))
    put(store, summary(Grain.DAILY, "2026-11-21"))
    store.soft_delete("t1", "a1", newest.id, forget_event(newest))

    stats = store.stats("t1", "a1", NOW)

    assert stats.records == {"working": 2, "daily": 1}
    assert stats.oldest == oldest.occurred_at
    assert stats.newest == NOW - timedelta(hours=1)


# ---------------------------------------------------------------------------------------------
# Retention and the dispatcher's listing (their behaviour is in tests/contract; here: the index,
# aliases, caches and batches that only this adapter has)
# ---------------------------------------------------------------------------------------------


def test_retention_leaves_no_trace_in_the_index_aliases_or_vector_caches(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN five old records (more than one delete batch), an alias, and a reader with a warm cache
    monkeypatch.setattr(sqlite_retention, "_DELETE_BATCH", 2)
    writer, reader = SqliteMemoryStore(db, DIM, MODEL), SqliteMemoryStore(db, DIM, MODEL)
    try:
        old = [
            put(writer, record(f"quokka {i}", occurred_at=NOW - timedelta(days=40 + i)), seed=i)
            for i in range(5)
        ]
        recent = put(writer, record("recent quokka"), seed=9)
        writer.add_alias("t1", "a1", "mem_alias_old", old[0].id)
        writer.add_alias("t1", "a1", "mem_alias_recent", recent.id)
        assert len(reader.search(query(vector=unit(0), limit=10))) == 6

        generation = _generation(db)

        # WHEN retention removes everything older than 30 days
        assert writer.delete_older_than("t1", Grain.WORKING, NOW - timedelta(days=30)) == 5

        # THEN the text index, the aliases and the other instance's cache all forgot them
        assert len(_fts_rowids(db, "quokka")) == 1
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT alias_id FROM aliases").fetchall() == [("mem_alias_recent",)]
        assert _generation(db) > generation
        assert reader.get("t1", "a1", "mem_alias_old") is None
        assert reader.get("t1", "a1", "mem_alias_recent") == recent
        assert ids(reader.search(query(vector=unit(0), limit=10))) == [recent.id]
        assert ids(reader.search(query(text="quokka"))) == [recent.id]
    finally:
        writer.close()
        reader.close()


def test_an_agents_cursor_is_bound_to_its_grain_and_period(store: SqliteMemoryStore) -> None:
    # GIVEN
    for agent in ("a1", "a2", "a3"):
        put(store, record("x", agent_id=agent, occurred_at=datetime(2026, 11, 18, tzinfo=UTC)))
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)
    # WHEN
    page = store.agents_with_records(PeriodScan(Grain.WORKING, start, end, page_size=2))
    # THEN
    assert page.next_cursor is not None

    with pytest.raises(ValidationFailedError, match="invalid cursor"):
        store.agents_with_records(
            PeriodScan(Grain.WORKING, start, end + timedelta(days=1), cursor=page.next_cursor)
        )
    with pytest.raises(ValidationFailedError, match="invalid cursor"):
        store.agents_with_records(PeriodScan(Grain.DAILY, start, end, cursor=page.next_cursor))
    with pytest.raises(ValidationFailedError, match="invalid cursor"):
        store.agents_with_records(PeriodScan(Grain.WORKING, start, end, cursor="garbage!"))
    rest = store.agents_with_records(
        PeriodScan(Grain.WORKING, start, end, cursor=page.next_cursor, page_size=2)
    )
    assert [a.agent_id for a in page.agents + rest.agents] == ["a1", "a2", "a3"]


# ---------------------------------------------------------------------------------------------
# The file: model guard, persistence, several instances and threads
# ---------------------------------------------------------------------------------------------


def test_opening_a_file_made_for_another_model_or_dimension_fails_clearly(db: Path) -> None:
    # GIVEN
    SqliteMemoryStore(db, DIM, MODEL).close()
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=r"'test-model'.*'other-model'.*re-embed.*new"):
        SqliteMemoryStore(db, DIM, "other-model")
    with pytest.raises(ConfigurationError, match=r"dimension 16.*dimension 32"):
        SqliteMemoryStore(db, 32, MODEL)
    SqliteMemoryStore(db, DIM, MODEL).close()  # the right model still opens it


def test_records_persist_across_reopening(db: Path) -> None:
    # GIVEN
    first = SqliteMemoryStore(db, DIM, MODEL)
    rec = put(first, record("persistent launch memory"), vector=unit(5))
    first.add_alias("t1", "a1", "mem_alias", rec.id)
    first.close()

    second = SqliteMemoryStore(db, DIM, MODEL)
    # WHEN / THEN
    try:
        assert second.get("t1", "a1", "mem_alias") == rec
        (hit,) = second.search(query(vector=unit(5), text="launch"))
        assert hit.record == rec and hit.similarity == pytest.approx(1.0, abs=1e-5)
    finally:
        second.close()


def test_a_write_through_another_instance_invalidates_the_vector_cache(db: Path) -> None:
    # GIVEN two stores on one file (as two processes would be), the reader's cache warm
    reader, writer = SqliteMemoryStore(db, DIM, MODEL), SqliteMemoryStore(db, DIM, MODEL)
    try:
        q = unit(1)
        far = put(writer, record("far"), vector=near(q, 2.0, 2))
        assert ids(reader.search(query(vector=q, limit=1))) == [far.id]

        # WHEN the writer adds a closer record, THEN the reader finds it
        close = put(writer, record("close"), vector=near(q, 0.1, 3))
        assert ids(reader.search(query(vector=q, limit=1))) == [close.id]

        # WHEN the writer forgets it, THEN the reader stops finding it
        writer.soft_delete("t1", "a1", close.id, forget_event(close))
        assert ids(reader.search(query(vector=q, limit=1))) == [far.id]

        # WHEN the writer overwrites a vector in place, THEN the reader scores the new one
        put(writer, far, vector=q)
        (hit,) = reader.search(query(vector=q, limit=1))
        assert hit.similarity == pytest.approx(1.0, abs=1e-5)
        nearest = reader.nearest(NearestQuery("t1", "a1", Grain.WORKING, q, NOW))
        assert nearest is not None and nearest[1] == pytest.approx(1.0, abs=1e-5)
    finally:
        reader.close()
        writer.close()


@pytest.mark.parametrize("merge_min_rows", [0, 1000], ids=["rebuild", "merge"])
def test_a_cached_reader_always_scores_exactly_the_live_vectors(
    db: Path, monkeypatch: pytest.MonkeyPatch, merge_min_rows: int
) -> None:
    # GIVEN a reader whose cache is either rebuilt or merged after each write of another instance
    monkeypatch.setattr(sqlite_vectors, "_MERGE_MIN_ROWS", merge_min_rows)
    rng = np.random.default_rng(11)
    reader, writer = SqliteMemoryStore(db, DIM, MODEL), SqliteMemoryStore(db, DIM, MODEL)
    live: dict[str, tuple[MemoryRecord, Vector]] = {}
    gone: dict[str, MemoryRecord] = {}
    q = unit(0)
    try:
        for step in range(60):
            # WHEN a random write happens: new records, overwrites, forgets, resurrections, retention
            op = rng.choice(["new", "new", "overwrite", "forget", "resurrect", "retention"])
            if op == "new" or not live:
                for i in range(int(rng.integers(1, 4))):
                    days = int(rng.integers(0, 60))
                    rec = record(f"s{step}", id=f"mem_{step}_{i}", occurred_at=NOW - timedelta(days=days))
                    vector = unit(1000 + step * 10 + i)
                    live[rec.id] = (put(writer, rec, vector=vector), vector)
            elif op == "overwrite":
                rid = str(rng.choice(sorted(live)))
                vector = unit(5000 + step)
                live[rid] = (put(writer, live[rid][0], vector=vector), vector)
            elif op == "forget":
                rid = str(rng.choice(sorted(live)))
                rec, _ = live.pop(rid)
                assert writer.soft_delete("t1", "a1", rid, forget_event(rec))
                gone[rid] = rec
            elif op == "resurrect" and gone:
                rid = str(rng.choice(sorted(gone)))
                vector = unit(7000 + step)
                live[rid] = (put(writer, gone.pop(rid), vector=vector), vector)
            elif op == "retention":
                cutoff = NOW - timedelta(days=50)
                writer.delete_older_than("t1", Grain.WORKING, cutoff)
                for rid in [rid for rid, (rec, _) in live.items() if rec.occurred_at < cutoff]:
                    del live[rid]
                gone = {rid: rec for rid, rec in gone.items() if rec.occurred_at >= cutoff}

            # THEN the reader scores exactly the live records, each with its current vector
            found = {c.record.id: c.similarity for c in reader.search(query(vector=q, limit=1000))}
            expected = {rid: float(np.dot(q, vector)) for rid, (_, vector) in live.items()}
            assert found.keys() == expected.keys(), f"step {step} ({op})"
            for rid, similarity in expected.items():
                assert found[rid] == pytest.approx(similarity, abs=1e-5), f"step {step} ({op})"
    finally:
        reader.close()
        writer.close()


def test_threads_share_one_store(store: SqliteMemoryStore) -> None:
    # GIVEN writer threads and reader threads working at once (as the local server does)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(10):
                put(store, record(f"thread {n} item {i}"), seed=n * 100 + i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def read() -> None:
        try:
            for i in range(10):
                store.search(query(vector=unit(i), text="thread item"))
                store.list(ListQuery("t1", "a1", NOW, limit=5))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    # WHEN
    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # THEN nothing failed and every write is there
    assert errors == []
    assert store.stats("t1", "a1", NOW).records == {"working": 30}
    assert len(store.search(query(vector=unit(0), limit=50))) == 30


# --- schema version 2: speaker and context, stemmed text index ---------------------------------


def _lexical(store: SqliteMemoryStore, text: str) -> list[str]:
    query = StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, text=text, limit=10)
    return [c.record.id for c in store.search(query) if c.lexical]


def test_words_match_by_stem_and_context_and_speaker_are_searched(store: SqliteMemoryStore) -> None:
    # GIVEN
    rec = put(store, record("By the lake.", speaker="Caroline", context="Melanie: Where did you go camping?"))

    # WHEN / THEN
    assert _lexical(store, "camped") == [rec.id]  # stemmed: camping ~ camped
    assert _lexical(store, "caroline") == [rec.id]
    assert store.get("t1", "a1", rec.id) == rec


def test_conversation_tail_is_the_last_live_turns_before_an_instant_oldest_first(
    store: SqliteMemoryStore,
) -> None:
    # GIVEN
    turns = [
        put(store, record(f"turn {i}", conversation_id="c1", occurred_at=NOW + timedelta(seconds=i)))
        for i in range(5)
    ]
    put(store, record("other", conversation_id="c2", occurred_at=NOW + timedelta(seconds=2)))

    # WHEN
    tail = store.conversation_tail("t1", "a1", "c1", NOW + timedelta(seconds=4), 2)

    # THEN
    assert [r.id for r in tail] == [turns[2].id, turns[3].id]
    assert store.conversation_tail("t2", "a1", "c1", NOW + timedelta(seconds=9), 5) == []
    assert store.conversation_tail("t1", "a1", "c1", NOW, 5) == []


def test_a_version_1_file_is_upgraded_in_place(db: Path) -> None:
    # GIVEN a file written by version 1: no speaker or context columns, an unstemmed index
    store = SqliteMemoryStore(db, DIM, MODEL)
    rec = put(store, record("we went camping"))
    store.close()
    conn = sqlite3.connect(db)
    with conn:
        for trigger in ("records_fts_insert", "records_fts_delete", "records_fts_update"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE records_fts_vocab")
        conn.execute("DROP TABLE records_fts")
        conn.execute("DROP INDEX records_live_by_conversation")
        conn.execute("ALTER TABLE records DROP COLUMN speaker")
        conn.execute("ALTER TABLE records DROP COLUMN context")
        conn.execute(
            "CREATE VIRTUAL TABLE records_fts USING fts5(content, topic, content='records', "
            "content_rowid='seq', tokenize='unicode61 remove_diacritics 2')"
        )
        conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()

    # WHEN version 2 opens it
    upgraded = SqliteMemoryStore(db, DIM, MODEL)

    # THEN its records are there, searchable by stem, and new fields can be written
    assert upgraded.get("t1", "a1", rec.id) == rec
    assert _lexical(upgraded, "camped") == [rec.id]
    with_speaker = put(upgraded, record("by the lake", speaker="Caroline"))
    assert _lexical(upgraded, "caroline") == [with_speaker.id]
    upgraded.close()
