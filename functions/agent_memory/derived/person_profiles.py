"""Profiles: the scheduled job that keeps, per person, what is known about them.

For one agent it reads the live working memory of the last ``window_days`` (the newest
``max_records``), groups it by the person each memory speaks for (`derived.rules.profiles`: per end
user, then per speaker), chooses each person's most disclosing statements, and has the
summarizer state what they say (a model writes facts, preferences and relations; the local
summarizer keeps the statements, one a line). Each profile is one ``profile`` memory whose
``source_ids`` are exactly its statements, written as an upsert on the agent's working-memory
group, so a search finds it (its speaker is the person: a query naming them favours it) and
returns it with its sources.

A profile whose statements are unchanged is left alone (same id, no write); a person left with
too few statements loses their profile. A forget of a statement hides its profile at once and
queues this job (`governance.forget`), which re-makes it without what was forgotten.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agent_memory.cascade.rules.periods import local_date
from agent_memory.derived.derivation import DerivationService
from agent_memory.derived.rules.kinds import PROFILES
from agent_memory.derived.rules.profiles import (
    PROFILED_BY,
    PROFILER,
    STATEMENT_KINDS,
    SUBJECT,
    ProfileJob,
    ProfileReport,
    ProfileRules,
    Subject,
    by_subject,
    heading,
    profile_id,
    sources_equal,
    statements,
)
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import MetricUnit, metrics
from agent_memory.ports import (
    SummaryInput,
)

#: What a run's log line counts.
_LOGGED = ("records", "subjects", "made", "refreshed", "dropped")
#: Importance of a profile: who someone is outlasts any one thing they said.
PROFILE_IMPORTANCE = 0.7


class PersonProfilesService(DerivationService[ProfileRules]):
    what = PROFILES

    def run(self, job: ProfileJob) -> ProfileReport:
        """Make one agent's profiles now; what changed is queued for the writer."""
        now = self._clock.now()
        tenant, agent = job.tenant_id, job.agent_id
        report = ProfileReport(agents=1)
        rules = self._rules
        records = self._derived.window(
            tenant, agent, now, rules.window_days, STATEMENT_KINDS, rules.max_records
        )
        report.records = len(records)
        stored = self._derived.stored(tenant, agent, now, job.stale)
        day_of = {r.id: local_date(r.occurred_at, self._tz).isoformat() for r in records}
        writes: list[MemoryRecord] = []
        kept: set[str] = set()
        people = sorted(by_subject(records).items(), key=lambda kv: (kv[0].user_id or "", kv[0].key))
        for subject, theirs in people:
            chosen = statements(theirs, day_of, self._rules)
            if len(chosen) < self._rules.min_statements:
                continue
            report.subjects += 1
            pid = profile_id(tenant, agent, subject)
            kept.add(pid)
            existing = stored.get(pid) or self._derived.get(tenant, agent, pid)
            if self._derived.forgotten(existing):
                report.unchanged += 1  # forgotten by someone: it is not made again
                continue
            if existing is not None and existing.deleted_at is None and sources_equal(existing, chosen):
                report.unchanged += 1
                continue
            record = self._profile(tenant, agent, subject, pid, existing, chosen, day_of, now)
            writes.append(record)
            if existing is None:
                report.made += 1
            else:
                report.refreshed += 1
        for pid, existing in stored.items():
            if pid not in kept:
                self._drop(existing, now)
                report.dropped += 1
        report.profiles = self._derived.finish(job, writes, _made_of)
        metrics.add_metric(name="ProfilesMade", unit=MetricUnit.Count, value=report.made + report.refreshed)
        metrics.add_metric(name="ProfilesDropped", unit=MetricUnit.Count, value=report.dropped)
        self._log("profiles made", job, report, _LOGGED)
        return report

    # -- writing --------------------------------------------------------------------------------

    def _profile(
        self,
        tenant: str,
        agent: str,
        subject: Subject,
        pid: str,
        existing: MemoryRecord | None,
        chosen: Sequence[MemoryRecord],
        day_of: dict[str, str],
        now: datetime,
    ) -> MemoryRecord:
        content = self._statement(subject, chosen, day_of)
        return self._derived.record(
            pid,
            tenant,
            agent,
            subject.user_id,
            content,
            [r.id for r in chosen],
            chosen,
            existing,
            now,
            occurred_at=max(r.occurred_at for r in chosen),
            importance=PROFILE_IMPORTANCE,
            metadata={PROFILED_BY: PROFILER, SUBJECT: subject.metadata(), "statements": len(chosen)},
            speaker=subject.speaker,
        )

    def _statement(self, subject: Subject, chosen: Sequence[MemoryRecord], day_of: dict[str, str]) -> str:
        """What the statements say about ``subject``, under a heading that names them."""
        inputs = [SummaryInput(label=day_of.get(r.id, ""), text=r.content) for r in chosen]
        return self._derived.state(chosen[0].tenant_id, inputs, "profile", subject.name, heading(subject))

    def _drop(self, profile: MemoryRecord, now: datetime) -> None:
        """A profile its person no longer has statements enough for."""
        detail: dict[str, object] = {"min_statements": self._rules.min_statements}
        self._derived.drop(profile, now, detail)


def _made_of(profile: MemoryRecord) -> dict[str, object]:
    """What the audit trail says a profile was made of."""
    return {"statements": profile.source_ids[-20:], "statement_count": len(profile.source_ids)}
