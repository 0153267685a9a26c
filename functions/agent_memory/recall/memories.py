"""Reading an agent's memory: get, list, stats and the audit trail (forgetting: `forget`)."""

from __future__ import annotations

from agent_memory.errors import NotFoundError
from agent_memory.model.grains import Grain
from agent_memory.model.operator_views import AgentStats
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import AuditPage, AuditQuery, Clock, ListQuery, Page, PendingWrites, ReadableMemory


class MemoriesService:
    def __init__(self, store: ReadableMemory, pending: PendingWrites, clock: Clock) -> None:
        self._store = store
        self._pending = pending
        self._clock = clock

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord:
        record = self._store.get(tenant_id, agent_id, record_id)
        if record is None or not record.is_live(self._clock.now()):
            raise NotFoundError("memory not found")
        return record

    def list(
        self, tenant_id: str, agent_id: str, grain: Grain | None, limit: int, cursor: str | None
    ) -> Page:
        return self._store.list(
            ListQuery(tenant_id, agent_id, self._clock.now(), grain=grain, limit=limit, cursor=cursor)
        )

    def audit(
        self, tenant_id: str, agent_id: str, record_id: str | None, limit: int, cursor: str | None
    ) -> AuditPage:
        return self._store.audit_events(
            AuditQuery(tenant_id, agent_id, record_id=record_id, limit=limit, cursor=cursor)
        )

    def stats(self, tenant_id: str, agent_id: str) -> AgentStats:
        # Pending first: a write stored in between is then counted twice, never missed.
        pending = self._pending.count(tenant_id, agent_id)
        stats = self._store.stats(tenant_id, agent_id, self._clock.now())
        return AgentStats(
            records={g.value: stats.records.get(g.value, 0) for g in Grain},
            pending_writes=pending,
            oldest=stats.oldest,
            newest=stats.newest,
        )
