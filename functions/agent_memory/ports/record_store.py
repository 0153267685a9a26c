"""The store's records: written, read, listed, forgotten and marked stale (`RecordStore`), and
what it is handed and answers (`StoredRecord`, `ListQuery`, `Page`, `StoreStats`)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.ports.audit import AuditEvent
from agent_memory.ports.effects import counts, writes
from agent_memory.ports.embedding import Vector
from agent_memory.ports.spaces import SpaceVector

__all__ = [
    "AccessCounts",
    "ConditionalPut",
    "ConversationTail",
    "ExperienceUpdates",
    "ListQuery",
    "Page",
    "PeriodRecords",
    "RecordAliases",
    "RecordListing",
    "RecordLookup",
    "RecordPut",
    "RecordReads",
    "RecordStats",
    "RecordStore",
    "RecordWrites",
    "SoftDeletes",
    "StaleMarks",
    "StoreStats",
    "StoredRecord",
    "UserSummaries",
    "ValidityUpdates",
]


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record with its embeddings, as the writer hands it to the store: ``vector`` in the
    deployment's space (None: the tenant's records are embedded by its own model only), and its
    vectors in a tenant's own spaces (`agent_memory.ports.spaces`)."""

    record: MemoryRecord
    vector: Vector | None
    spaces: tuple[SpaceVector, ...] = ()


@dataclass(frozen=True, slots=True)
class ListQuery:
    """One page of an agent's live records, newest ``occurred_at`` first (of one grain, if
    given). ``cursor`` is opaque and bound to the agent and grain it was issued for."""

    tenant_id: str
    agent_id: str
    now: datetime
    grain: Grain | None = None
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    records: list[MemoryRecord]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class StoreStats:
    records: dict[str, int] = field(default_factory=dict)
    oldest: datetime | None = None
    newest: datetime | None = None


class RecordLookup(Protocol):
    """A record by id or alias: the read nearly every use case starts from."""

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        """The record with that id or alias, deleted ones included (the caller decides)."""
        ...


class RecordListing(Protocol):
    """Pages of an agent's live records (the API's list, retention's walk)."""

    def list(self, query: ListQuery) -> Page:
        """One page of live records (see `ListQuery`)."""
        ...


class ConversationTail(Protocol):
    """The turns of a conversation before a new one (the writer's context)."""

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> builtins.list[MemoryRecord]:
        """The last ``limit`` live working records of one conversation that occurred before
        ``before``, oldest first: the turns a new turn is embedded and indexed with."""
        ...


class PeriodRecords(Protocol):
    """The records of one period (the summarizer's children, the timeline's summaries)."""

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> builtins.list[MemoryRecord]:
        """Every live record of ``grain`` whose span overlaps ``[start, end)``, oldest first.

        The summarizer's primitive: the children of one period, completely (no limit, no page),
        ordered by ``occurred_at`` then id. Forgotten records and records expired at ``now`` are
        left out.
        """
        ...


class UserSummaries(Protocol):
    """The summaries that name an end user (erasure, export)."""

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> builtins.list[MemoryRecord]:
        """The agent's live summaries whose ``user_ids`` name that end user (erasure re-makes them)."""
        ...


class RecordStats(Protocol):
    """Counts of an agent's live records."""

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain and the oldest and newest ``occurred_at``."""
        ...


class RecordPut(Protocol):
    """Records written whole."""

    @writes
    def put(self, items: Sequence[StoredRecord]) -> None:
        """Insert or overwrite by id (summaries are re-made in place this way)."""
        ...


class ConditionalPut(Protocol):
    """A record written only if it is still as read (the writer)."""

    @writes
    def put_if(
        self, item: StoredRecord, read: MemoryRecord | None, events: Sequence[AuditEvent] = ()
    ) -> bool:
        """`put` of one record, then ``events``, only if the record under its id (not an alias)
        is still as read: absent when ``read`` is None, else with ``read``'s ``deleted_at`` and
        ``updated_at``; check and write atomic. False, nothing written, if it changed: a forget,
        stale mark or delete between the writer's read and its put wins over the put."""
        ...


class RecordAliases(Protocol):
    """Ids that resolve to another record (a write merged into one)."""

    @writes
    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        """Make ``alias_id`` resolve to ``record_id`` (a write merged into an existing record)."""
        ...


class SoftDeletes(Protocol):
    """Records forgotten."""

    @writes
    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Mark the record deleted and append the audit event. False if no live record matched."""
        ...


class StaleMarks(Protocol):
    """Derived records hidden until they are re-made."""

    @writes
    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Hide a summary until it is re-made: set its ``deleted_at`` to ``event.at`` (again, if
        it is already stale) and append the audit event. False if the agent has no such record.

        ``deleted_at`` is the staleness mark: an upsert of a summary made before it is refused
        by the writer, so a re-make that raced a later forget never brings the fact back.
        """
        ...


class ExperienceUpdates(Protocol):
    """An experience's confidence moved by feedback."""

    @writes
    def set_experience(
        self, tenant_id: str, agent_id: str, record_id: str, experience: Experience, event: AuditEvent
    ) -> bool:
        """Replace a live record's experience (feedback moved its confidence), set its
        ``updated_at`` to ``event.at`` and append the audit event, leaving every other field and
        the vector as they are. False (and no event) if the agent has no such live record: a
        record forgotten in the meantime stays forgotten."""
        ...


class ValidityUpdates(Protocol):
    """A memory's supersession fields."""

    @writes
    def set_validity(
        self, tenant_id: str, agent_id: str, record_id: str, validity: RecordValidity, event: AuditEvent
    ) -> bool:
        """Replace a live record's supersession fields (`RecordValidity`), move its ``updated_at``
        forward to ``event.at`` and append the audit event, leaving its content and vectors as
        they are. False (and no event) if the agent has no such live record."""
        ...


class AccessCounts(Protocol):
    """Access counts of what a search returned."""

    @counts
    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort: bump access_count and last_accessed_at of records a search returned."""
        ...


class RecordReads(
    RecordLookup, RecordListing, ConversationTail, PeriodRecords, UserSummaries, RecordStats, Protocol
):
    """Records read: by id, a page, a conversation's tail, a period, an end user's summaries, counts."""


class RecordWrites(
    RecordPut,
    ConditionalPut,
    RecordAliases,
    SoftDeletes,
    StaleMarks,
    ExperienceUpdates,
    ValidityUpdates,
    AccessCounts,
    Protocol,
):
    """Records written, forgotten, marked stale, changed in place, counted."""


class RecordStore(RecordReads, RecordWrites, Protocol):
    """Records by id: written, read, listed, forgotten and marked stale; the reads that walk a
    conversation, a period or an end user's summaries. One part per method, so that a use case
    takes the methods it calls (`agent_memory.ports.memory_store`) and no more."""
