"""A crash between marking writes pending and queueing them leaves no lasting count.

The write service marks the accepted ids pending, then sends them to the queue. A process killed
in between used to leave marks that counted for the pending-writes TTL (14 days) with nothing
queued, so a client waiting for ``pending_writes`` to reach 0 waited for days.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.fakes import SteppingClock

from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.ports import QueueMessage
from agent_memory.writing.write import send_pending


class Killed(BaseException):
    """The process dies here (nothing catches it: not an `Exception`)."""


class DyingQueue:
    """A write queue whose process is killed as the send starts."""

    def send(self, messages: Sequence[QueueMessage]) -> None:
        raise Killed


def messages(ids: list[str]) -> list[QueueMessage]:
    return [QueueMessage(group_id="t:a:working", dedup_id=i, body="{}") for i in ids]


def test_a_crash_between_marking_and_queueing_leaves_no_pending_count(tmp_path: Path) -> None:
    # GIVEN ten writes marked pending by a process killed before it queued them
    tick = SteppingClock()
    pending = LocalPendingWrites(tmp_path / "queue.db", clock=tick)
    ids = [f"mem_{i}" for i in range(10)]
    with pytest.raises(Killed):
        send_pending(DyingQueue(), pending, "t", "a", ids, messages(ids))
    assert pending.count("t", "a") == 10

    # WHEN a few minutes pass (not the 14 days of a queued mark)
    tick.now += 180

    # THEN nothing counts: a client waiting for 0 is not kept waiting by writes never queued
    assert pending.count("t", "a") == 0


def test_writes_that_reached_the_queue_count_until_stored(tmp_path: Path) -> None:
    # GIVEN ten writes sent to the queue
    tick = SteppingClock()
    pending = LocalPendingWrites(tmp_path / "queue.db", clock=tick)
    queue = LocalFifoQueue(tmp_path / "queue.db", clock=tick)
    ids = [f"mem_{i}" for i in range(10)]
    send_pending(queue, pending, "t", "a", ids, messages(ids))

    # WHEN an hour passes before the writer gets to them, THEN all still count
    tick.now += 3600
    assert pending.count("t", "a") == 10
    pending.done("t", "a", ids)
    assert pending.count("t", "a") == 0
