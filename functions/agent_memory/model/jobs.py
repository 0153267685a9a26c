"""Messages of the summarization cascade: what to summarize (the request), and one job per
agent-period on the job queue.

One request model serves the scheduler (``{"grain": "daily"}``: the period that just closed),
the admin route and the CLI (``"period"``, or a ``"from"``/``"to"`` range of dates for a
backfill), so all three accept exactly the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, datetime, tzinfo
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.cascade.rules.periods import due_key, keys_between
from agent_memory.errors import InvalidTimeKeyError
from agent_memory.model.grains import Grain, parse_time_key
from agent_memory.model.types import AgentId, TenantId, UtcDatetime

#: The most stale memories one per-agent job carries (a forget of one memory hides at most this many).
MAX_STALE = 1_000

#: The most periods one request may name (a leap year of days): a longer backfill is split, so
#: one request never runs longer than an API call may.
MAX_PERIODS_PER_REQUEST = 366

SummaryGrain = Literal["daily", "weekly", "monthly", "quarterly", "yearly"]


class SummarizeRequest(BaseModel):
    """``{"grain"}`` alone: the period that just closed; ``"period"``: that one (a time key of
    the grain); ``"from"``/``"to"``: every period of the grain holding a day of that inclusive
    range of dates (a backfill)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    grain: SummaryGrain
    period: str | None = Field(
        default=None, max_length=16, description="A time key, e.g. 2026-11-21 or 2026-W47."
    )
    from_: date | None = Field(default=None, alias="from", description="First day of a range (YYYY-MM-DD).")
    to: date | None = Field(default=None, description="Last day of a range, inclusive.")

    @model_validator(mode="after")
    def _one_form(self) -> SummarizeRequest:
        if self.period is not None and (self.from_ is not None or self.to is not None):
            raise ValueError("give either 'period' or 'from' and 'to', not both")
        if (self.from_ is None) != (self.to is None):
            raise ValueError("a range needs both 'from' and 'to'")
        try:
            if self.period is not None:
                parse_time_key(Grain(self.grain), self.period)
            if self.from_ is not None and self.to is not None:
                keys = keys_between(Grain(self.grain), self.from_, self.to, most=MAX_PERIODS_PER_REQUEST)
                if len(keys) > MAX_PERIODS_PER_REQUEST:
                    raise ValueError(
                        f"the range holds more than {MAX_PERIODS_PER_REQUEST} {self.grain} periods; "
                        f"at most {MAX_PERIODS_PER_REQUEST} per request: split it"
                    )
        except InvalidTimeKeyError as exc:
            raise ValueError(exc.message) from exc
        return self

    def time_keys(self, now: datetime, tz: tzinfo | str) -> list[str]:
        """The periods this request names; without period or range, the one due at ``now``."""
        grain = Grain(self.grain)
        if self.period is not None:
            return [self.period]
        if self.from_ is not None and self.to is not None:
            return keys_between(grain, self.from_, self.to)
        return [due_key(grain, now, tz)]


class DispatchEvent(SummarizeRequest):
    """The dispatcher's event. ``scheduled_time`` is when the schedule fired (EventBridge Scheduler
    fills ``<aws.scheduler.scheduled-time>``; the local scheduler its own fire time): the period
    due is computed from it, so a late or retried invocation still takes the right period."""

    scheduled_time: UtcDatetime | None = None


class AgentJobsEvent(BaseModel):
    """A per-agent job schedule's event: ``{"job": "patterns" | "profiles", "scheduled_time": ...}``."""

    model_config = ConfigDict(extra="forbid")

    job: Literal["patterns", "profiles"]
    scheduled_time: UtcDatetime | None = None


class AgentJobBase(BaseModel):
    """What a per-agent job message holds (`PatternJob`, `ProfileJob`): its agent, why it runs,
    the stale memories (hidden by a forget) it re-makes under their ids, and the pending mark it
    clears when its writes are queued (so a caller waiting for the agent's pending writes waits
    for the run, and then for its writes)."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    #: Which job (each subclass fixes it: ``patterns``, ``profiles``).
    job: str
    tenant_id: TenantId
    agent_id: AgentId
    reason: Literal["schedule", "admin", "forget"] = "schedule"
    stale: list[str] = Field(default_factory=list, max_length=MAX_STALE)
    pending_id: str | None = Field(default=None, max_length=64)

    @property
    def key(self) -> str:
        return f"{self.tenant_id}:{self.agent_id}:{self.job}"


@dataclass
class AgentJobReport:
    """What a per-agent job did (`PatternReport`, `ProfileReport`), summed over agents by `add`:
    every count added, every list of ids extended. The counts every derived kind keeps: the
    agents run, and its memories made anew, re-made, left as they were, and dropped."""

    agents: int = 0
    made: int = 0
    refreshed: int = 0
    unchanged: int = 0
    dropped: int = 0

    def add(self, other: Self) -> None:
        for f in fields(self):
            mine = getattr(self, f.name)
            if isinstance(mine, list):
                mine.extend(getattr(other, f.name))
            else:
                setattr(self, f.name, mine + getattr(other, f.name))


@dataclass(frozen=True, slots=True)
class DispatchReport:
    """What one dispatch queued: a job per agent with anything to fold, for each period."""

    grain: Grain
    periods: list[str]
    jobs_queued: int

    def as_dict(self) -> dict[str, Any]:
        """As the dispatch function returns it (and the CLI prints it)."""
        return {"grain": self.grain.value, "periods": list(self.periods), "jobs_queued": self.jobs_queued}


class ExpectedChild(BaseModel):
    """A refresh waits until the child summary that triggered it is stored (the write is async)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(max_length=64)
    updated_at: UtcDatetime


class SummarizeJob(BaseModel):
    """Make (or re-make) one agent's summary of one period."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    tenant_id: TenantId
    agent_id: AgentId
    grain: Grain
    time_key: str = Field(max_length=16)
    reason: Literal["schedule", "backfill", "refresh", "forget", "retention"] = "schedule"
    after: ExpectedChild | None = None

    @field_validator("grain")
    @classmethod
    def _summary_grain(cls, value: Grain) -> Grain:
        if not value.is_summary:
            raise ValueError("working memory is not summarized")
        return value

    @model_validator(mode="after")
    def _valid_key(self) -> SummarizeJob:
        try:
            parse_time_key(self.grain, self.time_key)
        except InvalidTimeKeyError as exc:
            raise ValueError(exc.message) from exc
        return self

    @property
    def key(self) -> str:
        return f"{self.tenant_id}:{self.agent_id}:{self.grain.value}:{self.time_key}"
