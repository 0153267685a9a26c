"""Which agents have memory: the summarization dispatcher's scan across tenants, and the
operator's agent picker and timeline counts."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from agent_memory.model.grains import Grain

__all__ = [
    "AgentDirectory",
    "AgentListing",
    "AgentPage",
    "AgentRef",
    "AgentScan",
    "PeriodScan",
    "RecordHistogram",
]


@dataclass(frozen=True, slots=True)
class PeriodScan:
    """Which (tenant, agent) pairs have live records of ``grain`` whose span overlaps
    ``[start, end)``: one page of the dispatcher's only cross-tenant read, or, with ``tenant_id``,
    of one tenant's agents (a tenant's admin asking for its own summaries)."""

    grain: Grain
    start: datetime
    end: datetime
    cursor: str | None = None
    page_size: int = 500
    tenant_id: str | None = None


@dataclass(frozen=True, slots=True)
class AgentRef:
    tenant_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class AgentPage:
    agents: list[AgentRef]
    next_cursor: str | None


class AgentScan(Protocol):
    """The agents with records in a period (the dispatcher's scan, retention's tenants)."""

    def agents_with_records(self, scan: PeriodScan) -> AgentPage:
        """Every (tenant, agent) `PeriodScan` asks for, one page at a time.

        The summarization dispatcher's primitive: the only cross-tenant read, and it returns
        ids only. Paginated with an opaque cursor.
        """
        ...


class AgentListing(Protocol):
    """A tenant's agents (the operator's picker, an export)."""

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents that have live records, by agent id, paginated (cursor bound to
        the tenant). Never another tenant's: the operator console's agent picker."""
        ...


class RecordHistogram(Protocol):
    """Counts of records per period (the timeline)."""

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> builtins.list[int]:
        """Live ``grain`` records whose ``occurred_at`` is in each ``[edges[i], edges[i + 1])``.

        ``len(edges) - 1`` counts for ascending ``edges`` (the service passes local midnights, so
        the store needs no timezone); the timeline's counts per period.
        """
        ...


class AgentDirectory(AgentScan, AgentListing, RecordHistogram, Protocol):
    """Which agents have memory, and how much of it per period: the dispatcher's and the operator's
    view."""
