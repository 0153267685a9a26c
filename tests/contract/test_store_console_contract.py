"""The `MemoryStore` contract for what the operator console reads: the tenant's agents, counts
per period, and search outcomes per day."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from tests.contract.test_store_contract import DAY, NOW, forget, put, rec, summary

from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import MemoryStore

HOUR = timedelta(hours=1)


def test_list_agents_names_the_tenants_agents_with_live_records_once_each_in_pages(
    store: MemoryStore,
) -> None:
    # GIVEN agents of t1 (one with two records, one whose only record is forgotten, one whose
    # only record expired) and an agent of another tenant
    put(store, rec("m1", agent="b-agent"), rec("m2", agent="b-agent"), rec("m3", agent="a-agent"))
    put(store, rec("m4", agent="c-agent"), rec("m5", agent="d-agent", expires_at=NOW - HOUR))
    put(store, rec("m6", agent="e-agent"), rec("x1", tenant="t2", agent="z-agent"))
    forget(store, "m4", agent="c-agent")

    # WHEN they are listed two at a time
    first = store.list_agents("t1", NOW, limit=2)
    second = store.list_agents("t1", NOW, cursor=first.next_cursor, limit=2)

    # THEN each live agent comes once, by id, and only t1's
    assert [a.agent_id for a in first.agents] == ["a-agent", "b-agent"]
    assert first.next_cursor is not None
    assert [(a.tenant_id, a.agent_id) for a in second.agents] == [("t1", "e-agent")]
    assert second.next_cursor is None or store.list_agents("t1", NOW, cursor=second.next_cursor).agents == []
    assert [a.agent_id for a in store.list_agents("t2", NOW).agents] == ["z-agent"]


def test_a_list_agents_cursor_only_works_for_its_tenant(store: MemoryStore) -> None:
    # GIVEN
    put(store, rec("m1", agent="a1"), rec("m2", agent="a2"))
    # WHEN
    page = store.list_agents("t1", NOW, limit=1)
    # THEN
    assert page.next_cursor is not None
    with pytest.raises(ValidationFailedError):
        store.list_agents("t2", NOW, cursor=page.next_cursor)


def test_histogram_counts_live_records_of_the_grain_in_each_half_open_bin(store: MemoryStore) -> None:
    # GIVEN
    start = datetime(2026, 11, 18, tzinfo=UTC)
    edges = [start + i * DAY for i in range(4)]  # 18th, 19th, 20th, up to the 21st
    put(
        store,
        rec("m1", occurred=start),  # first instant of the first bin
        rec("m2", occurred=start + 5 * HOUR),
        rec("m3", occurred=start + DAY - timedelta(seconds=1)),
        rec("m4", occurred=start + 2 * DAY),  # first instant of the third bin
        rec("m5", occurred=start + 3 * DAY),  # the last edge is excluded
        rec("m6", occurred=start - timedelta(seconds=1)),  # before the first edge
        rec("m7", occurred=start + 2 * DAY + HOUR),
        rec("m8", occurred=start + HOUR, agent="a2"),
        rec("m9", occurred=start + HOUR, expires_at=NOW - HOUR),
        rec("m10", occurred=start + HOUR),
    )
    put(store, summary("s1", Grain.DAILY, "2026-11-18"))
    # WHEN
    forget(store, "m10")

    # THEN
    assert store.histogram("t1", "a1", Grain.WORKING, edges, NOW) == [3, 0, 2]
    assert store.histogram("t1", "a1", Grain.DAILY, edges, NOW) == [1, 0, 0]
    assert store.histogram("t1", "nobody", Grain.WORKING, edges, NOW) == [0, 0, 0]
    assert store.histogram("t1", "a1", Grain.WORKING, edges[:1], NOW) == []


def test_histogram_edges_must_ascend(store: MemoryStore) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        store.histogram("t1", "a1", Grain.WORKING, [NOW, NOW - DAY], NOW)


def test_searches_are_counted_per_utc_day_with_those_that_found_nothing(store: MemoryStore) -> None:
    # GIVEN
    late = datetime(2026, 11, 20, 23, 59, 59, tzinfo=UTC)
    store.record_search("t1", "a1", late, hits=3)
    store.record_search("t1", "a1", late, hits=0)
    store.record_search("t1", "a1", late + timedelta(seconds=1), hits=0)  # the 21st
    store.record_search("t1", "a1", late - 3 * DAY, hits=1)  # the 17th
    store.record_search("t1", "a2", late, hits=0)
    store.record_search("t2", "a1", late, hits=0)

    # WHEN
    days = store.search_days("t1", "a1", since=date(2026, 11, 18))

    # THEN
    assert [(d.day, d.searches, d.zero_hits) for d in days] == [
        (date(2026, 11, 20), 2, 1),
        (date(2026, 11, 21), 1, 1),
    ]
    earlier = store.search_days("t1", "a1", since=date(2026, 11, 1))
    assert [d.day for d in earlier] == [date(2026, 11, 17), date(2026, 11, 20), date(2026, 11, 21)]
    assert store.search_days("t1", "a3", since=date(2026, 11, 1)) == []
