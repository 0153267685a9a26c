"""Handing records to the writer: one message per acceptance, and the agent's pending marks
around the send. Shared by the write, feedback and pattern use cases, which all queue work for
the writer that a caller may wait for (``stats.pending_writes``)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from agent_memory.errors import DependencyError
from agent_memory.model.commands import WriteCommand
from agent_memory.observability import logger
from agent_memory.ports import PendingWrites, QueueMessage, WriteQueue


def dedup_id(record_id: str) -> str:
    """One per acceptance, so the queue never drops a write it was given (SQS allows 128 characters).

    A deduplication id made from the content alone let the queue's five-minute window swallow
    a write that was accepted again after the first one was forgotten: answered 202, never
    stored; one made from the content and the time of acceptance did the same for two
    acceptances within one clock tick. A random nonce makes each acceptance its own message,
    while a transport retry of the same send (the same message) is still dropped by SQS. The
    writer, not the queue, makes repeats harmless: the same content has the same record id, and
    a live record is confirmed, not stored twice. Retries of one request that must come back
    with the first answer carry an ``Idempotency-Key``.
    """
    return hashlib.sha256(f"{record_id}\x00{uuid.uuid4().hex}".encode()).hexdigest()


def command_messages(commands: Sequence[WriteCommand]) -> list[QueueMessage]:
    """Each command as its own message on its record's group."""
    return [
        QueueMessage(group_id=c.group_id, dedup_id=dedup_id(c.record.id), body=c.model_dump_json())
        for c in commands
    ]


def send_pending(
    queue: WriteQueue,
    pending: PendingWrites,
    tenant_id: str,
    agent_id: str,
    ids: Sequence[str],
    messages: Sequence[QueueMessage],
) -> None:
    """Mark ``ids`` pending for the agent, send, then hold the marks; a send that fails takes
    the marks back.

    Pending first, so a fast writer can never mark done before the mark was made. The first mark
    is a short lease: a crash before the send (or before `PendingWrites.queued`) leaves marks that
    expire within it, where a mark made to last would count for days with nothing queued. Once
    sent, the marks hold until the writer clears them. Failing to hold them does not fail the
    accepted write: its marks count for the lease, and the writer clears them either way.
    """
    pending.add(tenant_id, agent_id, ids)
    try:
        queue.send(messages)
    except DependencyError:
        pending.discard(tenant_id, agent_id, ids)
        raise
    hold(pending, tenant_id, agent_id, ids)


def hold(pending: PendingWrites, tenant_id: str, agent_id: str, ids: Sequence[str]) -> None:
    """The messages of ``ids`` are queued: their marks hold past the lease. A failure here does
    not fail what was queued; its marks count for the lease only (logged)."""
    try:
        pending.queued(tenant_id, agent_id, ids)
    except DependencyError:
        logger.warning("pending marks not held past their lease", extra={"agent_id": agent_id})
