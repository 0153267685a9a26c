"""Models of the HTTP contract (v1): what clients send and what they get back.

They are separate from `MemoryRecord` on purpose: the contract can stay stable while storage
changes, and input models can be strict (``extra="forbid"``, so a misspelt field is a 400 rather
than silently ignored) without constraining what the service stores.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

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
from agent_memory.domain.records import (
    Link,
    MemoryKind,
    MemoryRecord,
    MergedWrite,
    Role,
    Source,
    check_metadata,
)
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


GrainFilter = Grain | Literal["all"]


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
    def of(cls, record: MemoryRecord, text: str) -> MemoryOut:
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
            text=text,
        )


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


class SearchResponse(BaseModel):
    results: list[SearchResult]


class ListResponse(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None


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
