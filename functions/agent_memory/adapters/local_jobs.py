"""The embedded job queue: summarize jobs on a `LocalFifoQueue` of their own file (``jobs.db``).

Reusing the local FIFO queue gives jobs what the write queue already has and is tested for:
one SQLite file shared by the server, the worker thread and the CLI; visibility timeouts,
redelivery with a receive count, and dead letters with their reason. Two choices make it behave
like the SQS *standard* queue jobs go to in AWS:

* The group is the job's key (``tenant:agent:grain:time_key``): jobs of different agent-periods
  never wait for each other, and two jobs for the same period never run at once.
* Every job gets a fresh deduplication id: SQS standard queues do not deduplicate, and a period
  re-run a minute after the last must run (the worker makes it a no-op if nothing changed).

``delay_s`` is kept, as SQS keeps DelaySeconds: a delayed job is not received before its time.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.ports import Job, QueueMessage

#: What local job events name as their source queue.
JOBS_QUEUE_ARN = "arn:aws:sqs:local:000000000000:agent-memory-summarize"


class LocalJobQueue:
    """`JobQueue` on a `LocalFifoQueue`; ``queue`` is the consumer side the local worker drains."""

    def __init__(self, queue: LocalFifoQueue) -> None:
        self.queue = queue

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        self.queue.send(
            [QueueMessage(group_id=job.key, dedup_id=uuid.uuid4().hex, body=job.body) for job in jobs],
            delay_s=delay_s,
        )
