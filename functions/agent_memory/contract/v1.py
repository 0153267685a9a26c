"""Models of the HTTP contract (v1): what clients send and what they get back.

They are separate from `MemoryRecord` on purpose: the contract can stay stable while storage
changes, and input models can be strict (``extra="forbid"``, so a misspelt field is a 400 rather
than silently ignored) without constraining what the service stores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.contract.v1_experience import ExperienceOut
from agent_memory.experience.rules.confidence import DEFAULT_CONFIDENCE, MAX_EXPERIENCE_TEXT, Experience
from agent_memory.model.grains import Grain

# ``POST /v1/admin/summarize`` takes the dispatch request itself (re-exported here): the schedule,
# the CLI and the route accept exactly the same thing.
from agent_memory.model.jobs import SummarizeRequest, SummaryGrain  # noqa: F401 (re-exported)
from agent_memory.model.limits import (
    MAX_CONTENT_BYTES,
    MAX_ITEMS_PER_REQUEST,
    MAX_LINKS,
    MAX_TAGS,
    MAX_TTL_DAYS,
)
from agent_memory.model.queries import (
    NewMemory,
)
from agent_memory.model.records import (
    EXPERIENCE_KINDS,
    Link,
    MemoryKind,
    MemoryRecord,
    MergedWrite,
    Role,
    Source,
    check_metadata,
    display_text,
)
from agent_memory.model.types import (
    ConversationId,
    RunId,
    Score,
    Speaker,
    Tag,
    Topic,
    UserId,
    UtcDatetime,
    visible,
)
from agent_memory.writing.rules.redaction import map_strings

if TYPE_CHECKING:  # the store's page types, read by attribute when a response is built
    from agent_memory.model.operator_views import PeriodView, SearchActivity
    from agent_memory.ports import AgentPage, AuditPage, Page

# Search and context, the error body and the topic dictionary (re-exported: every model of the
# contract is importable from here).
from agent_memory.contract.v1_errors import ErrorBody, ErrorDetail, ErrorResponse  # noqa: F401
from agent_memory.contract.v1_recall import (  # noqa: F401
    AlsoInOut,
    ContextItem,
    ContextRequest,
    ContextResponse,
    ContextSourceOut,
    GrainFilter,
    PassageRef,
    RankingOverrides,
    SearchRequest,
    SearchResponse,
    SearchResult,
)
from agent_memory.contract.v1_topics import (  # noqa: F401
    TopicDictionaryBody,
    TopicDictionaryResponse,
    TopicProposalOut,
    TopicProposalsResponse,
)

#: The fields of a write item that only an experience may have.
EXPERIENCE_FIELDS = ("context", "outcome", "confidence", "run_id")


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
    # An experience (kinds success, failure, insight, pattern): what was happening, what resulted,
    # how sure the agent is, and the run it came from (patterns are recognised across runs).
    context: str | None = Field(
        default=None, max_length=MAX_EXPERIENCE_TEXT, description="An experience's situation."
    )
    outcome: str | None = Field(
        default=None, max_length=MAX_EXPERIENCE_TEXT, description="What an experience resulted in."
    )
    confidence: Score | None = Field(
        default=None, description=f"How sure the agent is of an experience (default {DEFAULT_CONFIDENCE})."
    )
    run_id: RunId | None = Field(default=None, description="The run an experience came from.")

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        return _content_bounded(value)

    @model_validator(mode="after")
    def _experience_fields(self) -> WriteItem:
        given = [f for f in EXPERIENCE_FIELDS if getattr(self, f) is not None]
        if given and self.kind not in EXPERIENCE_KINDS:
            kinds = ", ".join(sorted(k.value for k in EXPERIENCE_KINDS))
            raise ValueError(f"{', '.join(given)} belong to experiences: give 'kind' as one of {kinds}")
        return self

    def to_new_memory(self) -> NewMemory:
        """What the write use case takes; an experience's fields become its `Experience`."""
        data = {k: v for k, v in dict(self).items() if k not in EXPERIENCE_FIELDS}
        experience = None
        if self.kind in EXPERIENCE_KINDS:
            experience = Experience(
                context=self.context,
                outcome=self.outcome,
                run_id=self.run_id,
                prior=DEFAULT_CONFIDENCE if self.confidence is None else self.confidence,
            )
        return NewMemory(**data, experience=experience)

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

    def redacted(self, redact: Callable[[str], str]) -> WriteRequest:
        """This request with its free text (contents, an experience's context and outcome, the
        strings in metadata) passed through ``redact``: what a tenant with redaction on write
        has accepted instead, fingerprint and record ids included."""

        def text(value: str | None) -> str | None:
            return None if value is None else redact(value)

        items = None
        if self.items is not None:
            items = [
                item.model_copy(
                    update={
                        "content": redact(item.content),
                        "context": text(item.context),
                        "outcome": text(item.outcome),
                        "metadata": map_strings(item.metadata, redact),
                    }
                )
                for item in self.items
            ]
        messages = None
        if self.messages is not None:
            messages = [m.model_copy(update={"content": redact(m.content)}) for m in self.messages]
        return self.model_copy(update={"items": items, "messages": messages})

    def to_new_memories(self) -> list[NewMemory]:
        """What the write use case takes: one `NewMemory` per item (either form)."""
        return [item.to_new_memory() for item in self.to_items()]

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
    experience: ExperienceOut | None = Field(
        default=None, description="An experience's confidence and the evidence it rests on."
    )
    valid_from: datetime | None = Field(
        default=None,
        description="When what this memory states began to hold (set when it superseded another).",
    )
    valid_to: datetime | None = Field(
        default=None,
        description="When a newer memory's value replaced this one's (null: it still holds). A superseded "
        "memory is kept: it is what was believed until then (search with as_of).",
    )
    supersedes: list[str] = Field(
        default_factory=list, description="The older memories whose value this one replaced."
    )
    superseded_by: str | None = Field(
        default=None, description="The newer memory that replaced this one's value (null: none)."
    )
    current: bool = Field(
        default=True,
        description="Whether what this memory states still holds: false once another memory superseded it.",
    )

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
                    "valid_from",
                    "valid_to",
                    "supersedes",
                    "superseded_by",
                }
            ),
            current=record.superseded_by is None,
            topic=record.topic_raw,
            text=display_text(record),
            experience=ExperienceOut.of(record.experience),
        )


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


# --- summaries made on request ---------------------------------------------------------------------


class SummarizeResponse(BaseModel):
    grain: SummaryGrain
    periods: list[str]
    jobs_queued: int
