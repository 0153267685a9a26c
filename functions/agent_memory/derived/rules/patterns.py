"""Recognising patterns: which of an agent's experiences say the same thing across runs.

Pure (no I/O): `derived.pattern_recognition` reads the experiences and their vectors, asks this module
which clusters there are and which stored pattern each one continues, and writes the result.

* **Clusters** are made by average link, greedily in time order (oldest first, then by id): an
  experience joins the cluster whose members it is most similar to on average, if that mean
  cosine is at least the bound, else it starts a cluster. Deterministic: the same experiences
  give the same clusters, so a re-run changes nothing.
* **A cluster is a pattern** when it has at least ``min_members`` members from at least
  ``min_runs`` distinct runs (an experience without a run counts by its local day): the same
  finding made three times in one run is one run's repetition, not a pattern.
* **A stored pattern continues** when a cluster shares members with it (the one sharing the
  most); its id, and the feedback counted on it, stay. Members it lost because they were
  forgotten leave it; members retention deleted still count (a pattern outlives the detail it was
  learned from, as a summary does). A pattern left with too few members is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np
import numpy.typing as npt

from agent_memory.experience.rules.confidence import MAX_PATTERN_MEMBERS
from agent_memory.model.ids import digest
from agent_memory.model.jobs import AgentJobBase, AgentJobReport
from agent_memory.model.records import MemoryKind, MemoryRecord

#: Metadata key that marks a pattern the service recognised (a client may write patterns too:
#: those are the client's and never re-made or dropped).
RECOGNISED_BY = "recognised_by"
RECOGNISER = "pattern-job/v1"


@dataclass(frozen=True, slots=True)
class PatternRules:
    """When experiences make a pattern (the settings ``pattern_*``)."""

    min_members: int = 3
    min_runs: int = 2
    similarity: float = 0.75
    #: How far back the job looks for experiences to cluster, in days.
    window_days: int = 90
    #: The most experiences one run clusters (the newest).
    max_experiences: int = 500


@dataclass(frozen=True, slots=True)
class Member:
    """An experience as a pattern counts it: its id and the run (or day) it came from."""

    id: str
    run: str


@dataclass(frozen=True, slots=True)
class Cluster:
    members: tuple[Member, ...]
    #: The member nearest the cluster's centre: the one that states it best.
    typical: str

    def runs(self) -> int:
        return len({m.run for m in self.members})


class PatternJob(AgentJobBase):
    """Recognise one agent's patterns (the daily schedule, the admin route, or a forget that
    hid patterns: ``stale`` names them, so the run continues them under their ids)."""

    job: Literal["patterns"] = "patterns"


@dataclass
class PatternReport(AgentJobReport):
    """What a run of pattern recognition did (summed over agents)."""

    experiences: int = 0
    clusters: int = 0
    queued: int = 0
    patterns: list[str] = field(default_factory=list)


def is_recognised_pattern(record: MemoryRecord) -> bool:
    """A pattern the service recognised (and so re-makes and drops), not one a client wrote."""
    return record.kind is MemoryKind.PATTERN and record.metadata.get(RECOGNISED_BY) == RECOGNISER


def run_of(record: MemoryRecord, local_day: str) -> str:
    """The run an experience counts toward: its ``run_id``, else its local day."""
    run = record.experience.run_id if record.experience is not None else None
    return f"run:{run}" if run else f"day:{local_day}"


def cluster(members: Sequence[Member], vectors: npt.NDArray[np.float32], similarity: float) -> list[Cluster]:
    """Average-link clusters of ``members`` (given oldest first) by their unit ``vectors``."""
    if not members:
        return []
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = unit @ unit.T
    groups: list[list[int]] = []
    for i in range(len(members)):
        best, best_mean = -1, similarity
        for g, group in enumerate(groups):
            mean = float(sims[i, group].mean())
            if mean >= best_mean:
                best, best_mean = g, mean
        if best < 0:
            groups.append([i])
        else:
            groups[best].append(i)
    out = []
    for group in groups:
        centre = sims[np.ix_(group, group)].mean(axis=1)
        typical = group[int(np.argmax(centre))]
        out.append(Cluster(tuple(members[i] for i in group), members[typical].id))
    return out


def qualifies(members: Sequence[Member], rules: PatternRules) -> bool:
    return len(members) >= rules.min_members and len({m.run for m in members}) >= rules.min_runs


def stored_members(pattern: MemoryRecord) -> list[Member]:
    """A stored pattern's members with the runs it recorded for them."""
    runs = pattern.experience.member_runs if pattern.experience is not None else []
    return [Member(mid, runs[i] if i < len(runs) else "") for i, mid in enumerate(pattern.source_ids)]


def match(clusters: Sequence[Cluster], patterns: Sequence[MemoryRecord]) -> dict[int, MemoryRecord]:
    """Which stored pattern each cluster continues (by cluster index): the one sharing most
    members, each pattern continued by one cluster at most (the larger overlap wins, then the
    older pattern)."""
    pairs = []
    for c, found in enumerate(clusters):
        ids = {m.id for m in found.members}
        for p in patterns:
            shared = len(ids & set(p.source_ids))
            if shared:
                pairs.append((-shared, p.created_at, p.id, c, p))
    pairs.sort(key=lambda t: (t[0], t[1], t[2], t[3]))
    taken_clusters: set[int] = set()
    taken_patterns: set[str] = set()
    out: dict[int, MemoryRecord] = {}
    for _, _, pid, c, p in pairs:
        if c in taken_clusters or pid in taken_patterns:
            continue
        out[c] = p
        taken_clusters.add(c)
        taken_patterns.add(pid)
    return out


def merged_members(kept: Sequence[Member], joined: Sequence[Member]) -> list[Member]:
    """A continued pattern's members: those it kept, then the cluster's new ones; at most
    `MAX_PATTERN_MEMBERS` (the newest, which come last)."""
    seen = {m.id for m in kept}
    out = [*kept, *(m for m in joined if m.id not in seen)]
    return out[-MAX_PATTERN_MEMBERS:]


def pattern_id(tenant_id: str, agent_id: str, first_member: str) -> str:
    """A new pattern's id, from the member it was first recognised around (stable on re-runs)."""
    return "pat_" + digest(tenant_id, agent_id, "pattern", first_member)


def recognised_at(members: Sequence[MemoryRecord]) -> datetime:
    """When a pattern happened: its newest member's time."""
    return max(m.occurred_at for m in members)
