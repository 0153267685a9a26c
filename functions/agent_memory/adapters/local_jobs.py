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
It waits in a group of its own (``<key>@delayed``), so the jobs of its key sent before it are
not held back; it may then run beside a job of the same key sent later, as on SQS, where every
job is built to (a re-run finds its work done).
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
        # A delayed job is a group of its own: waiting, it must not hold back the jobs of its key
        # sent before it (on SQS standard queues nothing is held back at all).
        group = (lambda key: f"{key}@delayed") if delay_s > 0 else (lambda key: key)
        self.queue.send(
            [QueueMessage(group_id=group(job.key), dedup_id=uuid.uuid4().hex, body=job.body) for job in jobs],
            delay_s=delay_s,
        )
