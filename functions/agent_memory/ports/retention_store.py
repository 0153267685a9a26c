"""Retention's ports: what it reads and deletes of the store, where a tenant's plan comes from,
and where the admin route hands a run to."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from agent_memory.model.grains import Grain
from agent_memory.ports.effects import writes
from agent_memory.ports.record_store import Page

__all__ = [
    "AgeDeletes",
    "Purges",
    "RecordDeletes",
    "RetentionCandidates",
    "RetentionStarter",
    "RetentionStore",
    "TenantPlans",
]


class RetentionCandidates(Protocol):
    """The records retention may delete, page by page."""

    def retention_candidates(
        self, tenant_id: str, grain: Grain, cutoff: datetime, cursor: str | None = None, limit: int = 1000
    ) -> Page:
        """One page of the tenant's ``grain`` records whose span ended before ``cutoff``.

        Retention's reading primitive, deleted and expired records included, every agent of the
        tenant, in a stable order (span end, then a store order); ``next_cursor`` is None after
        the last page. Retention reads, decides per record (is it summarized yet?) and deletes
        with `delete_records`: records it keeps stay, and the cursor walks past them.
        """
        ...


class RecordDeletes(Protocol):
    """Records deleted for good (retention, a summary no child makes any more)."""

    @writes
    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """Hard-delete these records of the agent (and the aliases pointing at them); how many
        went. The audit trail stays. Idempotent: ids already gone are skipped."""
        ...


class Purges(Protocol):
    """Expired and long-forgotten records deleted for good."""

    @writes
    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Hard-delete the tenant's records expired at ``now`` and those forgotten before
        ``forgotten_before`` (the end of the grace period); how many went. Idempotent.

        Each live record that goes because it expired leaves an audit event (``retention``,
        ``{"rule": "expired"}``, actor ``retention``, at ``now``); a forgotten one has its
        forget event already."""
        ...


class AgeDeletes(Protocol):
    """A grain's records deleted for good by age."""

    @writes
    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """Hard-delete the tenant's records of ``grain`` whose span ended before ``cutoff``.

        Retention's primitive: every agent of the tenant, deleted ones included. Returns how many
        records were removed. Idempotent.
        """
        ...


class RetentionStore(RetentionCandidates, RecordDeletes, Purges, AgeDeletes, Protocol):
    """What retention reads and deletes. Every method is scoped to one tenant and agent (or says so)."""


class TenantPlans(Protocol):
    """A tenant's plan, as the tenant record the authorizer reads names it (retention's input)."""

    def plan_of(self, tenant_id: str) -> str | None:
        """The plan's name; None when the tenant is unknown (the default plan applies)."""
        ...


class RetentionStarter(Protocol):
    """Starts a retention run elsewhere (the retention function), without waiting for it."""

    def start(self, reason: str, tenants: Sequence[str] | None = None) -> None:
        """Hand the run over (of ``tenants`` only, if given), or raise `DependencyError`."""
        ...
