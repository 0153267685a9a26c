"""A memory's versions (`governance.rules.versions`) and an admin's restore of one of them.

A restore brings back what the memory said and whether it held at that version. Whether it held
is changed at once (`set_validity`, both sides of the supersession: the memory and the one it
named); what it said goes through the agent's write queue as an ``upsert`` so the writer embeds
the restored text in order with the agent's other writes (a search finds the old wording once
the writer stored it, within a second). Either way the restore is one ``restored`` event in the
audit trail, naming the version, and so the next version of the history.

A forgotten or erased memory cannot be restored: forgetting is exact, and its text is in no version.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from agent_memory.errors import ConflictError, NotFoundError
from agent_memory.feed.rules.events import updated
from agent_memory.governance.rules.versions import Change, Version, restorable, validity_detail, versions
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.commands import WriteCommand
from agent_memory.model.ids import content_hash
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.observability import logger
from agent_memory.ports import (
    AuditEvent,
    AuditQuery,
    AuditTrail,
    Clock,
    HistoryMemory,
    PendingWrites,
    WriteQueue,
)
from agent_memory.ports.change_feed import ChangeFeed, publish
from agent_memory.writing.write import command_messages, send_pending

#: Audit events read per page when assembling a history.
AUDIT_PAGE = 200


@dataclass(frozen=True, slots=True)
class Restored:
    """What a restore made: the new version, and whether its text is still being stored."""

    version: Version
    text_pending: bool


class HistoryService:
    def __init__(
        self,
        store: HistoryMemory,
        queue: WriteQueue,
        pending: PendingWrites,
        clock: Clock,
        *,
        feed: ChangeFeed | None = None,
    ) -> None:
        self._store = store
        self._queue = queue
        self._pending = pending
        self._clock = clock
        #: A restore (and the supersession it changes on the other side) is a ``memory.updated``.
        self._feed = feed

    def history(self, tenant_id: str, agent_id: str, record_id: str) -> tuple[MemoryRecord, list[Version]]:
        """The record (by id or alias) and its versions, oldest first. A record the agent never
        had is a 404; a forgotten one answers with its versions, none of them with text."""
        record = self._store.get(tenant_id, agent_id, record_id)
        if record is None:
            raise NotFoundError("memory not found")
        return record, versions(record, changes(self._store, tenant_id, agent_id, record.id))

    def restore(self, tenant_id: str, agent_id: str, record_id: str, number: int, actor: str) -> Restored:
        """Bring version ``number`` back; returns the version the restore made (what `versions`
        reads the ``restored`` event as: that version's text and validity, the confidence as it
        is) and whether its text is still on its way through the writer."""
        record, history = self.history(tenant_id, agent_id, record_id)
        target = restorable(history, number)
        if target is None:
            raise ConflictError(_why_not(history, number))
        now = self._clock.now()
        current = history[-1]
        detail: dict[str, object] = {"version": number, **validity_detail(target.validity)}
        if target.validity != record.validity:
            self._other_side(record, target.validity, now, actor)
        event = AuditEvent(tenant_id, agent_id, record.id, AuditAction.RESTORED, actor, now, detail)
        if not self._store.set_validity(tenant_id, agent_id, record.id, target.validity, event):
            raise NotFoundError("memory not found")
        text_pending = target.content is not None and target.content != current.content
        if text_pending:
            assert target.content is not None  # text_pending says so
            restored = record.model_copy(
                update={
                    "content": target.content,
                    "content_hash": content_hash(target.content),
                    "context": None,
                    "updated_at": now,
                    **target.validity.as_fields(),
                }
            )
            messages = command_messages([WriteCommand(op="upsert", record=restored)])
            send_pending(self._queue, self._pending, tenant_id, agent_id, [record.id], messages)
        publish(self._feed, [updated(event, {"content": target.content} if text_pending else None)])
        logger.info("memory version restored", extra={"record_id": record.id, "version": number})
        made = replace(
            target,
            number=current.number + 1,
            at=now,
            change=AuditAction.RESTORED,
            actor=actor,
            detail=detail,
            confidence=current.confidence,
        )
        return Restored(made, text_pending)

    def _other_side(self, record: MemoryRecord, target: RecordValidity, now: datetime, actor: str) -> None:
        """The memory on the other end of a supersession the restore adds or removes, kept in step:
        a successor no longer named loses this id from its ``supersedes``; one named again gets it."""
        dropped = {record.superseded_by} - {target.superseded_by}
        added = {target.superseded_by} - {record.superseded_by}
        for other_id in sorted(i for i in dropped | added if i):
            other = self._store.get(record.tenant_id, record.agent_id, other_id)
            if other is None or not other.is_live(now):
                continue
            named = (
                set(other.supersedes) - {record.id} if other_id in dropped else {*other.supersedes, record.id}
            )
            validity = other.validity.model_copy(update={"supersedes": tuple(sorted(named))})
            action = AuditAction.SUPERSESSION_UNDONE if other_id in dropped else AuditAction.SUPERSEDED
            detail: dict[str, object] = {"restored": record.id, **validity_detail(validity)}
            event = AuditEvent(record.tenant_id, record.agent_id, other_id, action, actor, now, detail)
            if self._store.set_validity(record.tenant_id, record.agent_id, other_id, validity, event):
                publish(self._feed, [updated(event)])


def changes(store: AuditTrail, tenant_id: str, agent_id: str, record_id: str) -> list[Change]:
    """Every audit event on the record, oldest first (the trail pages newest first)."""
    out: list[Change] = []
    cursor: str | None = None
    while True:
        query = AuditQuery(tenant_id, agent_id, record_id=record_id, limit=AUDIT_PAGE, cursor=cursor)
        page = store.audit_events(query)
        out.extend(Change(e.action, e.actor, e.at, e.detail) for e in page.events)
        cursor = page.next_cursor
        if cursor is None:
            # oldest first; events of one instant keep the order they were written in
            out.reverse()
            return sorted(out, key=lambda c: c.at)


def _why_not(history: list[Version], number: int) -> str:
    if history[-1].content is None:
        return "a forgotten memory cannot be restored"
    if not any(v.number == number for v in history):
        return f"the memory has no version {number}"
    return f"version {number} is the memory's current version"
