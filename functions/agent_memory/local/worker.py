"""Drains a local queue into a handler, as the SQS event source mapping would.

Batches are handed to the handler (`handlers.writer.handler` by default; the summarize worker
drains the job queue the same way) as SQS events: up to `WRITE_BATCH` messages for the writer,
which embeds the texts of a batch in a few large model calls (`writing.write_vectors`), so on
one machine a larger batch stores more writes a second (the queue still fills a batch round-robin
across tenants, so a small tenant's write waits at most for the batch in progress); up to SQS's
10 for the other handlers. The writer is also told what the queue holds next (`LocalFifoQueue.peek`,
`WriterService.expect`), so it embeds the next batch's texts while it stores this one. Its
partial-batch response
decides what is acknowledged and what is redelivered (with a growing delay) until the queue
dead-letters it. If the handler raises, the whole batch is redelivered.

When the API is served by several processes (`local.api_workers`), the writer drains its queue in
a process of its own (`WriterProcess`), at `WRITER_NICE` lower priority: a bulk load's embedding
and storing then share no interpreter with a search, and the OS hands a core to a search that
arrives (docs/decisions.md, "Bulk ingest: the writer in a process of its own"). Still one
consumer of the queue, so FIFO order and every step's idempotence are as with one process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

from agent_memory import container
from agent_memory.adapters.local_queue import DEFAULT_QUEUE_ARN, MAX_BATCH, LocalFifoQueue, to_sqs_event
from agent_memory.adapters.os_threads import name_os_thread
from agent_memory.handlers import writer
from agent_memory.local.api_workers import SUPERVISE_EVERY_S, ChildProcesses, run_until_stopped
from agent_memory.local.background import BackgroundLoop
from agent_memory.local.lambda_context import LocalContext
from agent_memory.observability import discard_unpublished_metrics, logger

RETRY_BASE_DELAY_S = 0.5
#: Messages the writer is handed at once (`benchmarks/ingest.py`, `benchmarks/fair_writes.py`):
#: two embedding parts of `writing.write_vectors.PIPELINE_TEXTS` conversation turns, so the
#: model sorts more texts by length in each call (less padding) and the first part's writes are
#: still stored while the second embeds. A small tenant's write behind a bulk load waits for the
#: batch in progress, so this bounds that wait too.
WRITE_BATCH = 100
#: How much lower the writer's own process runs than the API's (`WriterProcess`): nice 10 weighs
#: about a tenth of nice 0 in the Linux scheduler, so a search preempts the load and the load
#: still takes every cycle the searches leave (and the machine's other programs: on a busy
#: machine a bulk load takes longer).
WRITER_NICE = 10


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class QueueWorker(BackgroundLoop):
    def __init__(
        self,
        queue: LocalFifoQueue,
        poll_s: float = 0.5,
        *,
        handler: Handler | None = None,
        name: str = "writer",
        queue_arn: str = DEFAULT_QUEUE_ARN,
        retry_base_delay_s: float = RETRY_BASE_DELAY_S,
        retry_delay_s: Callable[[int], float] | None = None,
        batch_size: int | None = None,
    ) -> None:
        super().__init__(f"{name}-worker", failure="queue worker iteration failed", backoff_s=1.0)
        self._queue = queue
        self._poll_s = poll_s
        self._handler = handler
        self._name = name
        self._queue_arn = queue_arn
        self._retry_base_delay_s = retry_base_delay_s
        #: The writer's batches are larger than SQS's (module docstring).
        self._batch_size = batch_size or (WRITE_BATCH if handler is None else MAX_BATCH)
        #: The wait after a failed delivery by its receive count (default: the base times it).
        self._retry_delay_s = retry_delay_s or (lambda count: retry_base_delay_s * count)

    def drain_once(self) -> int:
        """Process one batch if there is one; returns how many messages were received."""
        messages = self._queue.receive(self._batch_size, wait_s=self._poll_s)
        if not messages:
            return 0
        delay = self._retry_delay_s(max(m.receive_count for m in messages))
        if self._handler is None:
            self._expect_next()
        handler = self._handler or writer.handler
        response: dict[str, Any]
        try:
            response = handler(
                to_sqs_event(messages, self._queue_arn), LocalContext(function_name=self._name)
            )
        except Exception:  # the whole batch failed: SQS would redeliver every message
            logger.exception("%s failed a whole batch; redelivering it", self._name)
            response = {"batchItemFailures": [{"itemIdentifier": m.message_id} for m in messages]}
        finally:
            discard_unpublished_metrics()
        self._queue.settle(messages, response, retry_delay_s=delay)
        return len(messages)

    def _expect_next(self) -> None:
        """Tell the writer what the next receive most likely brings (module docstring); a hint,
        so a failure to give it is logged and the batch goes on."""
        try:
            container.writer_service().expect(self._queue.peek(self._batch_size))
        except Exception:
            logger.warning("could not look at the next writes; the batch goes on without", exc_info=True)

    def _run(self) -> None:
        name_os_thread(self._thread_name)  # the OS's tools see which worker a thread is
        super()._run()

    def _step(self) -> float:
        """One batch; no pause after it, since `drain_once` itself waits ``poll_s`` for messages."""
        self.drain_once()
        return 0.0


class WriterProcess(ChildProcesses):
    """The writer in a process of its own (`serve_writer`), started again if it dies: what it was
    storing is redelivered after the visibility timeout and confirmed, not stored twice."""

    def __init__(self) -> None:
        super().__init__("writer", serve_writer, (), 1)


def serve_writer(parent_pid: int) -> None:
    """The writer's process: at `WRITER_NICE` lower priority (set before any thread starts, so
    every thread it makes, the model's too, inherits it), draining the write queue until SIGTERM
    or until its parent is gone. Settings come from the environment, as an API worker's do."""
    with contextlib.suppress(OSError):  # not permitted here: the writer runs at the API's priority
        os.nice(WRITER_NICE)
    container.reset()
    queue = container.local_writes()
    assert queue is not None, "the local runtime needs the local queue"
    worker = QueueWorker(queue)
    stopping = run_until_stopped(parent_pid, lambda: None)
    worker.start()
    while not stopping.wait(SUPERVISE_EVERY_S):
        pass
    worker.stop()
