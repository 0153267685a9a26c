"""Feedback on experiences: accepted by the API, counted by the writer.

The API checks that the memory is a live experience of the agent and queues a `FeedbackCommand`
on the agent's working-memory group; the writer counts it (`FeedbackApplier`). Counting in the
writer, one message at a time per agent, is what keeps two feedbacks sent at once from losing
one of them, and a pattern re-made by the pattern job (an upsert on the same group) from
erasing feedback counted meanwhile. The confidence rule is `experience.rules.confidence`; every change is
an audit event with its reason (outcome, note, confidence before and after).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from enum import StrEnum

from agent_memory.errors import NotFoundError, ValidationFailedError
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.feed.rules.events import updated
from agent_memory.model.caller import Caller
from agent_memory.model.commands import FeedbackCommand
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    AuditQuery,
    Clock,
    FeedbackMemory,
    PendingWrites,
    QueueMessage,
    RecordLookup,
    WriteQueue,
)
from agent_memory.ports.change_feed import ChangeFeed, publish
from agent_memory.writing.write import send_pending

#: How far back in a record's audit trail a redelivered feedback is looked for: a redelivery
#: comes within the queue's visibility timeout, long before this many newer events pile up.
REPLAY_WINDOW = 100


class FeedbackService:
    def __init__(self, store: RecordLookup, queue: WriteQueue, pending: PendingWrites, clock: Clock) -> None:
        self._store = store
        self._queue = queue
        self._pending = pending
        self._clock = clock

    def accept(
        self, caller: Caller, agent_id: str, record_id: str, outcome: FeedbackOutcome, note: str | None
    ) -> str:
        """Queue one feedback on a live experience of the agent; its feedback id."""
        now = self._clock.now()
        record = self._store.get(caller.tenant_id, agent_id, record_id)
        if record is None or not record.is_live(now):
            raise NotFoundError("memory not found")
        if record.experience is None:
            raise ValidationFailedError(
                f"memory {record_id} is a {record.kind.value}, not an experience: feedback is for "
                "memories of kind success, failure, insight or pattern"
            )
        command = FeedbackCommand(
            feedback_id=f"fb_{uuid.uuid4().hex}",
            tenant_id=caller.tenant_id,
            agent_id=agent_id,
            record_id=record.id,  # an alias resolves to the record it was merged into
            outcome=outcome,
            note=note,
            actor=caller.key_id or "api",
            accepted_at=now,
        )
        message = QueueMessage(
            group_id=command.group_id, dedup_id=command.feedback_id, body=command.model_dump_json()
        )
        send_pending(self._queue, self._pending, caller.tenant_id, agent_id, [command.feedback_id], [message])
        metrics.add_metric(name="FeedbackAccepted", unit=MetricUnit.Count, value=1)
        return command.feedback_id


class FeedbackResult(StrEnum):
    COUNTED = "counted"
    REPLAYED = "replayed"
    GONE = "gone"  # forgotten (or expired) after the feedback was accepted: nothing to count


class FeedbackApplier:
    def __init__(
        self, store: FeedbackMemory, pending: PendingWrites, clock: Clock, *, feed: ChangeFeed | None = None
    ) -> None:
        self._store = store
        self._pending = pending
        self._clock = clock
        #: Each feedback counted is a ``memory.updated`` event (its confidence moved).
        self._feed = feed

    def apply(self, command: FeedbackCommand) -> FeedbackResult:
        result = self._count(command)
        self._pending.done(command.tenant_id, command.agent_id, [command.feedback_id])
        return result

    def _count(self, command: FeedbackCommand) -> FeedbackResult:
        tenant, agent = command.tenant_id, command.agent_id
        now = self._clock.now()
        record = self._store.get(tenant, agent, command.record_id)
        if record is None or record.experience is None or not record.is_live(now):
            logger.info("feedback on a memory that is gone", extra={"record_id": command.record_id})
            return FeedbackResult.GONE
        page = self._store.audit_events(AuditQuery(tenant, agent, record_id=record.id, limit=REPLAY_WINDOW))
        counted = [
            e
            for e in page.events
            if e.action == AuditAction.FEEDBACK and e.detail.get("feedback_id") == command.feedback_id
        ]
        if counted:
            metrics.add_metric(name="FeedbackReplayed", unit=MetricUnit.Count, value=1)
            publish(self._feed, [updated(counted[0])])  # again, under the same id
            return FeedbackResult.REPLAYED
        # The trail keeps one event per record, action and instant: each feedback its own instant.
        latest = max((e.at for e in page.events), default=None)
        at = max(now, command.accepted_at)
        if latest is not None and at <= latest:
            at = latest + timedelta(microseconds=1)
        before = record.experience
        after = before.after(command.outcome)
        event = AuditEvent(
            tenant_id=tenant,
            agent_id=agent,
            record_id=record.id,
            action=AuditAction.FEEDBACK,
            actor=command.actor,
            at=at,
            detail={
                "feedback_id": command.feedback_id,
                "outcome": command.outcome.value,
                "note": command.note,
                "confidence_before": before.confidence,
                "confidence": after.confidence,
                "confirmations": after.confirmations,
                "refutations": after.refutations,
                "applications": after.applications,
            },
        )
        if not self._store.set_experience(tenant, agent, record.id, after, event):
            return FeedbackResult.GONE
        publish(self._feed, [updated(event)])
        metrics.add_metric(name="FeedbackCounted", unit=MetricUnit.Count, value=1)
        logger.info(
            "feedback counted",
            extra={
                "record_id": record.id,
                "outcome": command.outcome.value,
                "confidence": after.confidence,
            },
        )
        return FeedbackResult.COUNTED
