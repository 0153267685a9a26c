"""The local queue worker's back-off: a failed batch comes back after the wait its worker names
for the receive count (the webhook delivery doubles it), and not before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes import SteppingClock

from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.local.worker import QueueWorker
from agent_memory.ports import QueueMessage


def _failing(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]]}


def test_a_failed_message_comes_back_after_the_workers_own_back_off(tmp_path: Path) -> None:
    # GIVEN a message, and a worker whose handler fails it, waiting 10 s x 2^(receives - 1)
    clock = SteppingClock()
    queue = LocalFifoQueue(tmp_path / "changes.db", max_receive_count=10, clock=clock)
    queue.send([QueueMessage("acme", "evt_1", "{}")])
    worker = QueueWorker(queue, poll_s=0, handler=_failing, retry_delay_s=lambda n: 10.0 * 2 ** (n - 1))
    # WHEN it fails twice
    assert worker.drain_once() == 1
    clock.now += 9.9
    early = queue.receive(1)
    clock.now += 0.2
    assert worker.drain_once() == 1
    # THEN it was not back before its first wait, and its second wait is twice as long
    assert early == []
    clock.now += 19.9
    assert queue.receive(1) == []
    clock.now += 0.2
    assert [m.receive_count for m in queue.receive(1)] == [3]
