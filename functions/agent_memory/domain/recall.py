"""What a write, a search and a context ask, and what a search finds, as the use cases see them.

The HTTP contract (`agent_memory.contract.v1`) validates a request and turns it into one of
these; a use case answers with these, and the contract turns the answer into its response body.
The services never see the contract, so a later version of the API can change its shape without
touching a use case, and a use case can be called (by the local runtime, a test, a benchmark)
without building an HTTP body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.domain.grains import Grain
from agent_memory.domain.limits import DEFAULT_RESULTS
from agent_memory.domain.records import Link, MemoryKind, MemoryRecord, Source
from agent_memory.domain.scoring import display_text


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One memory to remember, as a client gave it: only ``content`` is required. The write use
    case decides the rest (id, kind, importance, topic, expiry) at accept time."""

    content: str
    role: str | None = None
    speaker: str | None = None
    occurred_at: datetime | None = None
    conversation_id: str | None = None
    topic: str | None = None
    importance: float | None = None
    kind: MemoryKind | None = None
    tags: Sequence[str] = ()
    ttl_days: int | None = None
    user_id: str | None = None
    source: Source | None = None
    links: Sequence[Link] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search of one agent's memory: by meaning (``query``) and by a window of days before
    ``as_of`` (``[as_of - max_days_ago, as_of - min_days_ago]``). ``grain`` None: every grain.
    ``ranking`` names the ranking knobs this search sets (`RankingWeights` field names)."""

    query: str | None = None
    grain: Grain | None = None
    min_days_ago: float = 0
    max_days_ago: float | None = None
    max_results: int = DEFAULT_RESULTS
    as_of: datetime | None = None
    kinds: Sequence[MemoryKind] = ()
    tags: Sequence[str] = ()
    user_id: str | None = None
    min_score: float | None = None
    ranking: Mapping[str, float | bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlsoIn:
    """A summary that holds a hit too, folded into it (`domain.folding`): its grain, its period
    (``2026-W47``) and its id, which reads it back whole."""

    grain: Grain
    period: str | None
    id: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked search result: the record and how it scored; ``also_in``: the summaries that
    repeat it, folded into it rather than listed again."""

    record: MemoryRecord
    score: float
    similarity: float | None
    recency: float
    also_in: tuple[AlsoIn, ...] = ()

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def text(self) -> str:
        """The text shown for it (dated, with the speaker): made only for the hits that are read,
        not for every candidate the store returned."""
        return display_text(self.record)


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """One block of prompt context: what ``search`` finds, packed to ``token_budget``."""

    search: SearchQuery
    token_budget: int


@dataclass(frozen=True, slots=True)
class ContextLine:
    """One hit as a line of the block, and the tokens the line takes."""

    hit: Hit
    line: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Context:
    """The block (``text``), its lines in the order they appear, and how many relevant hits were
    left out to stay within the budget."""

    text: str
    tokens: int
    token_budget: int
    lines: Sequence[ContextLine]
    dropped: int
