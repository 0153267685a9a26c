"""Reading an agent's memory: get, list, stats and the audit trail (forgetting: `forget`)."""

from __future__ import annotations

from typing import Protocol

from agent_memory.contract.v1 import AuditEventOut, AuditResponse, ListResponse, MemoryOut, StatsResponse
from agent_memory.domain.grains import Grain
from agent_memory.domain.scoring import display_text
from agent_memory.errors import NotFoundError
from agent_memory.ports import AuditLog, Clock, PendingWrites, RecordStore


class ReadableMemory(RecordStore, AuditLog, Protocol):
    """What reading an agent's memory needs of the store: its records and its audit trail."""


class MemoryService:
    def __init__(self, store: ReadableMemory, pending: PendingWrites, clock: Clock) -> None:
        self._store = store
        self._pending = pending
        self._clock = clock

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryOut:
        record = self._store.get(tenant_id, agent_id, record_id)
        if record is None or not record.is_live(self._clock.now()):
            raise NotFoundError("memory not found")
        return MemoryOut.of(record, display_text(record))

    def list(
        self, tenant_id: str, agent_id: str, grain: Grain | None, limit: int, cursor: str | None
    ) -> ListResponse:
        page = self._store.list(
            tenant_id, agent_id, self._clock.now(), grain=grain, limit=limit, cursor=cursor
        )
        return ListResponse(
            items=[MemoryOut.of(r, display_text(r)) for r in page.records], next_cursor=page.next_cursor
        )

    def audit(
        self, tenant_id: str, agent_id: str, record_id: str | None, limit: int, cursor: str | None
    ) -> AuditResponse:
        page = self._store.audit_events(tenant_id, agent_id, record_id=record_id, limit=limit, cursor=cursor)
        items = [
            AuditEventOut(record_id=e.record_id, action=e.action, actor=e.actor, at=e.at, detail=e.detail)
            for e in page.events
        ]
        return AuditResponse(items=items, next_cursor=page.next_cursor)

    def stats(self, tenant_id: str, agent_id: str) -> StatsResponse:
        # Pending first: a write stored in between is then counted twice, never missed.
        pending = self._pending.count(tenant_id, agent_id)
        stats = self._store.stats(tenant_id, agent_id, self._clock.now())
        return StatsResponse(
            records={g.value: stats.records.get(g.value, 0) for g in Grain},
            pending_writes=pending,
            oldest=stats.oldest,
            newest=stats.newest,
        )
