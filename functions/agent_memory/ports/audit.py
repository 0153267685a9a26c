"""What the store logs: the audit trail (who did what to which record, when; kept through
purges) and the counts of searches per day (never the query text)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from agent_memory.model.audit_actions import AuditEvent
from agent_memory.model.operator_views import SearchDay
from agent_memory.ports.effects import counts, writes

__all__ = [
    "AuditAppend",
    "AuditEvent",
    "AuditLog",
    "AuditPage",
    "AuditQuery",
    "AuditTrail",
    "SearchCounts",
    "SearchDays",
    "SearchLog",
]


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """One page of an agent's audit trail (of one record, if given), newest first."""

    tenant_id: str
    agent_id: str
    record_id: str | None = None
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None


class AuditAppend(Protocol):
    """Events added to the audit trail."""

    @writes
    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """Add events to the audit trail (idempotent per record, action and instant)."""
        ...


class AuditTrail(Protocol):
    """An agent's audit trail read back (history, staleness, replay checks)."""

    def audit_events(self, query: AuditQuery) -> AuditPage:
        """The agent's audit trail (of one record, if given), newest first, paginated."""
        ...


class AuditLog(AuditAppend, AuditTrail, Protocol):
    """Who forgot, erased, merged or deleted what, and when: kept through purges."""


class SearchCounts(Protocol):
    """One search counted (the search service)."""

    @counts
    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort: count one search on ``at``'s UTC day, and whether it found nothing.
        Counts only: the query text is never kept."""
        ...


class SearchDays(Protocol):
    """The counts read back per day (the operator's statistics)."""

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> builtins.list[SearchDay]:
        """The agent's search counts per UTC day from ``since`` on, oldest first (days
        without searches are left out)."""
        ...


class SearchLog(SearchCounts, SearchDays, Protocol):
    """Counts of searches and of those that found nothing, per day (never the query text)."""
