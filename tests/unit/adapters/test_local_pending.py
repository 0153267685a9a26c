"""Pending-write marks in SQLite: exact counts under retries and redeliveries."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_memory.adapters.local_pending import LocalPendingWrites

T0 = 1_795_000_000.0


class SteppingClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def pending(tmp_path: Path, tick: SteppingClock) -> LocalPendingWrites:
    return LocalPendingWrites(tmp_path / "pending.db", ttl_days=14, clock=tick)


def test_marks_are_counted_per_agent_and_adding_twice_counts_once(pending: LocalPendingWrites) -> None:
    # GIVEN writes accepted for two agents of one tenant and one agent of another, one retried
    pending.add("t1", "a1", ["mem_1", "mem_2"])
    pending.add("t1", "a1", ["mem_2", "mem_3", "mem_3"])
    pending.add("t1", "a2", ["mem_1"])
    pending.add("t2", "a1", ["mem_9"])

    # THEN each agent counts its own distinct records
    assert pending.count("t1", "a1") == 3
    assert pending.count("t1", "a2") == 1
    assert pending.count("t2", "a1") == 1
    assert pending.count("t2", "a2") == 0


def test_done_is_idempotent_and_touches_only_its_agent(pending: LocalPendingWrites) -> None:
    # GIVEN marks for two agents holding the same record id
    pending.add("t", "a", ["mem_1", "mem_2"])
    pending.add("t", "b", ["mem_1"])

    # WHEN the writer stores mem_1 of agent a, and a redelivery reports it (and an unknown id) again
    pending.done("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1", "mem_unknown"])

    # THEN only that mark is gone
    assert pending.count("t", "a") == 1
    assert pending.count("t", "b") == 1
    pending.done("t", "a", [])
    pending.add("t", "a", [])
    assert pending.count("t", "a") == 1


def test_a_mark_never_cleared_expires_after_its_ttl(pending: LocalPendingWrites, tick: SteppingClock) -> None:
    # GIVEN a mark whose write was lost, and one re-added later (a client retry)
    pending.add("t", "a", ["mem_lost", "mem_retried"])
    tick.now += 10 * 86_400
    pending.add("t", "a", ["mem_retried"])

    # WHEN the TTL of the first add has passed, THEN only the refreshed mark still counts
    tick.now += 5 * 86_400
    assert pending.count("t", "a") == 1


def test_threads_and_a_second_instance_see_one_exact_count(tmp_path: Path) -> None:
    # GIVEN an API side adding from several threads while a writer side clears some
    api = LocalPendingWrites(tmp_path / "p.db")
    writer = LocalPendingWrites(tmp_path / "p.db")
    ids = [f"mem_{i}" for i in range(200)]

    def add(chunk: list[str]) -> None:
        for rid in chunk:
            api.add("t", "a", [rid])

    threads = [threading.Thread(target=add, args=(ids[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.done("t", "a", ids[:150])

    # THEN both instances count the 50 left
    assert api.count("t", "a") == 50
    assert writer.count("t", "a") == 50
