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
from typing import Any, Literal

from agent_memory.experience.rules.confidence import Experience
from agent_memory.knowledge.rules.passages import Passage
from agent_memory.model.grains import Grain
from agent_memory.model.limits import DEFAULT_RESULTS
from agent_memory.model.records import Link, MemoryKind, MemoryRecord, Role, Source, display_text

#: Where a result comes from: the agent's own memory, or the tenant's shared knowledge.
SourceTag = Literal["private", "shared"]
PRIVATE: frozenset[SourceTag] = frozenset({"private"})
BOTH: frozenset[SourceTag] = frozenset({"private", "shared"})


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One memory to remember, as a client gave it: only ``content`` is required. The write use
    case decides the rest (id, kind, importance, topic, expiry) at accept time."""

    content: str
    role: Role | None = None
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
    #: An experience's learning part (kinds in `records.EXPERIENCE_KINDS`), else None.
    experience: Experience | None = None


#: The confidence a pattern needs to come first when a search asks for patterns first.
DEFAULT_PATTERN_CONFIDENCE = 0.5


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
    #: What to search: the agent's memory (``private``), the tenant's knowledge (``shared``), or
    #: both in one ranking. The window, ``kinds`` and ``user_id`` narrow memories only; ``tags``
    #: narrow both (a passage has its document's tags); a passage is found while its document
    #: is valid on ``as_of``.
    sources: frozenset[SourceTag] = PRIVATE
    #: Only experiences at least this sure (`experience.rules.confidence`); memories without one never pass.
    min_confidence: float | None = None
    #: Patterns at or above ``pattern_confidence`` before every other result (acting on what was
    #: learned before looking at the rest).
    patterns_first: bool = False
    pattern_confidence: float = DEFAULT_PATTERN_CONFIDENCE

    @property
    def pattern_floor(self) -> float:
        """The confidence a pattern needs to come first: ``pattern_confidence``, or
        ``min_confidence`` when that is higher (a floor holds for every result)."""
        return max(self.pattern_confidence, self.min_confidence or 0.0)


@dataclass(frozen=True, slots=True)
class AlsoIn:
    """A summary that holds a hit too, folded into it (`recall.rules.ranking.fold_summaries`): its
    grain, its period (``2026-W47``) and its id, which reads it back whole."""

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
    #: Whether what the memory states still held at the search's ``as_of`` (False: a newer
    #: memory had superseded it by then; it is ranked below and marked).
    current: bool = True

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def text(self) -> str:
        """The text shown for it (dated, with the speaker): made only for the hits that are read,
        not for every candidate the store returned."""
        return display_text(self.record)

    @property
    def source_tag(self) -> SourceTag:
        return "private"


@dataclass(frozen=True, slots=True)
class SharedHit:
    """One ranked passage of the tenant's shared knowledge."""

    passage: Passage
    score: float
    similarity: float | None

    @property
    def id(self) -> str:
        return self.passage.id

    @property
    def text(self) -> str:
        """The passage under where it is: ``[ADR-12 > Consequences] ...``."""
        return f"[{self.passage.citation}] {self.passage.text}"

    @property
    def source_tag(self) -> SourceTag:
        return "shared"


#: One result of a search: a memory, or a passage of shared knowledge.
Found = Hit | SharedHit


#: The share of a context's budget kept for shared knowledge when both sources are asked.
DEFAULT_SHARED_SHARE = 0.4


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """One block of prompt context: what ``search`` finds, packed to ``token_budget``; with both
    sources, ``shared_share`` of the budget is kept for shared knowledge and the rest for memory
    (what one source leaves unused, the other may take)."""

    search: SearchQuery
    token_budget: int
    shared_share: float = DEFAULT_SHARED_SHARE


@dataclass(frozen=True, slots=True)
class ContextLine:
    """One hit as a line of the block, and the tokens the line takes."""

    hit: Found
    line: str
    tokens: int


@dataclass(frozen=True, slots=True)
class SourceBudget:
    """What one source got of a context's budget: its share (in tokens), what it used, how many
    of its relevant results were left out, and whether its last line was cut short."""

    source: SourceTag
    budget: int
    tokens: int
    lines: int
    dropped: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class Context:
    """The block (``text``), its lines in the order they appear, and how many relevant hits were
    left out to stay within the budget."""

    text: str
    tokens: int
    token_budget: int
    lines: Sequence[ContextLine]
    dropped: int
    sources: Sequence[SourceBudget] = ()
