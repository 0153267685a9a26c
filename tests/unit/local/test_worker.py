"""The local queue worker's back-off: a failed batch comes back after the wait its worker names
for the receive count (the webhook delivery doubles it), and not before. Its thread carries its
name for the OS too."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread names read from /proc")
def test_a_running_worker_is_named_for_the_os_as_it_is_for_python(tmp_path: Path) -> None:
    # GIVEN a worker whose handler notes the OS's name for the thread it runs on
    seen: list[str] = []

    def noting(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip())
        return {"batchItemFailures": []}

    queue = LocalFifoQueue(tmp_path / "queue.db")
    queue.send([QueueMessage("acme", "m-1", "{}")])
    worker = QueueWorker(queue, poll_s=0.05, handler=noting, name="writer")

    # WHEN it runs until it has handled the message
    worker.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    worker.stop()

    # THEN top, ps and /proc show it by its name
    assert seen == ["writer-worker"]
