"""The queues between the API and the background: writes on their way to the writer (and the dead
letters of those that can never succeed), jobs on their way to a worker, and the count of
accepted writes not yet stored."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_memory.model.jobs import SummarizeJob

__all__ = [
    "MAX_RECEIVES_REASON",
    "DeadLetter",
    "DeadLetterQueue",
    "DeadLetters",
    "Job",
    "JobQueue",
    "PendingWrites",
    "QueueMessage",
    "WriteQueue",
]


@dataclass(frozen=True, slots=True)
class QueueMessage:
    """One write on its way to the writer.

    ``group_id`` is ``tenant:agent:grain``: one writer at a time per slice. ``dedup_id`` names one
    send (one acceptance of a write, one version of a summary): the queue drops a resend of that
    send within its window, never a later acceptance of the same content.
    """

    group_id: str
    dedup_id: str
    body: str


class WriteQueue(Protocol):
    def send(self, messages: Sequence[QueueMessage]) -> None:
        """Enqueue all messages, or raise `DependencyError` (none of them may then be assumed sent)."""
        ...


class DeadLetters(Protocol):
    """Where a message goes that can never succeed (a poison message), with the reason why."""

    def put(self, message: QueueMessage, reason: str) -> None: ...


#: The reason of a dead letter that used up its deliveries (every queue words it the same).
MAX_RECEIVES_REASON = "max receive count exceeded"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A write that will not be retried until someone redrives it, and why.

    ``reason`` is what the writer recorded (a poison message's parse error), or "max receive
    count exceeded" for a message the queue moved after its deliveries were spent. ``failed_at``
    is when it entered the dead letters (epoch seconds). ``receive_count`` is the deliveries it
    had before, where the queue keeps that (None: it does not, as on SQS).
    """

    id: str
    group_id: str
    dedup_id: str
    body: str
    reason: str
    failed_at: float
    receive_count: int | None


class DeadLetterQueue(DeadLetters, Protocol):
    """The operator's side of the dead letters (`agent-memory dlq list | redrive`)."""

    def dead_letters(self) -> builtins.list[DeadLetter]:
        """The dead letters with their reasons, oldest first within each group."""
        ...

    def redrive(self, ids: Iterable[str] | None = None) -> int:
        """Move dead letters (all, or those ``ids``) back to the tail of their groups on the
        write queue, in group order; how many moved. Safe to run again after a crash."""
        ...


@dataclass(frozen=True, slots=True)
class Job:
    """One unit of background work (a summarize job) on its way to a worker.

    ``key`` names what the job is about (``tenant:agent:grain:time_key``): a local queue runs two
    jobs with the same key one after the other; SQS standard queues ignore it.
    """

    key: str
    body: str

    @classmethod
    def of(cls, job: SummarizeJob) -> Job:
        """A summarize job as a queue message: keyed by its agent-period."""
        return cls(key=job.key, body=job.model_dump_json(exclude_none=True))


class JobQueue(Protocol):
    """Background jobs: at-least-once and unordered, so every job must be idempotent."""

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        """Enqueue all jobs, each visible after ``delay_s`` seconds (best effort), or raise
        `DependencyError`."""
        ...


class PendingWrites(Protocol):
    """Accepted writes not yet stored, so a client can wait for its writes (`stats.pending_writes`).

    Keyed by record id, so at-least-once delivery cannot make the count drift.
    """

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Mark them pending for a short lease: a crash before `queued` leaves no lasting mark."""
        ...

    def queued(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Their messages are on the queue: pending marks (never a ``done`` tombstone) now last
        until the writer clears them, or the adapter's TTL for a write that is lost."""
        ...

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """The writer stored them. Leaves a tombstone for the queue's deduplication window, so a
        client retry that the queue will drop as a duplicate is not counted pending again."""
        ...

    def discard(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Undo `add` without a tombstone: the messages never reached the queue."""
        ...

    def count(self, tenant_id: str, agent_id: str) -> int: ...
