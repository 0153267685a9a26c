"""The store whole (`MemoryStore`: every part, as each store adapter implements it), and the
views of it that a use case takes (the parts it calls, and no more)."""

from __future__ import annotations

from typing import Protocol

from agent_memory.ports.audit import AuditLog, SearchLog
from agent_memory.ports.directory import AgentDirectory
from agent_memory.ports.export_store import RecordExport
from agent_memory.ports.knowledge_store import KnowledgeStore
from agent_memory.ports.record_store import RecordStore
from agent_memory.ports.retention_store import RetentionStore
from agent_memory.ports.retrieval import Retrieval
from agent_memory.ports.spaces import EmbeddingSpaces

__all__ = [
    "CleanupMemory",
    "ExportableMemory",
    "MemoryStore",
    "ReadableMemory",
    "SearchableMemory",
    "SummaryMemory",
    "TimelineStore",
    "WritableMemory",
]


class MemoryStore(
    RecordStore,
    Retrieval,
    AuditLog,
    SearchLog,
    AgentDirectory,
    RetentionStore,
    KnowledgeStore,
    EmbeddingSpaces,
    RecordExport,
    Protocol,
):
    """Records and their vectors: every narrow port above, which each store adapter implements
    whole (SQLite, OpenSearch) and the shared contract suite checks. Services take the narrow
    ports they use."""


class ReadableMemory(RecordStore, AuditLog, Protocol):
    """What reading an agent's memory needs of the store: its records and its audit trail."""


class TimelineStore(RecordStore, AgentDirectory, Protocol):
    """What the timeline needs of the store: counts per period and the summaries in a span."""


class SearchableMemory(RecordStore, Retrieval, SearchLog, Protocol):
    """What search needs of the store: candidates, access counts on what it returns, the log."""


class WritableMemory(RecordStore, Retrieval, AuditLog, Protocol):
    """What storing and forgetting need: records, the nearest one (dedup), the audit trail."""


class SummaryMemory(RecordStore, AuditLog, RetentionStore, Protocol):
    """What summarizing needs: the children in a span, the audit trail (staleness), deletes of
    summaries whose children are all gone."""


class CleanupMemory(RecordStore, AuditLog, AgentDirectory, RetentionStore, Protocol):
    """What retention needs: every agent with records, what a plan no longer keeps, deletes."""


class ExportableMemory(RecordExport, RecordStore, AgentDirectory, Protocol):
    """What an export reads: its pages and counts, an end user's summaries, the tenant's agents."""
