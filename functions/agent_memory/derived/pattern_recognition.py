"""Pattern recognition: the scheduled job that turns repeated experiences into patterns.

For one agent it reads the success, failure and insight experiences of the last
``window_days`` (the newest ``max_experiences``), embeds what each says (its content and
outcome: what was found, not the conversation around it), clusters them per end user
(`derived.rules.patterns`; a pattern never mixes two end users' memories, so erasing one user's data
reaches every pattern holding it), and for each cluster with enough members across enough runs
makes, refreshes or leaves alone one `pattern` memory. A stored pattern no cluster continues is
checked on its own members: a member forgotten since leaves it, and a pattern left too small is
dropped.

Patterns are written as upserts on the agent's working-memory group, the group feedback is
counted on, so a re-made pattern keeps every confirmation counted before it was stored. The job
is idempotent: the same experiences give the same clusters, the same ids and no write.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from agent_memory.cascade.rules.periods import local_date
from agent_memory.derived.derivation import DerivationParts, DerivationService
from agent_memory.derived.rules.kinds import PATTERNS
from agent_memory.derived.rules.patterns import (
    RECOGNISED_BY,
    RECOGNISER,
    Cluster,
    Member,
    PatternJob,
    PatternReport,
    PatternRules,
    cluster,
    match,
    merged_members,
    pattern_id,
    qualifies,
    recognised_at,
    run_of,
    stored_members,
)
from agent_memory.experience.rules.confidence import Experience, pattern_prior
from agent_memory.model.records import MEMBER_KINDS, MemoryRecord
from agent_memory.observability import MetricUnit, metrics
from agent_memory.ports import (
    Embedder,
    SummaryInput,
)
from agent_memory.tenancy.models import TenantEmbedders, spaces_of

#: What a run's log line counts.
_LOGGED = ("experiences", "clusters", "made", "refreshed", "dropped")
#: The counts feedback keeps on a pattern (`Experience.after`).
_FEEDBACK_COUNTS = {"confirmations", "refutations", "applications"}


class PatternRecognitionService(DerivationService[PatternRules]):
    what = PATTERNS

    def __init__(
        self,
        parts: DerivationParts,
        rules: PatternRules,
        embedder: Embedder,
        embedders: TenantEmbedders | None = None,
    ) -> None:
        super().__init__(parts, rules)
        self._embedder = embedder
        #: Experiences are compared by the tenant's own embedding model when it chose one.
        self._embedders = embedders

    def run(self, job: PatternJob) -> PatternReport:
        """Recognise one agent's patterns now; what changed is queued for the writer."""
        now = self._clock.now()
        tenant, agent = job.tenant_id, job.agent_id
        report = PatternReport(agents=1)
        experiences = self._experiences(tenant, agent, now)
        report.experiences = len(experiences)
        by_id = {r.id: r for r in experiences}
        patterns = self._patterns(tenant, agent, now, job.stale)
        writes: list[MemoryRecord] = []
        continued: set[str] = set()
        for user_id, records in _per_user(experiences):
            clusters = self._clusters(records)
            found = [c for c in clusters if qualifies(c.members, self._rules)]
            report.clusters += len(found)
            continues = match(found, [p for p in patterns if p.user_id == user_id])
            for index, c in enumerate(found):
                existing = continues.get(index)
                if existing is not None:
                    continued.add(existing.id)
                    kept = self._not_forgotten(existing, by_id)
                    members = merged_members(kept, c.members)
                    typical = c.typical
                else:
                    members, typical = list(c.members), c.typical
                outcome = self._pattern(tenant, agent, user_id, existing, members, typical, by_id, now)
                self._count(outcome, report, writes)
        for existing in patterns:
            if existing.id in continued:
                continue
            kept = self._not_forgotten(existing, by_id)
            if qualifies(kept, self._rules):
                typical = kept[-1].id
                outcome = self._pattern(tenant, agent, existing.user_id, existing, kept, typical, by_id, now)
                self._count(outcome, report, writes)
            else:
                self._drop(existing, len(kept), now)
                report.dropped += 1
        report.patterns = self._derived.finish(job, writes, _made_of)
        metrics.add_metric(name="PatternsMade", unit=MetricUnit.Count, value=report.made)
        metrics.add_metric(name="PatternsRefreshed", unit=MetricUnit.Count, value=report.refreshed)
        metrics.add_metric(name="PatternsDropped", unit=MetricUnit.Count, value=report.dropped)
        self._log("patterns recognised", job, report, _LOGGED)
        return report

    # -- reading --------------------------------------------------------------------------------

    def _experiences(self, tenant: str, agent: str, now: datetime) -> list[MemoryRecord]:
        """The newest experiences of the window that a pattern may be made of, oldest first."""
        rules = self._rules
        found = self._derived.window(
            tenant, agent, now, rules.window_days, MEMBER_KINDS, rules.max_experiences
        )
        records = [r for r in found if r.experience is not None]
        return sorted(records, key=lambda r: (r.occurred_at, r.id))

    def _patterns(self, tenant: str, agent: str, now: datetime, stale: Sequence[str]) -> list[MemoryRecord]:
        """The agent's recognised patterns, live ones and those a forget hid to be re-made."""
        patterns = self._derived.stored(tenant, agent, now, stale)
        return sorted(patterns.values(), key=lambda r: (r.created_at, r.id))

    def _clusters(self, records: Sequence[MemoryRecord]) -> list[Cluster]:
        if not records:
            return []
        embedder = spaces_of(self._embedders, self._embedder, records[0].tenant_id).search.embedder
        vectors = np.asarray(embedder.embed([experience_text(r) for r in records]), dtype=np.float32)
        members = [Member(r.id, run_of(r, local_date(r.occurred_at, self._tz).isoformat())) for r in records]
        return cluster(members, vectors, self._rules.similarity)

    def _not_forgotten(self, pattern: MemoryRecord, by_id: dict[str, MemoryRecord]) -> list[Member]:
        """A stored pattern's members less those forgotten since (a member retention deleted, or
        one that fell out of the window, still counts)."""
        kept = []
        for member in stored_members(pattern):
            if member.id not in by_id:
                record = self._derived.get(pattern.tenant_id, pattern.agent_id, member.id)
                if record is not None and record.deleted_at is not None:
                    continue
                if record is not None:
                    by_id[record.id] = record
            kept.append(member)
        return kept

    # -- writing --------------------------------------------------------------------------------

    def _pattern(
        self,
        tenant: str,
        agent: str,
        user_id: str | None,
        existing: MemoryRecord | None,
        members: Sequence[Member],
        typical: str,
        by_id: dict[str, MemoryRecord],
        now: datetime,
    ) -> tuple[str, MemoryRecord | None]:
        """``("made" | "refreshed", record)`` to write, or ``("unchanged", None)``."""
        ids = [m.id for m in members]
        if (
            existing is not None
            and existing.deleted_at is None
            and existing.source_ids == ids
            and existing.experience is not None
            and existing.experience.member_runs == [m.run for m in members]
        ):
            return "unchanged", None
        pid = existing.id if existing is not None else pattern_id(tenant, agent, ids[0])
        if existing is None and self._derived.forgotten(self._derived.get(tenant, agent, pid)):
            return "unchanged", None  # forgotten by someone: it is not recognised again
        readable = [by_id[i] for i in ids if i in by_id]
        readable.sort(key=lambda r: (r.id != typical, r.occurred_at, r.id))
        statement = self._statement(readable) if readable else (existing.content if existing else "")
        if not statement:
            return "unchanged", None
        confidences = [r.experience.confidence for r in readable if r.experience is not None]
        if existing is not None and existing.experience is not None:  # members read no more
            confidences += [existing.experience.prior] * (len(members) - len(confidences))
        prior, weight = pattern_prior(confidences)
        old = existing.experience if existing is not None else None
        experience = Experience(
            prior=prior,
            prior_weight=weight,
            members=len(members),
            runs=len({m.run for m in members}),
            member_runs=[m.run for m in members],
            # What feedback counted on the pattern survives its re-make.
            **(old.model_dump(include=_FEEDBACK_COUNTS) if old is not None else {}),
        )
        record = self._derived.record(
            pid,
            tenant,
            agent,
            user_id,
            statement,
            ids,
            readable,
            existing,
            now,
            occurred_at=recognised_at(readable) if readable else (existing.occurred_at if existing else now),
            importance=0.7,
            metadata={RECOGNISED_BY: RECOGNISER},
            experience=experience,
        )
        return ("refreshed" if existing is not None else "made"), record

    def _statement(self, members: Sequence[MemoryRecord]) -> str:
        """What the members have in common, stated once (the summarizer's pattern prompt)."""
        inputs = [
            SummaryInput(
                label=(r.experience.run_id if r.experience is not None else None)
                or local_date(r.occurred_at, self._tz).isoformat(),
                text=experience_text(r),
            )
            for r in members
        ]
        return self._derived.state(members[0].tenant_id, inputs, "pattern")

    def _count(
        self, outcome: tuple[str, MemoryRecord | None], report: PatternReport, writes: list[MemoryRecord]
    ) -> None:
        kind, record = outcome
        if record is None:
            report.unchanged += 1
            return
        writes.append(record)
        if kind == "made":
            report.made += 1
        else:
            report.refreshed += 1

    def _drop(self, pattern: MemoryRecord, members_left: int, now: datetime) -> None:
        """A pattern its members no longer make."""
        detail: dict[str, object] = {"members_left": members_left, "min_members": self._rules.min_members}
        self._derived.drop(pattern, now, detail)


def _made_of(pattern: MemoryRecord) -> dict[str, object]:
    """What the audit trail says a pattern was made of."""
    return {
        "members": pattern.source_ids[-20:],
        "member_count": len(pattern.source_ids),
        "runs": pattern.experience.runs if pattern.experience else 0,
        "prior": pattern.experience.prior if pattern.experience else None,
    }


def experience_text(record: MemoryRecord) -> str:
    """What an experience says, for clustering and for stating a pattern: its content and its
    outcome (not the conversation it was written in)."""
    outcome = record.experience.outcome if record.experience is not None else None
    return f"{record.content} — {outcome}" if outcome else record.content


def _per_user(records: Sequence[MemoryRecord]) -> list[tuple[str | None, list[MemoryRecord]]]:
    groups: dict[str | None, list[MemoryRecord]] = {}
    for r in records:
        groups.setdefault(r.user_id, []).append(r)
    return sorted(groups.items(), key=lambda kv: kv[0] or "")
