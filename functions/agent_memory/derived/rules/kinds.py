"""The memories the service derives from others, as one registry: summaries (at every grain of
the cascade), recognised patterns (`derived.rules.patterns`) and person profiles (`derived.rules.profiles`).

All three live the same life (`derived.lifecycle.Lifecycle`, written once): a job chooses their
sources, a model states what the sources say, the result gets a deterministic id and is queued as
an upsert through the writer, a forget of a source marks it stale (hidden at once) and queues its
job, which re-makes it from what is left or drops it. A row here says what tells one kind from
another: the memory kind it writes, how its own records are told from a caller's memories of that
kind, which memories may be its sources, the audit actions and actor of its job, how a forget
finds the records a memory fed (``found_by``), the job that re-makes stale ones and what a drop
does. The lifecycle and the stale walk
(`derived.lifecycle.StaleWalk`) read the rows; nothing else names a kind to find what a memory
fed.

Patterns and profiles are made by a per-agent job and live while their sources make them, so
neither the daily summary folds them (it folds their sources already; folded too, a re-made or
dropped one would live on in its day's summary, and a forgotten source with it) nor does a
plan's retention remove them (their job drops them when their sources no longer make them):
`is_derived` tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from agent_memory.cascade.rules.periods import PARENT_GRAIN
from agent_memory.derived.rules.patterns import PatternJob, is_recognised_pattern
from agent_memory.derived.rules.profiles import STATEMENT_KINDS, ProfileJob, is_made_profile
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import AgentJobBase, SummarizeJob
from agent_memory.model.records import MEMBER_KINDS, MemoryKind, MemoryRecord

#: The most records of one per-agent kind a run (or a forget) reads back per agent.
MAX_DERIVED = 1_000

#: A job that re-makes derived records: a period's summary, or an agent's patterns or profiles.
RemakeJob = SummarizeJob | AgentJobBase


@dataclass(frozen=True, slots=True)
class Stale:
    """A derived record a forget hid until its job re-makes it: its id and, for a summary, the
    period its job makes (a period whose summary is not stored yet has an id all the same)."""

    id: str
    grain: Grain = Grain.WORKING
    time_key: str | None = None

    @classmethod
    def of(cls, record: MemoryRecord) -> Stale:
        return cls(record.id, record.grain, record.time_key)


@dataclass(frozen=True, slots=True)
class DerivedKind:
    """One row of the registry (see the module docstring)."""

    kind: MemoryKind
    #: The job's name in the audit trail, and the actions it records on a make and on a drop.
    actor: str
    made: str
    dropped: str
    #: Whether a record is one the job made (and so re-makes and drops), not a caller's.
    ours: Callable[[MemoryRecord], bool]
    #: Whether a memory may be among its sources (what a forget of it looks at).
    fed_by: Callable[[MemoryRecord], bool]
    #: The jobs that re-make ``stale`` records of the kind, for one agent.
    remake: Callable[[str, str, Sequence[Stale]], list[RemakeJob]]
    #: How a forget finds what a memory fed: ``cascade``, the summary of its period and those
    #: above (by their deterministic ids); ``sources``, the kind's records naming it as a source.
    found_by: Literal["cascade", "sources"]
    #: What a drop does to a record its sources no longer make: ``delete`` it (a summary: an
    #: emptied period has no summary, and a later make starts afresh under the same id) or
    #: ``hide`` it for the purge (a pattern or profile: its trail stays readable meanwhile).
    drops: Literal["delete", "hide"] = "hide"
    limit: int = MAX_DERIVED


def _summary_jobs(tenant_id: str, agent_id: str, stale: Sequence[Stale]) -> list[RemakeJob]:
    """One job per stale period: making it makes every stale summary below it first."""
    return [
        SummarizeJob(
            tenant_id=tenant_id, agent_id=agent_id, grain=s.grain, time_key=s.time_key, reason="forget"
        )
        for s in stale
        if s.time_key is not None
    ]


def _agent_job(job: Callable[..., AgentJobBase]) -> Callable[[str, str, Sequence[Stale]], list[RemakeJob]]:
    """One job for the agent naming every stale record, so its run continues them under their ids."""

    def remake(tenant_id: str, agent_id: str, stale: Sequence[Stale]) -> list[RemakeJob]:
        ids = [s.id for s in stale]
        return [job(tenant_id=tenant_id, agent_id=agent_id, reason="forget", stale=ids)] if ids else []

    return remake


def _is_summary(record: MemoryRecord) -> bool:
    return record.kind is MemoryKind.SUMMARY and record.time_key is not None


# fmt: off
SUMMARIES = DerivedKind(MemoryKind.SUMMARY, "summarizer", AuditAction.REMADE, AuditAction.EMPTIED,
                        ours=_is_summary, fed_by=lambda r: r.grain in PARENT_GRAIN,
                        remake=_summary_jobs, found_by="cascade", drops="delete")
PATTERNS = DerivedKind(MemoryKind.PATTERN, "patterns", AuditAction.PATTERN_MADE, AuditAction.PATTERN_DROPPED,
                       ours=is_recognised_pattern, fed_by=lambda r: r.kind in MEMBER_KINDS,
                       remake=_agent_job(PatternJob), found_by="sources")
PROFILES = DerivedKind(MemoryKind.PROFILE, "profiles", AuditAction.PROFILE_MADE, AuditAction.PROFILE_DROPPED,
                       ours=is_made_profile, fed_by=lambda r: r.kind in STATEMENT_KINDS,
                       remake=_agent_job(ProfileJob), found_by="sources")
# fmt: on

#: Every derived kind, in the order a forget marks them and queues their jobs.
DERIVED_KINDS: tuple[DerivedKind, ...] = (SUMMARIES, PATTERNS, PROFILES)
#: The kinds a per-agent job keeps current (not summaries: those are made per period).
AGENT_KINDS: tuple[DerivedKind, ...] = (PATTERNS, PROFILES)


def derived_kind(record: MemoryRecord) -> DerivedKind | None:
    """The registry row whose job made ``record``, or None (a caller's memory)."""
    return next((what for what in DERIVED_KINDS if what.ours(record)), None)


def is_derived(record: MemoryRecord) -> bool:
    """A pattern the service recognised or a profile it made (not one a client wrote)."""
    return any(what.ours(record) for what in AGENT_KINDS)
