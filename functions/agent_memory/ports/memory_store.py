"""The store whole (`MemoryStore`: every part, as each store adapter implements it), and the
views of it that a use case takes: each lists the parts (one method each, `record_store`,
`retrieval`, `audit`, `directory`, `retention_store`) that its use case calls, or hands the
store on to, and no more (tests/unit/test_port_widths.py keeps them narrow)."""

from __future__ import annotations

from typing import Protocol

from agent_memory.ports.audit import AuditAppend, AuditLog, AuditTrail, SearchCounts, SearchLog
from agent_memory.ports.directory import AgentDirectory, AgentListing, AgentScan, RecordHistogram
from agent_memory.ports.export_store import RecordExport
from agent_memory.ports.knowledge_store import KnowledgeStore
from agent_memory.ports.record_store import (
    AccessCounts,
    ConditionalPut,
    ConversationTail,
    ExperienceUpdates,
    PeriodRecords,
    RecordAliases,
    RecordListing,
    RecordLookup,
    RecordStats,
    RecordStore,
    SoftDeletes,
    StaleMarks,
    UserSummaries,
    ValidityUpdates,
)
from agent_memory.ports.retention_store import Purges, RecordDeletes, RetentionCandidates, RetentionStore
from agent_memory.ports.retrieval import NearestRecord, RecordSearch, Retrieval
from agent_memory.ports.spaces import EmbeddingSpaces

__all__ = [
    "CleanupMemory",
    "DerivableMemory",
    "DerivedMemory",
    "ExportableMemory",
    "FeedbackMemory",
    "ForgettableMemory",
    "HistoryMemory",
    "MarkingMemory",
    "MemoryStore",
    "ReadableMemory",
    "SearchableMemory",
    "SummaryMemory",
    "SupersedingMemory",
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
    """Records and their vectors: every part above, which each store adapter implements whole
    (SQLite, OpenSearch) and the shared contract suite checks. Services take the views below."""


class ReadableMemory(RecordLookup, RecordListing, RecordStats, AuditTrail, Protocol):
    """Reading an agent's memory (`recall.memories`): a record, a page, the counts, the trail."""


class TimelineStore(RecordLookup, PeriodRecords, RecordHistogram, Protocol):
    """The timeline (`recall.timeline`): counts per period, the summaries in a span, one summary."""


class SearchableMemory(RecordSearch, AccessCounts, SearchCounts, Protocol):
    """Search (`recall.search`): candidates, access counts on what it returns, the day's count."""


class SupersedingMemory(RecordLookup, RecordSearch, ValidityUpdates, Protocol):
    """Supersession at write time and in the daily review (`supersession.marking`,
    `supersession.review`): the holder's nearest memories, and their validity set."""


class WritableMemory(
    SupersedingMemory,
    ConversationTail,
    NearestRecord,
    ConditionalPut,
    RecordAliases,
    StaleMarks,
    AuditTrail,
    Protocol,
):
    """Storing a write (`writing.writer`): its context turns, the nearest record (dedup),
    the put if unchanged, an alias for a merge, a summary version's stale mark and its sources'
    trails; and supersession."""


class MarkingMemory(RecordLookup, RecordSearch, UserSummaries, StaleMarks, AuditTrail, Protocol):
    """The stale walk of a forget (`derived.lifecycle`): the summaries up the cascade, a derived
    kind's records, an end user's summaries, each marked stale unless its trail says forgotten."""


class ForgettableMemory(MarkingMemory, SupersedingMemory, SoftDeletes, Protocol):
    """Forgetting and erasure (`governance.forget`): the stale walk, the forget itself, and the
    supersession it takes back."""


class DerivedMemory(RecordLookup, AuditTrail, AuditAppend, SoftDeletes, RecordDeletes, Protocol):
    """The life every derived kind lives (`derived.lifecycle.Lifecycle`): what its job made
    before under an id, the trail that tells a stale record from a forgotten one, the made and
    dropped events, and the drop (a summary deleted, a pattern or profile hidden)."""


class DerivableMemory(DerivedMemory, RecordSearch, Protocol):
    """Patterns and profiles (`derived.derivation.Derivations`): the lifecycle, and their inputs
    and what they made before, found by search."""


class HistoryMemory(RecordLookup, ValidityUpdates, AuditTrail, Protocol):
    """A memory's versions and their restore (`governance.history`)."""


class FeedbackMemory(RecordLookup, ExperienceUpdates, AuditTrail, Protocol):
    """Feedback applied (`experience.feedback`): the experience, its recent feedback, its new confidence."""


class SummaryMemory(DerivedMemory, PeriodRecords, Protocol):
    """Summarizing (`cascade.summarize`): the lifecycle, and the children in a span."""


class CleanupMemory(
    RecordLookup,
    RecordListing,
    AgentScan,
    RetentionCandidates,
    RecordDeletes,
    Purges,
    AuditAppend,
    Protocol,
):
    """Retention (`governance.retention`): every tenant with records, what a plan no longer
    keeps, the working records and their parents' sources, deletes and their events."""


class ExportableMemory(RecordExport, UserSummaries, AgentListing, Protocol):
    """An export (`governance.export`): its pages and counts, an end user's summaries, the tenant's agents."""
