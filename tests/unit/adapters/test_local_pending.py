"""Pending-write marks in SQLite, beyond the shared contract (tests/contract/test_pending_contract.py):
TTL refresh on a retry, the configurable window, tombstone purges, threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from tests.fakes import SteppingClock

from agent_memory.adapters.local_pending import LocalPendingWrites


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def pending(tmp_path: Path, tick: SteppingClock) -> LocalPendingWrites:
    return LocalPendingWrites(tmp_path / "pending.db", ttl_days=14, clock=tick)


def test_a_mark_never_cleared_expires_after_its_ttl(pending: LocalPendingWrites, tick: SteppingClock) -> None:
    # GIVEN a queued mark whose write was lost, and one re-added (and queued) later (a client retry)
    pending.add("t", "a", ["mem_lost", "mem_retried"])
    pending.queued("t", "a", ["mem_lost", "mem_retried"])
    tick.now += 10 * 86_400
    pending.add("t", "a", ["mem_retried"])
    pending.queued("t", "a", ["mem_retried"])

    # WHEN the TTL of the first add has passed, THEN only the refreshed mark still counts
    tick.now += 5 * 86_400
    assert pending.count("t", "a") == 1


def test_the_dedup_window_is_configurable_and_must_be_positive(tmp_path: Path, tick: SteppingClock) -> None:
    # GIVEN a queue with a 60 s deduplication window
    pending = LocalPendingWrites(tmp_path / "p.db", dedup_window_s=60, clock=tick)
    pending.add("t", "a", ["mem_1", "mem_2"])
    pending.done("t", "a", ["mem_1", "mem_2"])

    def tombstones() -> int:
        with sqlite3.connect(pending.path) as conn:
            return int(conn.execute("SELECT count(*) FROM pending_writes WHERE state = 'done'").fetchone()[0])

    # WHEN a write comes inside the window THEN the tombstones are kept; after it they are purged
    tick.now += 59
    pending.add("t", "a", ["mem_3"])
    assert tombstones() == 2
    tick.now += 1
    pending.add("t", "a", ["mem_4"])
    assert tombstones() == 0
    assert pending.count("t", "a") == 2

    for bad in (0, -300):
        with pytest.raises(ValueError, match="dedup_window_s"):
            LocalPendingWrites(tmp_path / "q.db", dedup_window_s=bad)


def test_tombstones_are_purged_once_expired(pending: LocalPendingWrites, tick: SteppingClock) -> None:
    # GIVEN records stored long ago (tombstones) and a queued pending one
    pending.add("t", "a", ["mem_old_1", "mem_old_2", "mem_new"])
    pending.queued("t", "a", ["mem_new"])
    pending.done("t", "a", ["mem_old_1", "mem_old_2"])

    # WHEN a later write comes after the window
    tick.now += 301
    pending.add("t", "b", ["mem_x"])

    # THEN the expired tombstones are gone from the file, the live mark is kept
    with sqlite3.connect(pending.path) as conn:
        rows = conn.execute("SELECT agent_id, record_id, state FROM pending_writes ORDER BY 1, 2").fetchall()
    assert rows == [("a", "mem_new", "pending"), ("b", "mem_x", "pending")]


def test_threads_and_a_second_instance_see_one_exact_count(tmp_path: Path) -> None:
    # GIVEN an API side adding from several threads while a writer side clears some
    api = LocalPendingWrites(tmp_path / "p.db")
    writer = LocalPendingWrites(tmp_path / "p.db")
    ids = [f"mem_{i}" for i in range(200)]

    def add(chunk: list[str]) -> None:
        for rid in chunk:
            api.add("t", "a", [rid])

    # WHEN
    threads = [threading.Thread(target=add, args=(ids[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.done("t", "a", ids[:150])

    # THEN both instances count the 50 left
    assert api.count("t", "a") == 50
    assert writer.count("t", "a") == 50


def test_discard_leaves_no_tombstone_so_a_retry_counts_again(tmp_path: Path) -> None:
    # GIVEN
    pending = LocalPendingWrites(tmp_path / "p.db")
    pending.add("t", "a", ["r1"])
    # WHEN
    pending.discard("t", "a", ["r1"])
    # THEN
    assert pending.count("t", "a") == 0
    pending.add("t", "a", ["r1"])  # the client retries after the queue was down
    assert pending.count("t", "a") == 1
