"""Models of the HTTP contract (v1) for recall: search and context, their requests (with the
ranking knobs and the sources to blend) and their responses.

Apart from `contract.v1` only to keep each module readable; `contract.v1` re-exports them, so a
client imports every model of the contract from one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.contract.v1_experience import ExperienceOut
from agent_memory.model.grains import Grain
from agent_memory.model.limits import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_RESULTS,
    MAX_CONTEXT_TOKENS,
    MAX_DAYS_AGO,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    MAX_TAGS,
    MIN_CONTEXT_TOKENS,
)
from agent_memory.model.queries import (
    BOTH,
    DEFAULT_PATTERN_CONFIDENCE,
    DEFAULT_SHARED_SHARE,
    PRIVATE,
    Context,
    ContextQuery,
    Found,
    Hit,
    SearchQuery,
    SourceTag,
)
from agent_memory.model.records import MemoryKind, Source
from agent_memory.model.types import Score, Tag, UserId, UtcDatetime

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
    private_weight: Score | None = Field(
        default=None, description="With both sources: what a memory's score is multiplied by (default 1)."
    )
    shared_weight: Score | None = Field(
        default=None,
        description="With both sources: what a shared passage's relevance is multiplied by (default 0.9).",
    )


def _sources(value: list[SourceTag] | None, default: frozenset[SourceTag]) -> frozenset[SourceTag]:
    """The sources a request names (validated not to repeat one), or ``default``."""
    return default if value is None else frozenset(value)


def _no_repeats(value: list[SourceTag] | None) -> list[SourceTag] | None:
    if value is not None and len(set(value)) != len(value):
        raise ValueError("sources must not repeat a source")
    return value


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
    sources: list[SourceTag] | None = Field(
        default=None,
        min_length=1,
        max_length=2,
        description="What to search: the agent's memory (private), the tenant's shared knowledge "
        "(shared), or both in one ranking (absent: private). Shared passages come only with a query.",
    )
    min_confidence: Score | None = Field(
        default=None,
        description="Only experiences at least this sure (memories without a confidence are left out).",
    )
    patterns_first: bool | None = Field(
        default=None,
        description="Put patterns at or above pattern_confidence before every other result.",
    )
    pattern_confidence: Score | None = Field(
        default=None,
        description=f"The confidence a pattern needs to come first (absent: {DEFAULT_PATTERN_CONFIDENCE}).",
    )

    @model_validator(mode="after")
    def _window(self) -> SearchRequest:
        _check_window(self.min_days_ago, self.max_days_ago)
        _no_repeats(self.sources)
        if self.query is not None and not self.query.strip():
            self.query = None
        return self

    def to_query(self) -> SearchQuery:
        return replace(
            _window_query(self),
            max_results=self.max_results,
            tags=tuple(self.tags),
            min_score=self.min_score,
            ranking=self.ranking.model_dump(exclude_none=True) if self.ranking else {},
            sources=_sources(self.sources, PRIVATE),
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
    sources: list[SourceTag] | None = Field(
        default=None,
        min_length=1,
        max_length=2,
        description="What the block draws on: the agent's memory (private), the tenant's shared "
        "knowledge (shared), or both (absent: both).",
    )
    shared_share: Score | None = Field(
        default=None,
        description=f"With both sources: the share of the budget kept for shared knowledge (absent: "
        f"{DEFAULT_SHARED_SHARE}); the rest is memory's, and what one leaves unused the other may take.",
    )
    kinds: list[MemoryKind] | None = Field(
        default=None, max_length=len(MemoryKind), description="Only memories of these kinds."
    )
    min_confidence: Score | None = Field(
        default=None,
        description="Only experiences at least this sure (memories without a confidence are left out).",
    )
    patterns_first: bool | None = Field(
        default=None, description="Put patterns at or above pattern_confidence first in the block."
    )
    pattern_confidence: Score | None = Field(
        default=None,
        description=f"The confidence a pattern needs to come first (absent: {DEFAULT_PATTERN_CONFIDENCE}).",
    )

    @model_validator(mode="after")
    def _window(self) -> ContextRequest:
        _check_window(self.min_days_ago, self.max_days_ago)
        _no_repeats(self.sources)
        if not self.query.strip():
            raise ValueError("query must not be blank")
        return self

    def to_query(self) -> ContextQuery:
        return ContextQuery(
            search=replace(_window_query(self), sources=_sources(self.sources, BOTH)),
            token_budget=self.token_budget,
            shared_share=DEFAULT_SHARED_SHARE if self.shared_share is None else self.shared_share,
        )


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
        kinds=tuple(request.kinds or ()),
        min_confidence=request.min_confidence,
        patterns_first=bool(request.patterns_first),
        pattern_confidence=DEFAULT_PATTERN_CONFIDENCE
        if request.pattern_confidence is None
        else request.pattern_confidence,
    )


class ContextItem(BaseModel):
    """One memory (or shared passage) that made it into the context block, in the order it
    appears there."""

    id: str
    source_tag: SourceTag = "private"
    grain: Grain | None = Field(description="The memory's grain (null for a shared passage).")
    time_key: str | None
    occurred_at: datetime | None = Field(description="When the memory happened (null for a shared passage).")
    doc_id: str | None = Field(default=None, description="A shared passage's document.")
    score: float
    tokens: int

    @classmethod
    def of(cls, found: Found, tokens: int) -> ContextItem:
        if isinstance(found, Hit):
            r = found.record
            return cls(
                id=r.id,
                grain=r.grain,
                time_key=r.time_key,
                occurred_at=r.occurred_at,
                score=found.score,
                tokens=tokens,
            )
        return cls(
            id=found.id,
            source_tag="shared",
            grain=None,
            time_key=None,
            occurred_at=None,
            doc_id=found.passage.doc_id,
            score=found.score,
            tokens=tokens,
        )


class ContextSourceOut(BaseModel):
    """What one source got of the budget, and what it cut to stay within it."""

    source: SourceTag
    budget: int = Field(
        description="Tokens kept for this source (its share, plus what the other left unused)."
    )
    tokens: int = Field(description="Tokens its lines take.")
    lines: int
    dropped: int = Field(description="Its relevant results left out for the budget.")
    truncated: bool = Field(description="Whether its last line was cut short to fit.")


class ContextResponse(BaseModel):
    context: str = Field(description="The block to put in the prompt: one dated, grain-tagged line each.")
    tokens: int = Field(description="Tokens the block takes (see docs/api.md for how they are counted).")
    token_budget: int
    items: list[ContextItem]
    dropped: int = Field(description="Relevant memories left out to stay within the budget.")
    sources: list[ContextSourceOut] = Field(
        default_factory=list, description="Per source: its share of the budget and what was cut from it."
    )

    @classmethod
    def of(cls, context: Context) -> ContextResponse:
        return cls(
            context=context.text,
            tokens=context.tokens,
            token_budget=context.token_budget,
            items=[ContextItem.of(line.hit, line.tokens) for line in context.lines],
            dropped=context.dropped,
            sources=[ContextSourceOut.model_validate(b, from_attributes=True) for b in context.sources],
        )


class AlsoInOut(BaseModel):
    """A summary that holds this result too, folded into it rather than listed again."""

    grain: Grain
    period: str | None = Field(description="The summary's period, e.g. 2026-W47.")
    id: str = Field(description="Reads the summary back whole (GET .../memories/{id}).")


# The docstring below is the schema's description in docs/openapi.json. The fields are a
# `Passage`'s, by the same names: `SearchResult.of` reads them from the passage's attributes, so a
# field added here is filled without a second list to keep in step.
class PassageRef(BaseModel):
    """Where a shared passage comes from: enough to cite it ("per ADR-12, Consequences")."""

    doc_id: str
    title: str
    version: str
    heading_path: list[str]
    source_uri: str | None
    start: int = Field(description="The passage's first character in the document's text.")
    end: int = Field(description="One past its last character.")


#: A memory's fields that a shared passage has none of: null in its result.
_NOT_IN_A_PASSAGE: dict[str, Any] = dict.fromkeys(
    [
        "grain",
        "time_key",
        "kind",
        "recency",
        "importance",
        "occurred_at",
        "topic",
        "user_id",
        "conversation_id",
        "source",
    ]
)


class SearchResult(BaseModel):
    id: str
    source_tag: SourceTag = Field(
        default="private", description="private: the agent's memory; shared: the tenant's knowledge."
    )
    document: PassageRef | None = Field(default=None, description="A shared passage's document.")
    grain: Grain | None = Field(description="The memory's grain (null for a shared passage).")
    time_key: str | None
    kind: MemoryKind | None = Field(description="The memory's kind (null for a shared passage).")
    content: str
    text: str
    score: float
    similarity: float | None
    recency: float | None = Field(description="The memory's recency (null for a shared passage).")
    importance: float | None = Field(description="The memory's importance (null for a shared passage).")
    occurred_at: datetime | None = Field(description="When the memory happened (null for a shared passage).")
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
    experience: ExperienceOut | None = Field(
        default=None, description="An experience's confidence and the evidence it rests on."
    )
    current: bool = Field(
        default=True,
        description="Whether what the memory states still held at the search's as_of: false when a newer "
        "memory had superseded it by then, or when this search, asked about the present, found a later "
        "statement of the same person replacing it and put that one first (then valid_to, superseded_by "
        "and the newer one's supersedes are this answer's reading, not stored). It is ranked below the "
        "newer memory.",
    )
    valid_from: datetime | None = Field(default=None, description="When what it states began to hold.")
    valid_to: datetime | None = Field(
        default=None, description="When a newer memory replaced its value (null: it still holds)."
    )
    supersedes: list[str] = Field(default_factory=list, description="The older memories it replaced.")
    superseded_by: str | None = Field(default=None, description="The newer memory that replaced it.")

    @classmethod
    def of(cls, hit: Found) -> SearchResult:
        if not isinstance(hit, Hit):
            p = hit.passage
            return cls(
                id=p.id,
                source_tag="shared",
                document=PassageRef.model_validate(p, from_attributes=True),
                content=p.text,
                text=hit.text,
                score=hit.score,
                similarity=hit.similarity,
                metadata={},
                tags=p.tags,
                **_NOT_IN_A_PASSAGE,
            )
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
            experience=ExperienceOut.of(r.experience),
            current=hit.current,
            valid_from=r.valid_from,
            valid_to=r.valid_to,
            supersedes=r.supersedes,
            superseded_by=r.superseded_by,
        )


class SearchResponse(BaseModel):
    results: list[SearchResult]

    @classmethod
    def of(cls, hits: Sequence[Found]) -> SearchResponse:
        return cls(results=[SearchResult.of(h) for h in hits])
