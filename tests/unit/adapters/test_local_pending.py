"""Pending-write marks in SQLite: exact counts under retries and redeliveries."""

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


def test_a_write_accepted_again_within_the_dedup_window_counts_until_its_writer_is_done(
    pending: LocalPendingWrites, tick: SteppingClock
) -> None:
    # GIVEN a write that was stored (and maybe forgotten since), and one still in flight
    pending.add("t", "a", ["mem_stored", "mem_in_flight"])
    tick.now += 2
    pending.done("t", "a", ["mem_stored"])

    # WHEN both are accepted again within the queue's window (each acceptance is its own message)
    tick.now += 200
    pending.add("t", "a", ["mem_stored", "mem_in_flight"])

    # THEN both count until their writers are done: a client waiting for 0 never reads too early
    assert pending.count("t", "a") == 2
    pending.done("t", "a", ["mem_stored", "mem_in_flight"])
    assert pending.count("t", "a") == 0


def test_a_retry_after_the_window_counts_again_until_the_replay_is_done(
    pending: LocalPendingWrites, tick: SteppingClock
) -> None:
    # GIVEN a stored write whose tombstone has just run out (done + 300 s)
    pending.add("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1"])
    tick.now += 300

    # WHEN the client retries it (the queue accepts the message again)
    pending.add("t", "a", ["mem_1"])

    # THEN it counts until the writer replays it, and a redelivered done keeps it cleared
    assert pending.count("t", "a") == 1
    pending.done("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1"])
    assert pending.count("t", "a") == 0
    tick.now += 10 * 86_400
    assert pending.count("t", "a") == 0


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
    # GIVEN records stored long ago (tombstones) and a pending one
    pending.add("t", "a", ["mem_old_1", "mem_old_2", "mem_new"])
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
    pending = LocalPendingWrites(tmp_path / "p.db")
    pending.add("t", "a", ["r1"])
    pending.discard("t", "a", ["r1"])
    assert pending.count("t", "a") == 0
    pending.add("t", "a", ["r1"])  # the client retries after the queue was down
    assert pending.count("t", "a") == 1
