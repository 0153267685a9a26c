"""Summarize jobs on an Amazon SQS standard queue.

A standard queue, not FIFO: jobs are independent (each is one agent-period and idempotent), so
they may run in parallel and in any order, at standard queues' throughput. ``SendMessageBatch``
takes 10 entries per call; entries that fail on the service's side are retried with backoff,
and what still fails raises `DependencyError` (jobs already sent stay sent: resending them is
harmless, a job that finds its summary current does nothing). ``delay_s`` becomes each entry's
``DelaySeconds`` (at most 900, SQS's limit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_memory.adapters.sqs_batch import MAX_BATCH_ENTRIES, SqsQueue
from agent_memory.errors import DependencyError
from agent_memory.ports import Job

if TYPE_CHECKING:
    pass

MAX_DELAY_S = 900


class SqsJobQueue(SqsQueue):
    """`JobQueue` on an SQS standard queue."""

    label = "the summarize queue"

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        delay = max(0, min(int(delay_s), MAX_DELAY_S))
        for start in range(0, len(jobs), MAX_BATCH_ENTRIES):
            chunk = jobs[start : start + MAX_BATCH_ENTRIES]
            failures = self._send_chunk(chunk, delay)
            if failures:
                codes = sorted({str(f.get("Code", "unknown")) for f in failures})
                raise DependencyError(
                    f"{len(failures)} of {len(jobs)} summarize job(s) could not be queued "
                    f"({', '.join(codes)})",
                    details=[{"job": chunk[int(f["Id"])].key, "code": f.get("Code")} for f in failures],
                )

    def _send_chunk(self, chunk: Sequence[Job], delay: int) -> list[dict[str, Any]]:
        return self._sender.send(
            [{"Id": str(i), "MessageBody": job.body, "DelaySeconds": delay} for i, job in enumerate(chunk)]
        )
