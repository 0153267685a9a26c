"""One contract for pending-write marks, run on every adapter: SQLite (local) and DynamoDB (moto).

The marks make ``pending_writes`` exact under retries and redeliveries: a client waiting for 0
never reads too early, and never waits for ever. Adapter-specific behaviour (DynamoDB's batch
retries and pagination, SQLite's threads) stays in each adapter's own tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.fakes import SteppingClock
from tests.tables import create_pending_table

from agent_memory.ports import PendingWrites

TABLE = "agent-memory-pending"


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


def _dynamodb(tick: SteppingClock) -> Iterator[PendingWrites]:
    from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites

    with mock_aws():
        client: Any = boto3.client("dynamodb", region_name="us-east-1")
        create_pending_table(client, TABLE)
        yield DynamoDbPendingWrites(TABLE, client=client, ttl_days=14, clock=tick)


@pytest.fixture(params=["sqlite", "dynamodb"])
def pending(request: pytest.FixtureRequest, tmp_path: Path, tick: SteppingClock) -> Iterator[PendingWrites]:
    if request.param == "sqlite":
        from agent_memory.adapters.local_pending import LocalPendingWrites

        yield LocalPendingWrites(tmp_path / "pending.db", ttl_days=14, clock=tick)
        return
    yield from _dynamodb(tick)


def test_marks_are_counted_per_agent_and_adding_twice_counts_once(pending: PendingWrites) -> None:
    # GIVEN writes accepted for two agents of one tenant and one agent of another, some retried
    ids = [f"mem_{i:03d}" for i in range(60)]  # DynamoDB: three BatchWriteItem calls
    pending.add("t1", "a1", ids)
    pending.add("t1", "a1", [*ids[:10], *ids[:10]])
    pending.add("t1", "a2", ["mem_000"])
    pending.add("t2", "a1", ["mem_9"])

    # WHEN / THEN each agent counts its own distinct records
    assert pending.count("t1", "a1") == 60
    assert pending.count("t1", "a2") == 1
    assert pending.count("t2", "a1") == 1
    assert pending.count("t2", "a2") == 0


def test_done_is_idempotent_and_touches_only_its_agent(pending: PendingWrites) -> None:
    # GIVEN marks for two agents holding the same record id
    ids = [f"mem_{i}" for i in range(30)]
    pending.add("t", "a", ids)
    pending.add("t", "b", ["mem_1"])

    # WHEN the writer stores 27 of agent a's, and a redelivery reports some (and an unknown id) again
    pending.done("t", "a", ids[:27])
    pending.done("t", "a", [*ids[:5], "mem_unknown"])

    # THEN only those marks are gone
    assert pending.count("t", "a") == 3
    assert pending.count("t", "b") == 1
    pending.done("t", "a", [])
    pending.add("t", "a", [])
    assert pending.count("t", "a") == 3


def test_a_mark_never_cleared_expires_after_its_ttl(pending: PendingWrites, tick: SteppingClock) -> None:
    # GIVEN a queued mark whose write was lost (never stored, never dead-lettered), and a newer one
    pending.add("t", "a", ["mem_lost"])
    pending.queued("t", "a", ["mem_lost"])
    tick.now += 10 * 86_400
    pending.add("t", "a", ["mem_new"])
    pending.queued("t", "a", ["mem_new"])

    # WHEN the first one's TTL (14 days) has passed, THEN only the newer one counts
    tick.now += 5 * 86_400
    assert pending.count("t", "a") == 1


def test_a_write_accepted_again_within_the_dedup_window_counts_until_its_writer_is_done(
    pending: PendingWrites, tick: SteppingClock
) -> None:
    # GIVEN 130 accepted writes (DynamoDB: two BatchGetItem chunks), 120 of them stored
    ids = [f"mem_{i:03d}" for i in range(130)]
    pending.add("t", "a", ids)
    tick.now += 2
    pending.done("t", "a", ids[:120])

    # WHEN they are all accepted again within the queue's window (each acceptance is a message)
    tick.now += 198
    pending.add("t", "a", ids)

    # THEN all count until their writers are done: a client waiting for 0 never reads too early
    assert pending.count("t", "a") == 130
    pending.done("t", "a", ids)
    assert pending.count("t", "a") == 0


def test_a_retry_after_the_window_counts_again_until_the_replay_is_done(
    pending: PendingWrites, tick: SteppingClock
) -> None:
    # GIVEN a stored write whose tombstone has run out (done + the 300 s window)
    pending.add("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1"])
    tick.now += 301

    # WHEN the client retries it (the queue accepts the message again)
    pending.add("t", "a", ["mem_1"])

    # THEN it counts until the writer replays it, and a redelivered done keeps it cleared
    assert pending.count("t", "a") == 1
    pending.done("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1"])
    assert pending.count("t", "a") == 0
    tick.now += 10 * 86_400
    assert pending.count("t", "a") == 0


def test_discard_removes_a_mark_so_a_retry_counts_again(pending: PendingWrites) -> None:
    # GIVEN a mark whose queue send failed (the API undoes it)
    pending.add("t", "a", ["mem_1", "mem_2"])
    pending.discard("t", "a", ["mem_1"])
    assert pending.count("t", "a") == 1

    # WHEN the client retries at once, THEN it counts again (no tombstone hides it)
    pending.add("t", "a", ["mem_1"])
    assert pending.count("t", "a") == 2


def test_a_mark_never_queued_expires_within_its_lease(pending: PendingWrites, tick: SteppingClock) -> None:
    # GIVEN ten marks made before a crash that kept their messages off the queue, and one queued
    ids = [f"mem_{i}" for i in range(10)]
    pending.add("t", "a", ids)
    pending.add("t", "a", ["mem_sent"])
    pending.queued("t", "a", ["mem_sent"])
    assert pending.count("t", "a") == 11

    # WHEN the lease (two minutes) has passed
    tick.now += 121

    # THEN only the queued one counts, and it counts until its writer is done
    assert pending.count("t", "a") == 1
    tick.now += 86_400
    assert pending.count("t", "a") == 1
    pending.done("t", "a", ["mem_sent"])
    assert pending.count("t", "a") == 0


def test_queued_never_turns_a_done_tombstone_back_to_pending(pending: PendingWrites) -> None:
    # GIVEN a write whose writer was done before the API held its mark (a fast writer)
    pending.add("t", "a", ["mem_1"])
    pending.done("t", "a", ["mem_1"])

    # WHEN the API holds the mark, THEN nothing counts
    pending.queued("t", "a", ["mem_1", "mem_unknown"])
    assert pending.count("t", "a") == 0
