"""Models of the HTTP contract (v1): what clients send and what they get back.

They are separate from `MemoryRecord` on purpose: the contract can stay stable while storage
changes, and input models can be strict (``extra="forbid"``, so a misspelt field is a 400 rather
than silently ignored) without constraining what the service stores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.domain.grains import Grain
from agent_memory.domain.limits import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_RESULTS,
    MAX_CONTENT_BYTES,
    MAX_CONTEXT_TOKENS,
    MAX_DAYS_AGO,
    MAX_ITEMS_PER_REQUEST,
    MAX_LINKS,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    MAX_TAGS,
    MAX_TTL_DAYS,
    MIN_CONTEXT_TOKENS,
)
from agent_memory.domain.recall import Context, ContextQuery, Hit, NewMemory, SearchQuery
from agent_memory.domain.records import (
    Link,
    MemoryKind,
    MemoryRecord,
    MergedWrite,
    Role,
    Source,
    check_metadata,
)
from agent_memory.domain.scoring import display_text

# ``POST /v1/admin/summarize`` takes the dispatch request itself (re-exported here): the schedule,
# the CLI and the route accept exactly the same thing.
from agent_memory.domain.summary_jobs import SummarizeRequest, SummaryGrain  # noqa: F401 (re-exported)
from agent_memory.domain.topic_dictionary import MAX_CANONICAL_TERMS, TopicDictionary
from agent_memory.domain.types import (
    ConversationId,
    Score,
    Speaker,
    Tag,
    Topic,
    UserId,
    UtcDatetime,
    visible,
)

if TYPE_CHECKING:  # the store's page types, read by attribute when a response is built
    from agent_memory.domain.operator_views import PeriodView, SearchActivity
    from agent_memory.domain.topic_dictionary import TopicProposal
    from agent_memory.ports import AgentPage, AuditPage, Page, StoredTopicDictionary

_STRICT = ConfigDict(extra="forbid", str_strip_whitespace=False)


def _content_bounded(value: str) -> str:
    if not visible(value):
        raise ValueError("content must not be blank (white space, control and zero-width characters alone)")
    size = len(value.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise ValueError(f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES}")
    return value


class WriteItem(BaseModel):
    """One memory to remember. Only ``content`` is required."""

    model_config = _STRICT

    content: str = Field(description="The memory, kept verbatim (UTF-8, at most 16 KiB).")
    role: Role | None = None
    speaker: Speaker | None = Field(
        default=None, description="Who said it, by name (a conversation turn): searched with it."
    )
    occurred_at: UtcDatetime | None = Field(default=None, description="When it happened; default now.")
    conversation_id: ConversationId | None = None
    topic: Topic | None = None
    importance: Score | None = None
    kind: MemoryKind | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    ttl_days: int | None = Field(default=None, strict=True, ge=1, le=MAX_TTL_DAYS)
    user_id: UserId | None = None
    source: Source | None = None
    links: list[Link] = Field(default_factory=list, max_length=MAX_LINKS)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        return _content_bounded(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(value)

    @field_validator("kind")
    @classmethod
    def _not_summary(cls, value: MemoryKind | None) -> MemoryKind | None:
        if value is MemoryKind.SUMMARY:
            raise ValueError("summaries are made by the service, not written by clients")
        return value


class ConversationMessage(BaseModel):
    """One turn of the conversation form."""

    model_config = _STRICT

    role: Role
    speaker: Speaker | None = None
    content: str
    occurred_at: UtcDatetime | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        return _content_bounded(value)


class WriteRequest(BaseModel):
    """``{"items": [...]}`` or the conversation form ``{"conversation_id", "messages": [...]}``."""

    model_config = _STRICT

    items: list[WriteItem] | None = Field(default=None, min_length=1, max_length=MAX_ITEMS_PER_REQUEST)
    conversation_id: ConversationId | None = None
    messages: list[ConversationMessage] | None = Field(
        default=None, min_length=1, max_length=MAX_ITEMS_PER_REQUEST
    )
    user_id: UserId | None = None

    @model_validator(mode="after")
    def _one_form(self) -> WriteRequest:
        if (self.items is None) == (self.messages is None):
            raise ValueError("give either 'items' or 'messages' (the conversation form), not both")
        if self.items is not None and (self.conversation_id is not None or self.user_id is not None):
            raise ValueError("'conversation_id' and 'user_id' belong inside each item in the items form")
        return self

    def to_new_memories(self) -> list[NewMemory]:
        """What the write use case takes: one `NewMemory` per item (either form)."""
        return [NewMemory(**dict(item)) for item in self.to_items()]

    def fingerprint(self, agent_id: str) -> str:
        """What the request asked, as a hash: the agent and the validated body (not its
        whitespace). An ``Idempotency-Key`` replays only for the same fingerprint."""
        canonical = json.dumps(
            {"agent_id": agent_id, "request": self.model_dump(mode="json")},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()

    def to_items(self) -> list[WriteItem]:
        """Both forms as a list of items (the conversation form shares its id and user)."""
        if self.items is not None:
            return self.items
        assert self.messages is not None
        return [
            WriteItem(
                content=m.content,
                role=m.role,
                speaker=m.speaker,
                occurred_at=m.occurred_at,
                conversation_id=self.conversation_id,
                user_id=self.user_id,
                kind=MemoryKind.CONVERSATION,
            )
            for m in self.messages
        ]


class AcceptedItem(BaseModel):
    id: str
    status: Literal["queued"] = "queued"


class WriteResponse(BaseModel):
    accepted: list[AcceptedItem]

    @classmethod
    def of(cls, ids: Sequence[str]) -> WriteResponse:
        return cls(accepted=[AcceptedItem(id=i) for i in ids])


GrainFilter = Grain | Literal["all"]


def _grain(value: GrainFilter) -> Grain | None:
    """``all`` is no grain filter."""
    return None if value == "all" else Grain(value)


def _check_window(min_days_ago: float, max_days_ago: float | None) -> None:
    """A day window ``[as_of - max_days_ago, as_of - min_days_ago]`` must not be inside out."""
    if max_days_ago is not None and max_days_ago < min_days_ago:
        raise ValueError("max_days_ago must be >= min_days_ago")


class RankingOverrides(BaseModel):
    """Per-request ranking knobs (docs/decisions.md, "Ranking"); each absent one keeps its default."""

    model_config = _STRICT

    lexical_weight: Score | None = Field(default=None, description="Share of the word match in relevance.")
    recency_weight: Score | None = Field(default=None, description="How much recency can damp a score.")
    importance_weight: Score | None = Field(default=None, description="How much importance can damp a score.")
    recency_tau_days: float | None = Field(
        default=None, strict=True, gt=0, le=36_500, description="Recency's time constant."
    )
    time_hints: bool | None = Field(
        default=None,
        strict=True,
        description="Boost memories of a time the query names ('last May', 'two weeks ago').",
    )
    speaker_boost: Score | None = Field(
        default=None,
        description="How much a memory said by someone the query names is lifted (0: not at all).",
    )


class SearchRequest(BaseModel):
    """Search one grain (or ``all``) by meaning and by a window of days before ``as_of``."""

    model_config = _STRICT

    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    grain: GrainFilter = "all"
    min_days_ago: float = Field(default=0, strict=True, ge=0, le=MAX_DAYS_AGO)
    max_days_ago: float | None = Field(default=None, strict=True, ge=0, le=MAX_DAYS_AGO)
    max_results: int = Field(default=DEFAULT_RESULTS, strict=True, ge=1, le=MAX_RESULTS)
    as_of: UtcDatetime | None = None
    kinds: list[MemoryKind] = Field(default_factory=list, max_length=len(MemoryKind))
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    user_id: UserId | None = None
    min_score: Score | None = None
    ranking: RankingOverrides | None = Field(
        default=None, description="This search's ranking weights, in place of the service's defaults."
    )

    @model_validator(mode="after")
    def _window(self) -> SearchRequest:
        _check_window(self.min_days_ago, self.max_days_ago)
        if self.query is not None and not self.query.strip():
            self.query = None
        return self

    def to_query(self) -> SearchQuery:
        return replace(
            _window_query(self),
            max_results=self.max_results,
            kinds=tuple(self.kinds),
            tags=tuple(self.tags),
            min_score=self.min_score,
            ranking=self.ranking.model_dump(exclude_none=True) if self.ranking else {},
        )


class ContextRequest(BaseModel):
    """One block of prompt context for ``query``: the most relevant memories and summaries, packed
    to ``token_budget`` (least relevant dropped first)."""

    model_config = _STRICT

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    token_budget: int = Field(
        default=DEFAULT_CONTEXT_TOKENS, strict=True, ge=MIN_CONTEXT_TOKENS, le=MAX_CONTEXT_TOKENS
    )
    grain: GrainFilter = "all"
    min_days_ago: float = Field(default=0, strict=True, ge=0, le=MAX_DAYS_AGO)
    max_days_ago: float | None = Field(default=None, strict=True, ge=0, le=MAX_DAYS_AGO)
    as_of: UtcDatetime | None = None
    user_id: UserId | None = None

    @model_validator(mode="after")
    def _window(self) -> ContextRequest:
        _check_window(self.min_days_ago, self.max_days_ago)
        if not self.query.strip():
            raise ValueError("query must not be blank")
        return self

    def to_query(self) -> ContextQuery:
        return ContextQuery(search=_window_query(self), token_budget=self.token_budget)


def _window_query(request: SearchRequest | ContextRequest) -> SearchQuery:
    """The search both requests describe (what, which grain, which days, for whom), read in one
    place so the two cannot come to read it differently; a search request adds its filters."""
    return SearchQuery(
        query=request.query,
        grain=_grain(request.grain),
        min_days_ago=request.min_days_ago,
        max_days_ago=request.max_days_ago,
        as_of=request.as_of,
        user_id=request.user_id,
    )


class ContextItem(BaseModel):
    """One memory that made it into the context block, in the order it appears there."""

    id: str
    grain: Grain
    time_key: str | None
    occurred_at: datetime
    score: float
    tokens: int


class ContextResponse(BaseModel):
    context: str = Field(description="The block to put in the prompt: one dated, grain-tagged line each.")
    tokens: int = Field(description="Tokens the block takes (see docs/api.md for how they are counted).")
    token_budget: int
    items: list[ContextItem]
    dropped: int = Field(description="Relevant memories left out to stay within the budget.")

    @classmethod
    def of(cls, context: Context) -> ContextResponse:
        return cls(
            context=context.text,
            tokens=context.tokens,
            token_budget=context.token_budget,
            items=[
                ContextItem(
                    id=line.hit.id,
                    grain=line.hit.record.grain,
                    time_key=line.hit.record.time_key,
                    occurred_at=line.hit.record.occurred_at,
                    score=line.hit.score,
                    tokens=line.tokens,
                )
                for line in context.lines
            ],
            dropped=context.dropped,
        )


class MemoryOut(BaseModel):
    """A record as clients see it (no tenant, no hashes, no internal bookkeeping)."""

    id: str
    agent_id: str
    user_id: str | None
    grain: Grain
    time_key: str | None
    period_start: datetime | None
    period_end: datetime | None
    kind: MemoryKind
    role: str | None
    conversation_id: str | None
    content: str
    text: str
    topic: str | None
    importance: float
    tags: list[str]
    source: Source | None
    links: list[Link]
    metadata: dict[str, Any]
    source_ids: list[str]
    access_count: int
    occurred_at: datetime
    last_seen_at: datetime | None = Field(
        default=None, description="When a merged record was last said again (null: never merged)."
    )
    merged_from: list[MergedWrite] = Field(
        default_factory=list,
        description="Every write this record holds, verbatim and oldest first, when near-identical "
        "writes were merged into it (empty: never merged). Each id reads back this record.",
    )
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None

    @classmethod
    def of(cls, record: MemoryRecord) -> MemoryOut:
        return cls(
            **record.model_dump(
                include={
                    "id",
                    "agent_id",
                    "user_id",
                    "grain",
                    "time_key",
                    "period_start",
                    "period_end",
                    "kind",
                    "role",
                    "conversation_id",
                    "content",
                    "importance",
                    "tags",
                    "source",
                    "links",
                    "metadata",
                    "source_ids",
                    "access_count",
                    "occurred_at",
                    "last_seen_at",
                    "merged_from",
                    "created_at",
                    "updated_at",
                    "expires_at",
                }
            ),
            topic=record.topic_raw,
            text=display_text(record),
        )


class AlsoInOut(BaseModel):
    """A summary that holds this result too, folded into it rather than listed again."""

    grain: Grain
    period: str | None = Field(description="The summary's period, e.g. 2026-W47.")
    id: str = Field(description="Reads the summary back whole (GET .../memories/{id}).")


class SearchResult(BaseModel):
    id: str
    grain: Grain
    time_key: str | None
    kind: MemoryKind
    content: str
    text: str
    score: float
    similarity: float | None
    recency: float
    importance: float
    occurred_at: datetime
    topic: str | None
    user_id: str | None
    conversation_id: str | None
    source: Source | None
    metadata: dict[str, Any]
    tags: list[str]
    also_in: list[AlsoInOut] = Field(
        default_factory=list,
        description="Summaries that repeat this result (searching several grains), folded into it: "
        "one fact takes one place however far up the cascade it is quoted.",
    )

    @classmethod
    def of(cls, hit: Hit) -> SearchResult:
        r = hit.record
        return cls(
            id=r.id,
            grain=r.grain,
            time_key=r.time_key,
            kind=r.kind,
            content=r.content,
            text=hit.text,
            score=hit.score,
            similarity=hit.similarity,
            recency=hit.recency,
            importance=r.importance,
            occurred_at=r.occurred_at,
            topic=r.topic_raw,
            user_id=r.user_id,
            conversation_id=r.conversation_id,
            source=r.source,
            metadata=r.metadata,
            tags=r.tags,
            also_in=[AlsoInOut(grain=a.grain, period=a.period, id=a.id) for a in hit.also_in],
        )


class SearchResponse(BaseModel):
    results: list[SearchResult]

    @classmethod
    def of(cls, hits: Sequence[Hit]) -> SearchResponse:
        return cls(results=[SearchResult.of(h) for h in hits])


class ListResponse(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: Page) -> ListResponse:
        return cls(items=[MemoryOut.of(r) for r in page.records], next_cursor=page.next_cursor)


class StatsResponse(BaseModel):
    records: dict[str, int]
    pending_writes: int
    oldest: datetime | None
    newest: datetime | None


class ForgetResponse(BaseModel):
    """A forget: the record is gone from search at once; the summaries made from it are hidden
    and re-made without it (``stale_summaries``)."""

    id: str
    status: Literal["forgotten"] = "forgotten"
    stale_summaries: list[str] = Field(default_factory=list)


class EraseResponse(BaseModel):
    """Everything of one end user forgotten (right to erasure)."""

    user_id: str
    forgotten: int
    stale_summaries: list[str] = Field(default_factory=list)


class AuditEventOut(BaseModel):
    """One line of the agent's audit trail."""

    record_id: str
    action: str = Field(description="forget, erase, stale, remade or emptied")
    actor: str
    at: datetime
    detail: dict[str, Any] = Field(default_factory=dict)


class AuditResponse(BaseModel):
    items: list[AuditEventOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: AuditPage) -> AuditResponse:
        items = [AuditEventOut.model_validate(e, from_attributes=True) for e in page.events]
        return cls(items=items, next_cursor=page.next_cursor)


class RetentionResponse(BaseModel):
    """What one retention run did, summed over tenants (``POST /v1/admin/retention``)."""

    tenants: int
    deleted: dict[str, int] = Field(description="Records past their grain's cutoff deleted, per grain.")
    kept_unsummarized: int = Field(
        description="Past their cutoff, but kept until a live summary names them among its sources."
    )
    unsummarized_overdue: int = Field(
        default=0,
        description="Of those, kept longer than the maximum unsummarized age (the cascade is behind).",
    )
    summaries_queued: int = Field(
        default=0, description="Summaries queued to be made or refreshed so that the kept records can go."
    )
    purged: int = Field(description="Expired records, and records forgotten longer than the grace period.")
    over_quota: int = Field(description="Working memories deleted to bring an agent back to its quota.")
    decayed: int = Field(description="Working memories whose decayed importance fell below the floor.")
    total_deleted: int


class RetentionRunResponse(BaseModel):
    """``POST /v1/admin/retention``: the run handed to the retention function, or run here."""

    status: Literal["started", "done"] = Field(
        description="started: handed to the retention function (deployed; its report is in its logs "
        "and metrics); done: run in place (the embedded runtime), with its report."
    )
    report: RetentionResponse | None = None


# --- the operator's view: agents, timeline, periods, search outcomes ----------------------------


class AgentOut(BaseModel):
    agent_id: str


class AgentsResponse(BaseModel):
    """The tenant's agents that have live memories, by id (a key bound to agents: those)."""

    items: list[AgentOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: AgentPage) -> AgentsResponse:
        return cls(items=[AgentOut(agent_id=a.agent_id) for a in page.agents], next_cursor=page.next_cursor)


class TimelinePeriod(BaseModel):
    """One period of one grain's lane: a local day of working memory, or one summary."""

    time_key: str = Field(description="The period; for working memory, the local day (YYYY-MM-DD).")
    start: datetime
    end: datetime
    records: int = Field(description="Working memories that day, or the children a summary folded.")
    summary_id: str | None = Field(description="The summary's id; null in the working lane.")


class TimelineLane(BaseModel):
    grain: Grain
    periods: list[TimelinePeriod]


class TimelineResponse(BaseModel):
    """What an agent remembers from ``since`` to ``until`` (local days, inclusive), one lane per
    grain, periods oldest first; periods with nothing are left out."""

    timezone: str
    since: date
    until: date
    lanes: list[TimelineLane]


class PeriodRef(BaseModel):
    grain: Grain
    time_key: str


class PeriodResponse(BaseModel):
    """One summary period: its summary (if made and live) and the children it folds."""

    grain: Grain
    time_key: str
    start: datetime = Field(description="The span the summary covers (local midnights, as UTC).")
    end: datetime
    summary: MemoryOut | None
    child_grain: Grain
    children: list[MemoryOut] = Field(description="The live children in the span, oldest first.")
    children_total: int = Field(description="How many live children there are (children is capped).")
    missing_sources: list[str] = Field(
        description="Ids the summary was made from that are no longer live (forgotten, expired, purged)."
    )
    parent: PeriodRef | None = Field(description="The period of the next grain up that folds this one.")

    @classmethod
    def of(cls, period: PeriodView) -> PeriodResponse:
        return cls(
            grain=period.grain,
            time_key=period.time_key,
            start=period.start,
            end=period.end,
            summary=None if period.summary is None else MemoryOut.of(period.summary),
            child_grain=period.child_grain,
            children=[MemoryOut.of(c) for c in period.children],
            children_total=period.children_total,
            missing_sources=list(period.missing_sources),
            parent=None
            if period.parent is None
            else PeriodRef.model_validate(period.parent, from_attributes=True),
        )


class SearchDayOut(BaseModel):
    day: date
    searches: int
    zero_hits: int


class SearchStatsResponse(BaseModel):
    """Searches of the agent over the last ``days`` UTC days (today included), and how many
    found nothing: counts only, queries are never kept."""

    days: int
    searches: int
    zero_hits: int
    by_day: list[SearchDayOut]

    @classmethod
    def of(cls, activity: SearchActivity) -> SearchStatsResponse:
        return cls.model_validate(activity, from_attributes=True)


class ErrorDetail(BaseModel):
    loc: list[str | int] = Field(default_factory=list)
    msg: str
    type: str


class ErrorBody(BaseModel):
    code: str
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    error: ErrorBody


# --- the tenant's topic dictionary, and summaries made on request --------------------------------


class TopicDictionaryBody(BaseModel):
    """The whole dictionary, replacing the one before; ``{"terms": {}}`` removes it."""

    model_config = _STRICT

    terms: dict[str, list[str]] = Field(
        description="Canonical term -> its synonyms, e.g. "
        '{"launch date": ["release date", "go-live"]}. '
        "Terms are matched case- and space-insensitively and stored normalised.",
        max_length=MAX_CANONICAL_TERMS,
    )

    @field_validator("terms")
    @classmethod
    def _valid(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        TopicDictionary.build(value)  # blank, too long, ambiguous or too large: a 400 saying which
        return value


class TopicDictionaryResponse(BaseModel):
    """The tenant's dictionary as stored (normalised); ``terms`` is empty when it has none."""

    terms: dict[str, list[str]]
    updated_at: UtcDatetime | None = None

    @classmethod
    def of(cls, stored: StoredTopicDictionary | None) -> TopicDictionaryResponse:
        if stored is None or not stored.dictionary:
            return cls(terms={})
        return cls(terms=stored.dictionary.as_dict(), updated_at=stored.updated_at)


class TopicProposalOut(BaseModel):
    topic: str = Field(description="The topic as normalised (lower case, single spaces).")
    count: int = Field(description="How many written memories named it.")
    first_seen: UtcDatetime
    last_seen: UtcDatetime


class TopicProposalsResponse(BaseModel):
    """Unknown topics, most named first (then most recently seen)."""

    items: list[TopicProposalOut]

    @classmethod
    def of(cls, proposals: Sequence[TopicProposal]) -> TopicProposalsResponse:
        return cls(items=[TopicProposalOut.model_validate(p, from_attributes=True) for p in proposals])


class SummarizeResponse(BaseModel):
    grain: SummaryGrain
    periods: list[str]
    jobs_queued: int
