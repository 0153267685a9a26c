"""The ports of an export (`governance.export`): the store's paged read of what an export holds,
where export files and their job states are kept, and how an export's lines are written.

`RecordExport` is part of `agent_memory.ports.MemoryStore` (every store adapter implements it and
the contract suite checks it); `ExportArchive` is local files (`adapters.local_exports`) or an S3
bucket (`adapters.s3_exports`); `ExportLines` is the file format, which belongs to the HTTP
contract (`contract.v1_exports`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from agent_memory.governance.rules.export_jobs import ExportItem, ExportState
from agent_memory.model.grains import Grain
from agent_memory.ports.audit import AuditEvent
from agent_memory.ports.record_store import Page


@dataclass(frozen=True, slots=True)
class ExportQuery:
    """One page of a tenant's live records for an export: of one agent (``agent_id``), or of one
    end user (``user_id``) in every agent of the tenant, or both; of ``grains`` when given; whose
    span overlaps ``[start, end]`` when given (an open end: no bound).

    Ordered by agent, then ``occurred_at``, then id (oldest first), keyset-paginated; the cursor
    is opaque and bound to the query it was issued for (another query's cursor is a
    `ValidationFailedError`)."""

    tenant_id: str
    now: datetime
    agent_id: str | None = None
    user_id: str | None = None
    grains: tuple[Grain, ...] | None = None
    start: datetime | None = None
    end: datetime | None = None
    limit: int = 500
    cursor: str | None = None


class RecordExport(Protocol):
    """What an export reads of the store: what it holds a page at a time, how much there is, and
    the audit trail of a page of records at once."""

    def export_records(self, query: ExportQuery) -> Page:
        """One page of `ExportQuery` (``next_cursor`` None after the last)."""
        ...

    def count_records(self, query: ExportQuery) -> int:
        """How many records `ExportQuery` holds in all (its ``cursor`` and ``limit`` ignored)."""
        ...

    def audit_of_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> list[AuditEvent]:
        """Every audit event of the agent about one of ``record_ids``, oldest first (events of
        one instant in the order they were written where the store keeps it)."""
        ...


@dataclass(frozen=True, slots=True)
class ExportLocation:
    """Where a finished export is fetched: a pre-signed ``url`` (S3), or a local ``path`` that
    the local server streams (`GET /v1/admin/exports/{id}/download`)."""

    url: str | None = None
    path: str | None = None
    expires_at: datetime | None = None


class ExportWriter(Protocol):
    """An export's file, written a line at a time (memory stays bounded: a writer holds at most
    one part in memory before it goes out)."""

    def write(self, data: bytes) -> None: ...

    def checkpoint(self) -> dict[str, Any] | None:
        """Make what was written so far durable and say where a later writer goes on from; None
        when it cannot yet (an S3 part must be 5 MiB unless it is the last)."""
        ...

    def finish(self) -> int:
        """Make the file whole and final; its size in bytes."""
        ...

    def abort(self) -> None:
        """Give the file up (a failed export): nothing of it is kept."""
        ...


class ExportArchive(Protocol):
    """Export files and the states of their jobs, by tenant: nothing here reads across tenants."""

    def create(self, state: ExportState) -> None:
        """Keep a new export's state (its id is new: never an overwrite)."""
        ...

    def read(self, tenant_id: str, export_id: str) -> tuple[ExportState, str] | None:
        """The export's state and a tag for `replace`; None when the tenant has no such export."""
        ...

    def replace(self, state: ExportState, tag: str) -> str:
        """Store ``state`` if the stored one is still the one read with ``tag``; the new tag, or
        `ConflictError` (another run changed it)."""
        ...

    def recent(self, tenant_id: str, limit: int) -> list[ExportState]:
        """The tenant's exports, newest first, at most ``limit``."""
        ...

    def writer(self, tenant_id: str, export_id: str, resume: dict[str, Any] | None) -> ExportWriter:
        """The export's file, new (``resume`` None) or from a writer's checkpoint."""
        ...

    def location(self, tenant_id: str, export_id: str, ttl_s: int) -> ExportLocation | None:
        """Where the finished export is fetched (a URL valid ``ttl_s`` seconds); None: no file."""
        ...


class ExportLines(Protocol):
    """The export file's format: a header, one line per memory or summary, and a trailer."""

    def header(self, state: ExportState) -> bytes: ...

    def item(self, item: ExportItem) -> bytes: ...

    def trailer(self, state: ExportState) -> bytes: ...
