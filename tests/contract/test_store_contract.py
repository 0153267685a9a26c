"""The `MemoryStore` contract: what every adapter must do, written once, run against each.

Each test receives a fresh store from the parametrised ``store`` fixture (conftest.py): SQLite
always, OpenSearch when ``OPENSEARCH_URL`` is set. Times are whole seconds or whole days, so the
OpenSearch store (which compares at millisecond precision) and the SQLite store (microseconds)
are held to exactly the same answers.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from tests.payloads import memory_record

from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain, period_bounds
from agent_memory.model.records import Link, MemoryKind, MemoryRecord, Source
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    ListQuery,
    MemoryStore,
    NearestQuery,
    PeriodScan,
    StoredRecord,
    StoreQuery,
)

DIM = 8  # the dimension conftest.py builds every store with (a mismatch fails loudly)
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
NOT_YET = "not yet implemented by SqliteMemoryStore"


def vec(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def at_cosine(c: float) -> np.ndarray:
    """A unit vector whose cosine to ``vec(1)`` is ``c``."""
    return vec(c, float(np.sqrt(max(0.0, 1 - c * c))))


def rec(
    record_id: str,
    *,
    tenant: str = "t1",
    agent: str = "a1",
    occurred: datetime = NOW - DAY,
    content: str | None = None,
    **fields: Any,
) -> MemoryRecord:
    return memory_record(
        record_id, content or f"memory {record_id}", tenant=tenant, agent=agent, at=occurred, **fields
    )


def summary(record_id: str, grain: Grain, key: str, **fields: Any) -> MemoryRecord:
    start, end = period_bounds(grain, key)
    return rec(
        record_id,
        grain=grain,
        time_key=key,
        kind=MemoryKind.SUMMARY,
        period_start=start,
        period_end=end,
        occurred=start,
        **fields,
    )


def put(store: MemoryStore, *records: MemoryRecord, vector: np.ndarray | None = None) -> None:
    store.put([StoredRecord(r, vector if vector is not None else vec(1.0)) for r in records])


def query(**kwargs: Any) -> StoreQuery:
    return StoreQuery(**({"tenant_id": "t1", "agent_id": "a1", "now": NOW} | kwargs))


def ids(candidates: list[Any]) -> list[str]:
    return [c.record.id for c in candidates]


def forget(
    store: MemoryStore, record_id: str, tenant: str = "t1", agent: str = "a1", at: datetime = NOW
) -> bool:
    return store.soft_delete(
        tenant, agent, record_id, AuditEvent(tenant, agent, record_id, "forget", "test", at)
    )


def require(store: MemoryStore, method: str) -> None:
    """Retention and the dispatcher's primitives may not be in every adapter yet."""
    if not hasattr(store, method):
        pytest.skip(NOT_YET)


# ------------------------------------------------------------------------------------------------
# put / get
# ------------------------------------------------------------------------------------------------


def test_a_record_round_trips_every_field(store: MemoryStore) -> None:
    # GIVEN a record using every field, with microseconds in its times
    r = rec(
        "mem_full",
        occurred=datetime(2026, 11, 20, 14, 3, 7, 123456, tzinfo=UTC),
        user_id="u-7",
        role="user",
        conversation_id="c-42",
        topic="launch date",
        topic_raw="Launch Date",
        importance=0.8,
        kind=MemoryKind.DECISION,
        tags=["launch", "q1"],
        source=Source(platform="slack", channel_id="C1", message_id="m-9", url="https://x.test/m-9"),
        links=[Link(entity_type="person", entity_id="alice", weight=0.5)],
        metadata={"any": {"json": [1, 2.5, None, True, "x"]}},
        source_ids=["mem_a", "mem_b"],
        access_count=2,
        last_accessed_at=datetime(2026, 11, 21, 9, 0, 0, 1, tzinfo=UTC),
        expires_at=datetime(2027, 1, 1, tzinfo=UTC),
    )

    # WHEN it is stored and read back
    put(store, r)

    # THEN it is the same record
    assert store.get("t1", "a1", "mem_full") == r


def test_put_overwrites_by_id(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_x", content="first wording"))

    # WHEN
    put(store, rec("mem_x", content="second wording"), vector=vec(0.0, 1.0))

    # THEN
    got = store.get("t1", "a1", "mem_x")
    assert got is not None and got.content == "second wording"
    assert ids(store.search(query())) == ["mem_x"]
    found = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, vec(0.0, 1.0), NOW))
    assert found is not None and found[1] == pytest.approx(1.0, abs=1e-5)


def test_get_of_an_unknown_id_or_of_another_agent_is_none(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_x"))

    # WHEN / THEN
    assert store.get("t1", "a1", "mem_unknown") is None
    assert store.get("t1", "a2", "mem_x") is None
    assert store.get("t2", "a1", "mem_x") is None


def test_the_same_id_in_two_tenants_is_two_records(store: MemoryStore) -> None:
    # GIVEN
    put(
        store,
        rec("mem_same", tenant="t1", content="tenant one"),
        rec("mem_same", tenant="t2", content="tenant two"),
    )

    # WHEN / THEN
    assert forget(store, "mem_same", tenant="t1")

    one, two = store.get("t1", "a1", "mem_same"), store.get("t2", "a1", "mem_same")
    assert one is not None and one.deleted_at is not None
    assert two is not None and two.content == "tenant two" and two.deleted_at is None


def test_an_alias_resolves_to_its_record_for_its_agent_only(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_existing"))

    # WHEN
    store.add_alias("t1", "a1", "mem_merged", "mem_existing")

    # THEN
    got = store.get("t1", "a1", "mem_merged")
    assert got is not None and got.id == "mem_existing"
    assert store.get("t1", "a2", "mem_merged") is None


# ------------------------------------------------------------------------------------------------
# search: filters, windows, expiry, k-NN, lexical
# ------------------------------------------------------------------------------------------------


def test_search_never_crosses_tenants_or_agents(store: MemoryStore) -> None:
    # GIVEN the same words and vector stored for three different (tenant, agent) pairs
    words = "the quarterly launch moved to March"
    put(store, rec("mem_mine", content=words), rec("mem_other_agent", agent="a2", content=words))
    put(store, rec("mem_other_tenant", tenant="t2", content=words))

    # WHEN each kind of search runs for t1/a1
    by_vector = store.search(query(vector=vec(1.0)))
    by_words = store.search(query(text="launch March"))
    newest = store.search(query())
    near = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, vec(1.0), NOW))

    # THEN only t1/a1's record is ever seen
    assert ids(by_vector) == ids(by_words) == ids(newest) == ["mem_mine"]
    assert near is not None and near[0].id == "mem_mine"


def test_search_filters_grains_kinds_tags_and_user(store: MemoryStore) -> None:
    # GIVEN
    put(
        store,
        rec("mem_decision", kind=MemoryKind.DECISION, tags=["launch"], user_id="u-1"),
        rec("mem_task", kind=MemoryKind.TASK, tags=["ops", "launch"], user_id="u-2"),
        rec("mem_note", tags=["misc"]),
        summary("sum_day", Grain.DAILY, "2026-11-21"),
    )

    # WHEN / THEN
    assert set(ids(store.search(query(grains=(Grain.DAILY,))))) == {"sum_day"}
    assert set(ids(store.search(query(grains=(Grain.WORKING,))))) == {"mem_decision", "mem_task", "mem_note"}
    assert set(ids(store.search(query(kinds=(MemoryKind.DECISION, MemoryKind.TASK))))) == {
        "mem_decision",
        "mem_task",
    }
    assert set(ids(store.search(query(tags=("launch",))))) == {"mem_decision", "mem_task"}
    assert set(ids(store.search(query(tags=("ops", "misc"))))) == {"mem_task", "mem_note"}  # any of
    assert set(ids(store.search(query(user_id="u-2", vector=vec(1.0))))) == {"mem_task"}


def test_a_time_window_matches_records_whose_span_overlaps_it(store: MemoryStore) -> None:
    # GIVEN working records on the 10th and 20th, a daily summary of the 21st, a weekly of W47
    put(
        store,
        rec("mem_10th", occurred=datetime(2026, 11, 10, 9, tzinfo=UTC)),
        rec("mem_20th", occurred=datetime(2026, 11, 20, 9, tzinfo=UTC)),
        summary("sum_21st", Grain.DAILY, "2026-11-21"),
        summary("sum_w47", Grain.WEEKLY, "2026-W47"),  # Mon 16th .. Sun 22nd
    )

    def window(start: datetime | None, end: datetime | None) -> set[str]:
        return set(ids(store.search(query(start=start, end=end))))

    # WHEN / THEN a record matches when its span overlaps [start, end], ends included
    assert window(datetime(2026, 11, 20, 9, tzinfo=UTC), datetime(2026, 11, 21, 12, tzinfo=UTC)) == {
        "mem_20th",
        "sum_21st",
        "sum_w47",
    }
    assert window(None, datetime(2026, 11, 15, tzinfo=UTC)) == {"mem_10th"}
    assert window(datetime(2026, 11, 10, 9, tzinfo=UTC), datetime(2026, 11, 10, 9, tzinfo=UTC)) == {
        "mem_10th"
    }
    # a period is half-open: the 21st's summary does not reach midnight of the 22nd
    assert window(datetime(2026, 11, 22, tzinfo=UTC), None) == {"sum_w47"}
    assert window(datetime(2026, 11, 23, tzinfo=UTC), None) == set()


def test_expired_records_are_never_found(store: MemoryStore) -> None:
    # GIVEN
    put(
        store,
        rec("mem_expired", expires_at=NOW - timedelta(seconds=1)),
        rec("mem_expires_now", expires_at=NOW),
        rec("mem_expires_later", expires_at=NOW + timedelta(seconds=1)),
        rec("mem_forever"),
    )

    # WHEN / THEN
    assert set(ids(store.search(query()))) == {"mem_expires_later", "mem_forever"}
    assert set(ids(store.search(query(vector=vec(1.0), text="memory")))) == {
        "mem_expires_later",
        "mem_forever",
    }


def test_vector_hits_come_nearest_first_with_their_cosine(store: MemoryStore) -> None:
    # GIVEN records at known cosines to the query
    cosines = {"mem_far": -0.2, "mem_mid": 0.6, "mem_near": 0.9, "mem_low": 0.3}
    for record_id, cosine in cosines.items():
        put(store, rec(record_id), vector=at_cosine(cosine))

    # WHEN searching by vector only
    found = store.search(query(vector=vec(1.0), limit=3))

    # THEN the nearest three, in order, each with its cosine, and no lexical evidence
    assert ids(found) == ["mem_near", "mem_mid", "mem_low"]
    assert [c.similarity for c in found] == pytest.approx([0.9, 0.6, 0.3], abs=1e-5)
    assert all(c.lexical is None for c in found)


def test_lexical_hits_are_merged_and_every_candidate_has_its_cosine(store: MemoryStore) -> None:
    # GIVEN one record found by words only (its vector is far), one by vector only, one by both
    put(store, rec("mem_words", content="the zeppelin arrives on Tuesday"), vector=at_cosine(-0.5))
    put(store, rec("mem_vector", content="unrelated text"), vector=at_cosine(0.95))
    put(store, rec("mem_both", content="a zeppelin was seen"), vector=at_cosine(0.7))

    # WHEN searching with both a vector and text, asking for two hits per signal
    listed = store.search(query(vector=vec(1.0), text="zeppelin Tuesday", limit=2))
    found = {c.record.id: c for c in listed}

    # THEN the lexical-only hit is there too, with its cosine computed all the same
    assert set(found) == {"mem_words", "mem_vector", "mem_both"}
    assert found["mem_words"].similarity == pytest.approx(-0.5, abs=1e-5)
    assert found["mem_words"].lexical == pytest.approx(1.0)  # the best lexical hit scores 1.0
    assert 0.0 < (found["mem_both"].lexical or 0.0) < 1.0
    assert found["mem_vector"].lexical is None
    # vector hits first, in vector order, then the lexical-only hit (recall/rules/ranking.py, *Fusion*)
    assert [c.record.id for c in listed] == ["mem_vector", "mem_both", "mem_words"]


def test_lexical_search_also_reads_the_topic(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_topic", content="we agreed on March", topic="launch date"), rec("mem_other"))

    # WHEN / THEN
    assert ids(store.search(query(text="launch"))) == ["mem_topic"]


def test_a_records_texts_are_scored_as_one_text(store: MemoryStore) -> None:
    # GIVEN two records of twelve words each: one says "harbor" in its content and again in its
    # context, the other says it once, in a one-word content
    put(
        store,
        rec(
            "mem_twice",
            content="harbor alpha bravo charlie delta echo",
            context="harbor foxtrot golf hotel india juliet",
        ),
        rec(
            "mem_once",
            content="harbor",
            context="alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo",
        ),
    )

    # WHEN searching for the word
    found = store.search(query(text="harbor"))

    # THEN the record that says it twice in as many words ranks first, as BM25 over the record's
    # texts as one text ranks it (scored field by field, the short content would win)
    assert ids(found) == ["mem_twice", "mem_once"]
    assert found[0].lexical == pytest.approx(1.0)
    assert 0.0 < (found[1].lexical or 0.0) < 1.0


def test_without_vector_or_words_the_newest_live_records_come_first(store: MemoryStore) -> None:
    # GIVEN
    put(store, *(rec(f"mem_{i}", occurred=NOW - timedelta(hours=i)) for i in range(1, 6)))
    forget(store, "mem_1")

    # WHEN
    found = store.search(query(text=" ?! ", limit=3))

    # THEN
    assert ids(found) == ["mem_2", "mem_3", "mem_4"]
    assert all(c.similarity is None and c.lexical is None for c in found)


# ------------------------------------------------------------------------------------------------
# nearest (dedup on write)
# ------------------------------------------------------------------------------------------------


def test_nearest_is_the_closest_live_record_of_the_grain(store: MemoryStore) -> None:
    # GIVEN a good match, a better match that is forgotten, one of another grain, one expired
    put(store, rec("mem_good"), vector=at_cosine(0.93))
    put(store, rec("mem_forgotten"), rec("mem_expired", expires_at=NOW), vector=at_cosine(0.99))
    put(store, summary("sum_daily", Grain.DAILY, "2026-11-21"), vector=vec(1.0))
    put(store, rec("mem_other_agent", agent="a2"), vector=vec(1.0))
    forget(store, "mem_forgotten")

    # WHEN the working record nearest to vec(1) is asked for
    found = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, vec(1.0), NOW))

    # THEN it is the good match, at its cosine; an agent with no records has none
    assert found is not None
    assert found[0].id == "mem_good"
    assert found[1] == pytest.approx(0.93, abs=1e-5)
    assert store.nearest(NearestQuery("t1", "a3", Grain.WORKING, vec(1.0), NOW)) is None


# ------------------------------------------------------------------------------------------------
# soft delete and access counting
# ------------------------------------------------------------------------------------------------


def test_a_forgotten_record_is_gone_from_every_read_but_get(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_keep", occurred=NOW - 2 * DAY), rec("mem_forget", content="forget this secret"))

    # WHEN / THEN
    assert forget(store, "mem_forget") is True
    assert forget(store, "mem_forget") is False  # already forgotten

    assert ids(store.search(query(vector=vec(1.0), text="secret"))) == ["mem_keep"]
    assert [r.id for r in store.list(ListQuery("t1", "a1", NOW)).records] == ["mem_keep"]
    assert store.stats("t1", "a1", NOW).records == {"working": 1}
    near = store.nearest(NearestQuery("t1", "a1", Grain.WORKING, vec(1.0), NOW))
    assert near is not None and near[0].id == "mem_keep"
    got = store.get("t1", "a1", "mem_forget")
    assert got is not None and got.deleted_at == NOW


def test_forgetting_what_is_not_live_or_not_yours_changes_nothing(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_expired", expires_at=NOW - DAY), rec("mem_theirs", agent="a2"))

    # WHEN / THEN
    assert forget(store, "mem_unknown") is False
    assert forget(store, "mem_expired") is False
    assert forget(store, "mem_theirs") is False  # asked as t1/a1
    theirs = store.get("t1", "a2", "mem_theirs")
    assert theirs is not None and theirs.deleted_at is None


def test_forgetting_by_alias_forgets_the_record(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_existing"))
    store.add_alias("t1", "a1", "mem_merged", "mem_existing")

    # WHEN / THEN
    assert forget(store, "mem_merged") is True

    got = store.get("t1", "a1", "mem_existing")
    assert got is not None and got.deleted_at == NOW


def test_record_access_counts_and_keeps_the_latest_time(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_a"), rec("mem_b"))
    later, earlier = NOW + timedelta(hours=1), NOW

    # WHEN
    store.record_access("t1", "a1", ["mem_a", "mem_b"], later)
    store.record_access("t1", "a1", ["mem_a", "mem_unknown"], earlier)
    store.record_access("t1", "a2", ["mem_a"], later)  # not that agent's record

    # THEN
    a, b = store.get("t1", "a1", "mem_a"), store.get("t1", "a1", "mem_b")
    assert a is not None and (a.access_count, a.last_accessed_at) == (2, later)
    assert b is not None and (b.access_count, b.last_accessed_at) == (1, later)


# ------------------------------------------------------------------------------------------------
# list and stats
# ------------------------------------------------------------------------------------------------


def test_list_pages_newest_first_without_gaps_or_repeats(store: MemoryStore) -> None:
    # GIVEN
    put(store, *(rec(f"mem_{i}", occurred=NOW - timedelta(hours=i)) for i in range(5)))
    put(store, rec("mem_tie_a", occurred=NOW - timedelta(hours=2)))  # same time as mem_2: id breaks the tie
    put(store, summary("sum_day", Grain.DAILY, "2026-11-21"))

    # WHEN
    pages, cursor = [], None
    while True:
        page = store.list(ListQuery("t1", "a1", NOW, grain=Grain.WORKING, limit=2, cursor=cursor))
        pages.append([r.id for r in page.records])
        cursor = page.next_cursor
        if cursor is None:
            break

    # THEN
    assert pages == [["mem_0", "mem_1"], ["mem_tie_a", "mem_2"], ["mem_3", "mem_4"]]


def test_a_list_cursor_only_works_for_its_agent_and_filter(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("mem_1", occurred=NOW - DAY), rec("mem_2", occurred=NOW - 2 * DAY))
    # WHEN
    cursor = store.list(ListQuery("t1", "a1", NOW, limit=1)).next_cursor
    # THEN
    assert cursor is not None

    with pytest.raises(ValidationFailedError):
        store.list(ListQuery("t1", "a2", NOW, limit=1, cursor=cursor))
    with pytest.raises(ValidationFailedError):
        store.list(ListQuery("t2", "a1", NOW, limit=1, cursor=cursor))
    with pytest.raises(ValidationFailedError):
        store.list(ListQuery("t1", "a1", NOW, limit=1, cursor="not-a-cursor"))
    assert [r.id for r in store.list(ListQuery("t1", "a1", NOW, limit=1, cursor=cursor)).records] == ["mem_2"]


def test_stats_count_live_records_per_grain(store: MemoryStore) -> None:
    # GIVEN
    oldest, newest = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2026, 11, 21, 8, tzinfo=UTC)
    put(store, rec("mem_old", occurred=oldest), rec("mem_new", occurred=newest))
    put(store, rec("mem_older_but_forgotten", occurred=oldest - DAY), rec("mem_expired", expires_at=NOW))
    put(store, summary("sum_day", Grain.DAILY, "2026-11-20"), rec("mem_other", agent="a2"))
    forget(store, "mem_older_but_forgotten")

    # WHEN
    stats = store.stats("t1", "a1", NOW)

    # THEN
    assert stats.records == {"working": 2, "daily": 1}
    assert (stats.oldest, stats.newest) == (oldest, newest)
    empty = store.stats("t1", "nobody", NOW)
    assert (empty.records, empty.oldest, empty.newest) == ({}, None, None)


# ------------------------------------------------------------------------------------------------
# retention: delete by cutoff
# ------------------------------------------------------------------------------------------------


#: The cutoff the retention tests delete and read before.
CUTOFF = datetime(2026, 11, 10, tzinfo=UTC)


def put_records_around_the_cutoff(store: MemoryStore, *extra: MemoryRecord) -> None:
    """Working records of t1's agents a1 and a2 before, at and after `CUTOFF` (``mem_a2_forgotten``
    forgotten), one of tenant t2 before it, a daily summary of t1 from before it, and ``extra``."""
    put(
        store,
        rec("mem_a1_old", occurred=CUTOFF - DAY),
        rec("mem_a2_old", agent="a2", occurred=CUTOFF - timedelta(seconds=1)),
        rec("mem_a2_forgotten", agent="a2", occurred=CUTOFF - 2 * DAY),
        rec("mem_at_cutoff", occurred=CUTOFF),
        rec("mem_new", occurred=CUTOFF + DAY),
        rec("mem_other_tenant", tenant="t2", occurred=CUTOFF - DAY),
        summary("sum_old_day", Grain.DAILY, "2026-11-01"),
        *extra,
    )
    forget(store, "mem_a2_forgotten", agent="a2")


def test_delete_older_than_removes_the_tenants_records_that_ended_before_the_cutoff(
    store: MemoryStore,
) -> None:
    require(store, "delete_older_than")
    cutoff = CUTOFF
    # GIVEN working records of two agents before, at and after the cutoff, one of them forgotten
    put_records_around_the_cutoff(store)

    # WHEN retention runs for t1's working memory, twice
    deleted = store.delete_older_than("t1", Grain.WORKING, cutoff)  # type: ignore[attr-defined]
    again = store.delete_older_than("t1", Grain.WORKING, cutoff)  # type: ignore[attr-defined]

    # THEN the old ones are gone for good, forgotten ones included; nothing else moved
    assert (deleted, again) == (3, 0)
    for agent, record_id in [("a1", "mem_a1_old"), ("a2", "mem_a2_old"), ("a2", "mem_a2_forgotten")]:
        assert store.get("t1", agent, record_id) is None
    assert store.get("t1", "a1", "mem_at_cutoff") is not None
    assert store.get("t1", "a1", "mem_new") is not None
    assert store.get("t2", "a1", "mem_other_tenant") is not None
    assert store.get("t1", "a1", "sum_old_day") is not None


def test_a_summary_is_older_than_the_cutoff_when_its_period_ended_by_then(store: MemoryStore) -> None:
    # GIVEN
    require(store, "delete_older_than")
    put(store, summary("sum_9th", Grain.DAILY, "2026-11-09"), summary("sum_10th", Grain.DAILY, "2026-11-10"))

    # WHEN / THEN
    # the 9th's period [9th, 10th) has ended at midnight of the 10th; the 10th's has not
    assert store.delete_older_than("t1", Grain.DAILY, datetime(2026, 11, 10, tzinfo=UTC)) == 1  # type: ignore[attr-defined]

    assert store.get("t1", "a1", "sum_9th") is None
    assert store.get("t1", "a1", "sum_10th") is not None


# ------------------------------------------------------------------------------------------------
# the dispatcher: agents with records in a period
# ------------------------------------------------------------------------------------------------


def test_agents_with_records_lists_each_agent_with_live_records_of_the_grain_in_the_period(
    store: MemoryStore,
) -> None:
    require(store, "agents_with_records")
    # GIVEN daily summaries around the week of the 16th to the 22nd
    put(
        store,
        summary("sum_a", Grain.DAILY, "2026-11-16", tenant="t1", agent="a1"),
        summary("sum_b", Grain.DAILY, "2026-11-22", tenant="t1", agent="a2"),
        summary("sum_b2", Grain.DAILY, "2026-11-20", tenant="t1", agent="a2"),
        summary("sum_c", Grain.DAILY, "2026-11-18", tenant="t2", agent="a1"),
        summary("sum_before", Grain.DAILY, "2026-11-15", tenant="t3", agent="a1"),  # ends at the start
        summary("sum_after", Grain.DAILY, "2026-11-23", tenant="t3", agent="a2"),  # starts at the end
        summary("sum_forgotten", Grain.DAILY, "2026-11-18", tenant="t3", agent="a3"),
        rec("mem_working", tenant="t3", agent="a4", occurred=datetime(2026, 11, 18, tzinfo=UTC)),
    )
    forget(store, "sum_forgotten", tenant="t3", agent="a3")

    # WHEN the weekly dispatcher asks for [Mon 16th, Mon 23rd)
    page = store.agents_with_records(
        PeriodScan(  # type: ignore[attr-defined]
            Grain.DAILY, datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)
        )
    )

    # THEN each agent once, and only those
    assert sorted((a.tenant_id, a.agent_id) for a in page.agents) == [
        ("t1", "a1"),
        ("t1", "a2"),
        ("t2", "a1"),
    ]
    assert page.next_cursor is None


def test_agents_with_records_pages_through_every_agent_once(store: MemoryStore) -> None:
    # GIVEN
    require(store, "agents_with_records")
    expected = {(f"t{i % 2}", f"a{i}") for i in range(5)}
    for tenant, agent in expected:
        put(
            store,
            rec(f"mem_{agent}", tenant=tenant, agent=agent, occurred=datetime(2026, 11, 18, tzinfo=UTC)),
        )
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)

    seen: list[tuple[str, str]] = []
    cursor = None
    # WHEN / THEN
    for _ in range(10):
        page = store.agents_with_records(PeriodScan(Grain.WORKING, start, end, cursor=cursor, page_size=2))  # type: ignore[attr-defined]
        assert len(page.agents) <= 2
        seen += [(a.tenant_id, a.agent_id) for a in page.agents]
        cursor = page.next_cursor
        if cursor is None:
            break

    assert sorted(seen) == sorted(expected)  # every agent, none twice


def test_agents_with_records_of_one_tenant_never_names_another(store: MemoryStore) -> None:
    # GIVEN agents of two tenants with records in the week, more than a page of the first
    require(store, "agents_with_records")
    agents = {("t1", "a1"), ("t1", "a2"), ("t1", "a3"), ("t2", "a1"), ("t2", "a9")}
    for tenant, agent in agents:
        put(
            store,
            rec(
                f"mem_{tenant}_{agent}",
                tenant=tenant,
                agent=agent,
                occurred=datetime(2026, 11, 18, tzinfo=UTC),
            ),
        )
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)
    # WHEN t1's agents are asked for, a page of two at a time
    seen: list[tuple[str, str]] = []
    cursor = None
    for _ in range(10):
        page = store.agents_with_records(  # type: ignore[attr-defined]
            PeriodScan(Grain.WORKING, start, end, cursor=cursor, page_size=2, tenant_id="t1")
        )
        seen += [(a.tenant_id, a.agent_id) for a in page.agents]
        cursor = page.next_cursor
        if cursor is None:
            break
    # THEN t1's agents, each once, and none of t2's
    assert sorted(seen) == [("t1", "a1"), ("t1", "a2"), ("t1", "a3")]


# ------------------------------------------------------------------------------------------------
# the summarizer: one period's records, completely
# ------------------------------------------------------------------------------------------------


def test_records_in_span_are_the_live_records_of_the_grain_in_the_period_oldest_first(
    store: MemoryStore,
) -> None:
    require(store, "records_in_span")
    day = datetime(2026, 11, 20, tzinfo=UTC)
    # GIVEN working records at the edges of the 20th, one forgotten, one expired, one of a neighbour
    put(
        store,
        rec("mem_before", occurred=day - timedelta(seconds=1)),  # the 19th
        rec("mem_first", occurred=day),  # the first instant of the 20th
        rec("mem_b_noon", occurred=day + timedelta(hours=12)),
        rec("mem_a_noon", occurred=day + timedelta(hours=12)),  # same instant: ordered by id
        rec("mem_last", occurred=day + DAY - timedelta(seconds=1)),
        rec("mem_next", occurred=day + DAY),  # the first instant of the 21st
        rec("mem_forgotten", occurred=day + timedelta(hours=1)),
        rec("mem_expired", occurred=day + timedelta(hours=2), expires_at=NOW - timedelta(seconds=1)),
        rec("mem_other_agent", agent="a2", occurred=day + timedelta(hours=3)),
        rec("mem_other_tenant", tenant="t2", occurred=day + timedelta(hours=3)),
        summary("sum_day", Grain.DAILY, "2026-11-20"),
    )
    forget(store, "mem_forgotten")

    # WHEN the summarizer loads the 20th's working memory
    found = store.records_in_span("t1", "a1", Grain.WORKING, day, day + DAY, NOW)  # type: ignore[attr-defined]

    # THEN exactly the live working records of [20th, 21st), by time then id, every field intact
    assert [r.id for r in found] == ["mem_first", "mem_a_noon", "mem_b_noon", "mem_last"]
    assert found[0] == store.get("t1", "a1", "mem_first")


def test_records_in_span_of_summaries_are_those_whose_period_overlaps(store: MemoryStore) -> None:
    require(store, "records_in_span")
    # GIVEN the daily summaries of a week and of the days around it
    keys = [f"2026-11-{d:02d}" for d in range(15, 25)]
    put(store, *(summary(f"sum_{k}", Grain.DAILY, k) for k in keys))

    # WHEN the week [Mon 16th, Mon 23rd) is read
    found = store.records_in_span(  # type: ignore[attr-defined]
        "t1", "a1", Grain.DAILY, datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC), NOW
    )

    # THEN its seven days, not the 15th (which ends where the week starts) nor the 23rd
    assert [r.time_key for r in found] == keys[1:8]


def test_records_in_span_has_no_limit(store: MemoryStore) -> None:
    # GIVEN
    require(store, "records_in_span")
    day = datetime(2026, 11, 20, tzinfo=UTC)
    put(store, *(rec(f"mem_{i:04d}", occurred=day + timedelta(seconds=i)) for i in range(1200)))

    # WHEN
    found = store.records_in_span("t1", "a1", Grain.WORKING, day, day + DAY, NOW)  # type: ignore[attr-defined]

    # THEN
    assert [r.id for r in found] == [f"mem_{i:04d}" for i in range(1200)]


# ================================================================================================
# Retention primitives: candidates past a cutoff, deletes by id, purge
# (what the daily retention run reads and deletes with; `delete_older_than` and
# `agents_with_records` are above)
# ================================================================================================


def all_candidates(
    store: MemoryStore, tenant: str, grain: Grain, cutoff: datetime, limit: int = 1000
) -> list[Any]:
    """Every page of `retention_candidates`, checking each page's size on the way."""
    out: list[Any] = []
    cursor = None
    for _ in range(100):
        page = store.retention_candidates(tenant, grain, cutoff, cursor=cursor, limit=limit)  # type: ignore[attr-defined]
        assert len(page.records) <= limit
        out += page.records
        cursor = page.next_cursor
        if cursor is None:
            return out
    raise AssertionError("retention_candidates never ended")


def test_retention_candidates_are_the_tenants_grain_records_that_ended_before_the_cutoff(
    store: MemoryStore,
) -> None:
    require(store, "retention_candidates")
    cutoff = CUTOFF
    # GIVEN working records of two agents around the cutoff, one forgotten, one expired
    expired = rec("mem_expired", occurred=cutoff - 3 * DAY, expires_at=cutoff - 2 * DAY)
    put_records_around_the_cutoff(store, expired)

    # WHEN retention reads t1's working memory past the cutoff
    found = all_candidates(store, "t1", Grain.WORKING, cutoff)

    # THEN every agent's, forgotten and expired ones included, oldest span end first
    assert [(r.agent_id, r.id) for r in found] == [
        ("a1", "mem_expired"),
        ("a2", "mem_a2_forgotten"),
        ("a1", "mem_a1_old"),
        ("a2", "mem_a2_old"),
    ]
    assert found[1].deleted_at == NOW
    assert found[2] == store.get("t1", "a1", "mem_a1_old")  # whole records, every field


def test_a_summary_is_a_retention_candidate_once_its_period_ended_by_the_cutoff(store: MemoryStore) -> None:
    # GIVEN
    require(store, "retention_candidates")
    put(store, summary("sum_9th", Grain.DAILY, "2026-11-09"), summary("sum_10th", Grain.DAILY, "2026-11-10"))

    # WHEN
    found = all_candidates(store, "t1", Grain.DAILY, datetime(2026, 11, 10, tzinfo=UTC))

    # THEN
    assert [r.id for r in found] == ["sum_9th"]
    assert all_candidates(store, "t1", Grain.WEEKLY, datetime(2026, 12, 1, tzinfo=UTC)) == []


def test_retention_candidates_page_through_every_record_once_by_span_end(store: MemoryStore) -> None:
    require(store, "retention_candidates")
    cutoff = datetime(2026, 11, 10, tzinfo=UTC)
    # GIVEN nine old records of three agents, two pairs of them at the same instant
    expected = set()
    for i in range(9):
        agent = f"a{i % 3}"
        put(store, rec(f"mem_{i}", agent=agent, occurred=cutoff - timedelta(hours=10 - i // 2)))
        expected.add((agent, f"mem_{i}"))

    # WHEN read two at a time
    found = all_candidates(store, "t1", Grain.WORKING, cutoff, limit=2)

    # THEN each record once, in span-end order across pages
    assert len(found) == 9
    assert {(r.agent_id, r.id) for r in found} == expected
    assert [r.occurred_at for r in found] == sorted(r.occurred_at for r in found)


def test_retention_candidates_walk_past_what_is_kept_and_behind_what_is_deleted(store: MemoryStore) -> None:
    require(store, "retention_candidates")
    require(store, "delete_records")
    cutoff = datetime(2026, 11, 10, tzinfo=UTC)
    put(store, *(rec(f"mem_{i}", occurred=cutoff - timedelta(hours=10 - i)) for i in range(6)))

    # WHEN retention reads pages of two and deletes the first record of each page, as it goes
    seen: list[str] = []
    cursor = None
    while True:
        page = store.retention_candidates("t1", Grain.WORKING, cutoff, cursor=cursor, limit=2)  # type: ignore[attr-defined]
        seen += [r.id for r in page.records]
        if page.records:
            store.delete_records("t1", "a1", [page.records[0].id])  # type: ignore[attr-defined]
        cursor = page.next_cursor
        if cursor is None:
            break

    # THEN the walk saw every record once, and a new walk finds only the kept ones
    assert seen == [f"mem_{i}" for i in range(6)]
    assert [r.id for r in all_candidates(store, "t1", Grain.WORKING, cutoff)] == ["mem_1", "mem_3", "mem_5"]


def test_delete_records_removes_only_the_named_records_of_the_agent_once(store: MemoryStore) -> None:
    require(store, "delete_records")
    # GIVEN the same ids in another agent and another tenant, and a forgotten record
    put(
        store,
        rec("mem_1"),
        rec("mem_2"),
        rec("mem_3"),
        rec("mem_1", agent="a2"),
        rec("mem_1", tenant="t2"),
    )
    forget(store, "mem_3")

    # WHEN two ids (one given twice, one unknown) are deleted, twice
    ids = ["mem_1", "mem_3", "mem_1", "mem_unknown"]
    deleted = store.delete_records("t1", "a1", ids)  # type: ignore[attr-defined]
    again = store.delete_records("t1", "a1", ids)  # type: ignore[attr-defined]

    # THEN those two are gone for good (forgotten ones too); nothing else moved
    assert (deleted, again) == (2, 0)
    assert store.get("t1", "a1", "mem_1") is None
    assert store.get("t1", "a1", "mem_3") is None
    assert store.get("t1", "a1", "mem_2") is not None
    assert store.get("t1", "a2", "mem_1") is not None
    assert store.get("t2", "a1", "mem_1") is not None
    assert store.delete_records("t1", "a1", []) == 0  # type: ignore[attr-defined]


def test_a_deleted_record_is_not_found_through_its_alias_either(store: MemoryStore) -> None:
    # GIVEN
    require(store, "delete_records")
    put(store, rec("mem_1"))
    store.add_alias("t1", "a1", "mem_merged", "mem_1")

    # WHEN
    store.delete_records("t1", "a1", ["mem_1"])  # type: ignore[attr-defined]

    # THEN
    assert store.get("t1", "a1", "mem_merged") is None
    assert forget(store, "mem_merged") is False


def test_delete_records_takes_more_than_one_batch(store: MemoryStore) -> None:
    # GIVEN
    require(store, "delete_records")
    put(store, *(rec(f"mem_{i:04d}", occurred=NOW - timedelta(seconds=i)) for i in range(1200)))

    # WHEN
    deleted = store.delete_records("t1", "a1", [f"mem_{i:04d}" for i in range(1100)])  # type: ignore[attr-defined]

    # THEN
    assert deleted == 1100
    assert store.stats("t1", "a1", NOW).records == {"working": 100}


def test_purge_removes_the_tenants_expired_and_long_forgotten_records(store: MemoryStore) -> None:
    require(store, "purge")
    grace_end = NOW - 7 * DAY
    old = NOW - 30 * DAY
    # GIVEN records expired at, before and after now, and records forgotten before, at and after
    # the end of the grace period, in two agents of t1 and in t2
    put(
        store,
        rec("mem_live"),
        rec("mem_expires_now", expires_at=NOW),
        rec("mem_expires_later", expires_at=NOW + timedelta(seconds=1)),
        rec("mem_expired_long_ago", occurred=old, expires_at=old + DAY),
        rec("mem_a2_expired", agent="a2", expires_at=NOW - DAY),
        rec("mem_forgotten_long_ago", occurred=old),
        rec("mem_forgotten_at_grace_end", occurred=old),
        rec("mem_forgotten_lately", occurred=old),
        rec("mem_other_tenant", tenant="t2", expires_at=NOW - DAY),
        summary("sum_day", Grain.DAILY, "2026-11-01", expires_at=NOW - DAY),
    )
    assert forget(store, "mem_forgotten_long_ago", at=grace_end - timedelta(seconds=1))
    assert forget(store, "mem_forgotten_at_grace_end", at=grace_end)
    assert forget(store, "mem_forgotten_lately", at=NOW - DAY)

    # WHEN t1 is purged at NOW with a 7-day grace period, twice
    purged = store.purge("t1", NOW, grace_end)  # type: ignore[attr-defined]
    again = store.purge("t1", NOW, grace_end)  # type: ignore[attr-defined]

    # THEN expired (at now included) and forgotten before the grace end are gone, of every agent
    assert (purged, again) == (5, 0)
    gone = ["mem_expires_now", "mem_expired_long_ago", "mem_forgotten_long_ago", "sum_day"]
    for record_id in gone:
        assert store.get("t1", "a1", record_id) is None, record_id
    assert store.get("t1", "a2", "mem_a2_expired") is None
    kept = ["mem_live", "mem_expires_later", "mem_forgotten_at_grace_end", "mem_forgotten_lately"]
    for record_id in kept:
        assert store.get("t1", "a1", record_id) is not None, record_id
    assert store.get("t2", "a1", "mem_other_tenant") is not None


def test_summaries_of_a_user_are_the_live_summaries_naming_them(store: MemoryStore) -> None:
    # GIVEN summaries naming end users, a working memory of that user, and other agents' summaries
    both = summary("s1", Grain.DAILY, "2026-11-20", user_ids=["u1", "u2"])
    other = summary("s2", Grain.DAILY, "2026-11-19", user_ids=["u2"])
    weekly = summary("s3", Grain.WEEKLY, "2026-W47", user_ids=["u1"])
    gone = summary("s4", Grain.DAILY, "2026-11-18", user_ids=["u1"], deleted_at=NOW - DAY)
    elsewhere = summary("s5", Grain.DAILY, "2026-11-20", agent="a2", user_ids=["u1"])
    put(store, both, other, weekly, gone, elsewhere, rec("w1", user_id="u1"))
    # WHEN the user's summaries are asked for THEN the live ones of this agent, at every grain
    found = store.summaries_of_user("t1", "a1", "u1", NOW)
    assert sorted(r.id for r in found) == ["s1", "s3"]
    assert [r.user_ids for r in sorted(found, key=lambda r: r.id)] == [["u1", "u2"], ["u1"]]
    assert store.summaries_of_user("t2", "a1", "u1", NOW) == []


def test_merge_history_round_trips(store: MemoryStore) -> None:
    # GIVEN
    from agent_memory.model.records import MergedWrite

    history = [
        MergedWrite(id="m1", content="first wording", occurred_at=NOW - DAY, created_at=NOW - DAY),
        MergedWrite(id="m2", content="second wording", occurred_at=NOW - DAY / 2, created_at=NOW - DAY / 2),
    ]
    put(store, rec("m1", content="second wording", merged_from=history, last_seen_at=NOW - DAY / 2))
    got = store.get("t1", "a1", "m1")
    # WHEN / THEN
    assert got is not None and got.merged_from == history and got.last_seen_at == NOW - DAY / 2


def test_a_forgotten_memorys_content_is_gone_from_the_stores_reads(store: MemoryStore) -> None:
    """Right to erasure: a forget leaves a tombstone (its id, its times), not the words."""
    # GIVEN a memory and a summary made from it, both holding its words
    words = "Quillon locker combination 8842-marigold"
    put(store, rec("mem_secret", content=f"{words}.", context=f"said before: {words}"), rec("mem_kept"))
    put(store, summary("s1", Grain.DAILY, "2026-11-20", content=f"The day: {words}."))

    # WHEN the memory is forgotten and the summary marked stale
    assert forget(store, "mem_secret")
    stale = AuditEvent("t1", "a1", "s1", AuditAction.STALE, "test", NOW, {"because": "mem_secret"})
    assert store.mark_stale("t1", "a1", "s1", stale)

    # THEN neither read holds the words any more; the tombstones are still there, and so is the rest
    for record_id in ("mem_secret", "s1"):
        gone = store.get("t1", "a1", record_id)
        assert gone is not None and gone.deleted_at is not None, record_id
        assert "8842" not in gone.model_dump_json(), record_id
    kept = store.get("t1", "a1", "mem_kept")
    assert kept is not None and kept.deleted_at is None
