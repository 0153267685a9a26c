"""Ports: the narrow interfaces between the services and the outside world.

Services depend on these Protocols only. Adapters (`agent_memory.adapters`) implement them and
are the only modules that import a cloud SDK or a model runtime. Every port is small on purpose:
a method exists because a use case needs it.

Score contract: similarities are cosine similarities of L2-normalised vectors, higher = more
similar, in [-1, 1]. Lexical scores are normalised by the store into [0, 1], higher = better.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from agent_memory.domain.audit_actions import AuditAction  # noqa: F401 (re-exported: the audit port's vocabulary)
from agent_memory.domain.caller import Caller
from agent_memory.domain.experience import Experience
from agent_memory.domain.grains import Grain
from agent_memory.domain.keys import KeyInfo, NewKey
from agent_memory.domain.knowledge import (  # noqa: F401 (re-exported: the knowledge port's vocabulary)
    DocumentPage,
    KnowledgeDocument,
    Passage,
    PassageCandidate,
)
from agent_memory.domain.operator_views import SearchDay
from agent_memory.domain.recall import Found, SearchQuery
from agent_memory.domain.records import MemoryKind, MemoryRecord, RecordValidity
from agent_memory.domain.summary_jobs import SummarizeJob
from agent_memory.domain.topic_dictionary import TopicDictionary, TopicProposal

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]

# Re-exported: the knowledge and embedding-space ports are parts of `MemoryStore`.
from agent_memory.ports.export_store import RecordExport as RecordExport  # noqa: E402
from agent_memory.ports.knowledge_store import KnowledgeStore as KnowledgeStore  # noqa: E402
from agent_memory.ports.knowledge_store import PassageQuery as PassageQuery  # noqa: E402
from agent_memory.ports.knowledge_store import StoredPassage as StoredPassage  # noqa: E402
from agent_memory.ports.spaces import EmbeddingSpaces as EmbeddingSpaces  # noqa: E402
from agent_memory.ports.spaces import SpaceVector as SpaceVector  # noqa: E402


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores search candidates against the query with a cross-encoder (a second opinion on
    relevance that reads query and memory together). Optional: none by default."""

    @property
    def model_id(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance in [0, 1] per document, in the documents' order."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Shape ``(len(texts), dimension)``, each row of unit length. Empty input, shape (0, dim)."""
        ...


@dataclass(frozen=True, slots=True)
class QueueMessage:
    """One write on its way to the writer.

    ``group_id`` is ``tenant:agent:grain``: one writer at a time per slice. ``dedup_id`` names one
    send (one acceptance of a write, one version of a summary): the queue drops a resend of that
    send within its window, never a later acceptance of the same content.
    """

    group_id: str
    dedup_id: str
    body: str


@dataclass(frozen=True, slots=True)
class Job:
    """One unit of background work (a summarize job) on its way to a worker.

    ``key`` names what the job is about (``tenant:agent:grain:time_key``): a local queue runs two
    jobs with the same key one after the other; SQS standard queues ignore it.
    """

    key: str
    body: str

    @classmethod
    def of(cls, job: SummarizeJob) -> Job:
        """A summarize job as a queue message: keyed by its agent-period."""
        return cls(key=job.key, body=job.model_dump_json(exclude_none=True))


class JobQueue(Protocol):
    """Background jobs: at-least-once and unordered, so every job must be idempotent."""

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        """Enqueue all jobs, each visible after ``delay_s`` seconds (best effort), or raise
        `DependencyError`."""
        ...


class RetentionStarter(Protocol):
    """Starts a retention run elsewhere (the retention function), without waiting for it."""

    def start(self, reason: str, tenants: Sequence[str] | None = None) -> None:
        """Hand the run over (of ``tenants`` only, if given), or raise `DependencyError`."""
        ...


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """One child of a summary as a summarizer reads it: what it is dated, and what it says."""

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One summarizer call: the children of ``period`` at ``grain``; ``part=(i, n)`` when they are
    the i-th of n chunks of a period too large for one call (the prompt says so).

    ``purpose="pattern"``: the children are experiences that say the same thing across runs,
    the most typical first; the answer is one statement of what they have in common (a
    summarizer without a model states the first). ``purpose="profile"``: the children are what
    ``subject`` said about themselves, oldest first; the answer is what is known about them.
    ``purpose="supersession"``: the children are numbered pairs of an older and a newer memory;
    the answer is one line per pair, ``"<n>: yes"`` when the newer replaces the older, else
    ``"<n>: no"`` (a summarizer without a model answers nothing)."""

    grain: Grain
    period: str
    children: Sequence[SummaryInput]
    part: tuple[int, int] | None = None
    purpose: Literal["period", "pattern", "profile", "supersession"] = "period"
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryText:
    """What one summarizer call made, and what made it (recorded on the summary).

    Token counts are the model's own (0 where the summarizer runs no model).
    """

    text: str
    model_id: str
    prompt_version: str
    input_tokens: int = 0
    output_tokens: int = 0


@runtime_checkable
class Summarizer(Protocol):
    """Folds the children of one period into one dated summary text, in one call.

    The caller keeps each call within ``max_input_chars`` of children (it folds more in chunks:
    each chunk summarized with ``part=(i, n)``, then the partial summaries summarized again), and
    relies on an answer of at most ``max_output_chars``. The same inputs give the same text (a
    model at temperature 0, or a deterministic algorithm), so re-runs are cheap to compare.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    @property
    def max_input_chars(self) -> int: ...

    @property
    def max_output_chars(self) -> int: ...

    def summarize(self, request: SummaryRequest) -> SummaryText: ...


class WriteQueue(Protocol):
    def send(self, messages: Sequence[QueueMessage]) -> None:
        """Enqueue all messages, or raise `DependencyError` (none of them may then be assumed sent)."""
        ...


class DeadLetters(Protocol):
    """Where a message goes that can never succeed (a poison message), with the reason why."""

    def put(self, message: QueueMessage, reason: str) -> None: ...


#: The reason of a dead letter that used up its deliveries (every queue words it the same).
MAX_RECEIVES_REASON = "max receive count exceeded"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A write that will not be retried until someone redrives it, and why.

    ``reason`` is what the writer recorded (a poison message's parse error), or "max receive
    count exceeded" for a message the queue moved after its deliveries were spent. ``failed_at``
    is when it entered the dead letters (epoch seconds). ``receive_count`` is the deliveries it
    had before, where the queue keeps that (None: it does not, as on SQS).
    """

    id: str
    group_id: str
    dedup_id: str
    body: str
    reason: str
    failed_at: float
    receive_count: int | None


class DeadLetterQueue(DeadLetters, Protocol):
    """The operator's side of the dead letters (`agent-memory dlq list | redrive`)."""

    def dead_letters(self) -> builtins.list[DeadLetter]:
        """The dead letters with their reasons, oldest first within each group."""
        ...

    def redrive(self, ids: Iterable[str] | None = None) -> int:
        """Move dead letters (all, or those ``ids``) back to the tail of their groups on the
        write queue, in group order; how many moved. Safe to run again after a crash."""
        ...


@dataclass(frozen=True, slots=True)
class IdempotentResult:
    """What an idempotent call answered, and whether it was a replay of an earlier call's answer."""

    result: dict[str, Any]
    replayed: bool


class Idempotency(Protocol):
    """Runs a request once per idempotency key and replays its first answer for a while.

    ``key`` names one request (the caller scopes it, e.g. by tenant); ``fingerprint`` is a hash of
    what the request asked. The first call with a key runs ``compute`` and keeps its JSON result;
    a later call with the same key and fingerprint gets that result back without running anything.
    The same key with another fingerprint raises `IdempotencyKeyReusedError`; while the first call
    is still running, `IdempotencyInProgressError`. When ``compute`` raises, nothing is kept, so
    a retry runs again. A store that cannot be reached raises `DependencyError`.
    """

    def run(self, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]) -> IdempotentResult: ...


class PendingWrites(Protocol):
    """Accepted writes not yet stored, so a client can wait for its writes (`stats.pending_writes`).

    Keyed by record id, so at-least-once delivery cannot make the count drift.
    """

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Mark them pending for a short lease: a crash before `queued` leaves no lasting mark."""
        ...

    def queued(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Their messages are on the queue: pending marks (never a ``done`` tombstone) now last
        until the writer clears them, or the adapter's TTL for a write that is lost."""
        ...

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """The writer stored them. Leaves a tombstone for the queue's deduplication window, so a
        client retry that the queue will drop as a duplicate is not counted pending again."""
        ...

    def discard(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Undo `add` without a tombstone: the messages never reached the queue."""
        ...

    def count(self, tenant_id: str, agent_id: str) -> int: ...


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record with its embeddings, as the writer hands it to the store: ``vector`` in the
    deployment's space (None: the tenant's records are embedded by its own model only), and its
    vectors in a tenant's own spaces (`agent_memory.ports.spaces`)."""

    record: MemoryRecord
    vector: Vector | None
    spaces: tuple[SpaceVector, ...] = ()


@dataclass(frozen=True, slots=True)
class StoreQuery:
    """A search over one agent's memory. Tenant and agent are mandatory: there is no global search.

    ``start``/``end`` bound the window: a record matches when its span (its period, or its
    ``occurred_at``) overlaps ``[start, end]``. Deleted records and records expired at ``now``
    never match.
    """

    tenant_id: str
    agent_id: str
    now: datetime
    grains: tuple[Grain, ...] | None = None
    vector: Vector | None = None
    text: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    kinds: tuple[MemoryKind, ...] = ()
    tags: tuple[str, ...] = ()
    user_id: str | None = None
    #: Only experiences at least this sure (records without a confidence never match).
    min_confidence: float | None = None
    #: The embedding space ``vector`` is in (`agent_memory.ports.spaces`).
    space: str = ""
    limit: int = 50


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
class AuditQuery:
    """One page of an agent's audit trail (of one record, if given), newest first."""

    tenant_id: str
    agent_id: str
    record_id: str | None = None
    limit: int = 50
    cursor: str | None = None


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
class Neighbourhood:
    """Which records a new write may be merged into (`domain.dedup`), as a store filter.

    The store applies it inside the vector search, so the nearest record it returns is one the
    write may merge with (filtering after a top-1 search would let another user's record hide
    this user's duplicate). ``match_user``/``match_conversation``: the candidate's ``user_id`` /
    ``conversation_id`` equals the given one (None matches only records without one);
    ``since``/``until``: its ``occurred_at`` lies in ``[since, until)``.
    """

    user_id: str | None = None
    conversation_id: str | None = None
    match_user: bool = False
    match_conversation: bool = False
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class NearestQuery:
    """The live record of ``grain`` closest to ``vector`` (``within`` a neighbourhood, if
    given): what dedup-on-write asks before it stores a record."""

    tenant_id: str
    agent_id: str
    grain: Grain
    vector: Vector
    now: datetime
    within: Neighbourhood | None = None
    space: str = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record the store found, with the evidence it found it by.

    ``similarity`` is the cosine to the query vector (present for every candidate when the query
    had a vector); ``lexical`` is the normalised lexical score (None: no lexical match). The
    order and the scores follow `domain.fusion`, on every store.
    """

    record: MemoryRecord
    similarity: float | None = None
    lexical: float | None = None


@dataclass(frozen=True, slots=True)
class Page:
    records: list[MemoryRecord]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class StoreStats:
    records: dict[str, int] = field(default_factory=dict)
    oldest: datetime | None = None
    newest: datetime | None = None


@dataclass(frozen=True, slots=True)
class AgentRef:
    tenant_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class AgentPage:
    agents: list[AgentRef]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One line of an agent's audit trail: who did what to which record, when.

    ``action`` is one of `AuditAction`; ``detail`` holds what the action needs to be understood
    later (the summaries a forget made stale, the records a re-made summary dropped), as JSON.
    """

    tenant_id: str
    agent_id: str
    record_id: str
    action: str
    actor: str
    at: datetime
    detail: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None


class TenantPlans(Protocol):
    """A tenant's plan, as the tenant record the authorizer reads names it (retention's input)."""

    def plan_of(self, tenant_id: str) -> str | None:
        """The plan's name; None when the tenant is unknown (the default plan applies)."""
        ...


class RecordStore(Protocol):
    """Records by id: written, read, listed, forgotten and marked stale; the reads that walk a
    conversation, a period or an end user's summaries."""

    def put(self, items: Sequence[StoredRecord]) -> None:
        """Insert or overwrite by id (summaries are re-made in place this way)."""
        ...

    def put_if(
        self, item: StoredRecord, read: MemoryRecord | None, events: Sequence[AuditEvent] = ()
    ) -> bool:
        """`put` of one record, then ``events``, only if the record under its id (not an alias)
        is still as read: absent when ``read`` is None, else with ``read``'s ``deleted_at`` and
        ``updated_at``; check and write atomic. False, nothing written, if it changed: a forget,
        stale mark or delete between the writer's read and its put wins over the put."""
        ...

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        """The record with that id or alias, deleted ones included (the caller decides)."""
        ...

    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        """Make ``alias_id`` resolve to ``record_id`` (a write merged into an existing record)."""
        ...

    def list(self, query: ListQuery) -> Page:
        """One page of live records (see `ListQuery`)."""
        ...

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> builtins.list[MemoryRecord]:
        """The last ``limit`` live working records of one conversation that occurred before
        ``before``, oldest first: the turns a new turn is embedded and indexed with."""
        ...

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> builtins.list[MemoryRecord]:
        """Every live record of ``grain`` whose span overlaps ``[start, end)``, oldest first.

        The summarizer's primitive: the children of one period, completely (no limit, no page),
        ordered by ``occurred_at`` then id. Forgotten records and records expired at ``now`` are
        left out.
        """
        ...

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> builtins.list[MemoryRecord]:
        """The agent's live summaries whose ``user_ids`` name that end user (erasure re-makes them)."""
        ...

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Mark the record deleted and append the audit event. False if no live record matched."""
        ...

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Hide a summary until it is re-made: set its ``deleted_at`` to ``event.at`` (again, if
        it is already stale) and append the audit event. False if the agent has no such record.

        ``deleted_at`` is the staleness mark: an upsert of a summary made before it is refused
        by the writer, so a re-make that raced a later forget never brings the fact back.
        """
        ...

    def set_experience(
        self, tenant_id: str, agent_id: str, record_id: str, experience: Experience, event: AuditEvent
    ) -> bool:
        """Replace a live record's experience (feedback moved its confidence), set its
        ``updated_at`` to ``event.at`` and append the audit event, leaving every other field and
        the vector as they are. False (and no event) if the agent has no such live record: a
        record forgotten in the meantime stays forgotten."""
        ...

    def set_validity(
        self, tenant_id: str, agent_id: str, record_id: str, validity: RecordValidity, event: AuditEvent
    ) -> bool:
        """Replace a live record's supersession fields (`RecordValidity`), move its ``updated_at``
        forward to ``event.at`` and append the audit event, leaving its content and vectors as
        they are. False (and no event) if the agent has no such live record."""
        ...

    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort: bump access_count and last_accessed_at of records a search returned."""
        ...

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain and the oldest and newest ``occurred_at``."""
        ...


class Retrieval(Protocol):
    """Finding records by meaning and by words: the raw evidence, ranked by the services
    (`domain.fusion` says how it is handed over)."""

    def nearest(self, query: NearestQuery) -> tuple[MemoryRecord, float] | None:
        """The record `NearestQuery` asks for, and its cosine; None when there is none."""
        ...

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by record id.

        Without vector and text: the newest live records in the window, newest first.
        """
        ...


class AuditLog(Protocol):
    """Who forgot, erased, merged or deleted what, and when: kept through purges."""

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """Add events to the audit trail (idempotent per record, action and instant)."""
        ...

    def audit_events(self, query: AuditQuery) -> AuditPage:
        """The agent's audit trail (of one record, if given), newest first, paginated."""
        ...


class SearchLog(Protocol):
    """Counts of searches and of those that found nothing, per day (never the query text)."""

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort: count one search on ``at``'s UTC day, and whether it found nothing.
        Counts only: the query text is never kept."""
        ...

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> builtins.list[SearchDay]:
        """The agent's search counts per UTC day from ``since`` on, oldest first (days
        without searches are left out)."""
        ...


class AgentDirectory(Protocol):
    """Which agents have memory, and how much of it per period: the dispatcher's and the operator's
    view."""

    def agents_with_records(self, scan: PeriodScan) -> AgentPage:
        """Every (tenant, agent) `PeriodScan` asks for, one page at a time.

        The summarization dispatcher's primitive: the only cross-tenant read, and it returns
        ids only. Paginated with an opaque cursor.
        """
        ...

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents that have live records, by agent id, paginated (cursor bound to
        the tenant). Never another tenant's: the operator console's agent picker."""
        ...

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> builtins.list[int]:
        """Live ``grain`` records whose ``occurred_at`` is in each ``[edges[i], edges[i + 1])``.

        ``len(edges) - 1`` counts for ascending ``edges`` (the service passes local midnights, so
        the store needs no timezone); the timeline's counts per period.
        """
        ...


class RetentionStore(Protocol):
    """What retention reads and deletes. Every method is scoped to one tenant and agent (or says so)."""

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

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """Hard-delete these records of the agent (and the aliases pointing at them); how many
        went. The audit trail stays. Idempotent: ids already gone are skipped."""
        ...

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Hard-delete the tenant's records expired at ``now`` and those forgotten before
        ``forgotten_before`` (the end of the grace period); how many went. Idempotent.

        Each live record that goes because it expired leaves an audit event (``retention``,
        ``{"rule": "expired"}``, actor ``retention``, at ``now``); a forgotten one has its
        forget event already."""
        ...

    # -- what an operator reads: the tenant's agents, a timeline, search outcomes ---------------

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """Hard-delete the tenant's records of ``grain`` whose span ended before ``cutoff``.

        Retention's primitive: every agent of the tenant, deleted ones included. Returns how many
        records were removed. Idempotent.
        """
        ...


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


class Searcher(Protocol):
    """What `ContextService` needs of search (`services.search.SearchService` is one)."""

    def search(self, tenant_id: str, agent_id: str, request: SearchQuery) -> list[Found]: ...


@dataclass(frozen=True, slots=True)
class StoredTopicDictionary:
    """A tenant's topic dictionary as stored, and when it was last replaced."""

    dictionary: TopicDictionary
    updated_at: datetime


class TopicStore(Protocol):
    """Per-tenant topic dictionaries and the unknown topics writes named (`domain.topics`).

    Every method takes the tenant from the caller's key; nothing here reads across tenants.
    """

    def get_dictionary(self, tenant_id: str) -> StoredTopicDictionary | None:
        """The tenant's dictionary, or None when it has none."""
        ...

    def put_dictionary(self, tenant_id: str, dictionary: TopicDictionary, at: datetime) -> None:
        """Replace the tenant's dictionary; an empty one removes it."""
        ...

    def record_proposals(self, tenant_id: str, counts: Mapping[str, int], at: datetime) -> None:
        """Add ``counts`` to the tenant's unknown topics (normalised), seen last at ``at``."""
        ...

    def list_proposals(self, tenant_id: str, now: datetime) -> builtins.list[TopicProposal]:
        """The tenant's unknown topics seen within `PROPOSAL_TTL_DAYS` of ``now``, in any order."""
        ...


class KeyStore(Protocol):
    """Where API keys live: SQLite locally (`LocalKeyStore`), DynamoDB when deployed.

    The `keys` CLI commands and the authorizer depend on this and nothing else, so both work
    against either store.
    """

    def create(self, new: NewKey) -> tuple[str, str]:
        """Store a new key (or ``new.key``) and return ``(key_id, key)``; only its hash is kept."""
        ...

    def lookup(self, key: str) -> Caller | None:
        """The caller an active key stands for; None for an unknown or revoked key."""
        ...

    def list(self) -> list[KeyInfo]:
        """Every key, revoked ones included, oldest first."""
        ...

    def revoke(self, key_id: str) -> bool:
        """Revoke an active key; False when no active key has that id."""
        ...

    def grant_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        """Let keys bound to agent ``reader`` read agent ``owner``'s memory; False if they could."""
        ...

    def revoke_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        """Take that back; False if there was no such grant."""
        ...

    def readers_of(self, tenant_id: str, owner: str) -> builtins.list[str]:
        """The agents granted read access to ``owner``'s memory, sorted."""
        ...
