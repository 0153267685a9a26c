"""What the operator's views show, as the use cases answer them: an agent's counts, its search
activity, its timeline and one period opened up.

The contract (`agent_memory.contract.v1`) turns each into its response body; see
`recall.memories`, `recall.search_stats` and `recall.timeline` for how they are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord


@dataclass(frozen=True, slots=True)
class AgentStats:
    """Live records per grain, writes accepted and not yet stored, and the time they span."""

    records: dict[str, int]
    pending_writes: int
    oldest: datetime | None
    newest: datetime | None


@dataclass(frozen=True, slots=True)
class SearchDay:
    """How many searches one agent got on one UTC day, and how many of them found nothing."""

    day: date
    searches: int
    zero_hits: int


@dataclass(frozen=True, slots=True)
class SearchActivity:
    """Searches per UTC day over the last ``days`` days (days without any are left out)."""

    days: int
    by_day: Sequence[SearchDay]

    @property
    def searches(self) -> int:
        return sum(d.searches for d in self.by_day)

    @property
    def zero_hits(self) -> int:
        return sum(d.zero_hits for d in self.by_day)


@dataclass(frozen=True, slots=True)
class PeriodCount:
    """One period of a lane: a local day of working memory, or one summary and what it folded."""

    time_key: str
    start: datetime
    end: datetime
    records: int
    summary_id: str | None


@dataclass(frozen=True, slots=True)
class Lane:
    grain: Grain
    periods: Sequence[PeriodCount]


@dataclass(frozen=True, slots=True)
class Timeline:
    timezone: str
    since: date
    until: date
    lanes: Sequence[Lane]


@dataclass(frozen=True, slots=True)
class ParentPeriod:
    grain: Grain
    time_key: str


@dataclass(frozen=True, slots=True)
class PeriodView:
    """One summary period: its summary (if made and live), the live children in its span (at
    most a page of them; ``children_total`` counts all), and the ids it was made from that are
    gone since."""

    grain: Grain
    time_key: str
    start: datetime
    end: datetime
    summary: MemoryRecord | None
    child_grain: Grain
    children: Sequence[MemoryRecord]
    children_total: int
    missing_sources: Sequence[str]
    parent: ParentPeriod | None
