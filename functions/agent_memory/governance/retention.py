"""Retention: forgetting on purpose, per plan and grain, without losing what is not summarized.

One run, per tenant with records:

1. **Per grain, finest first** (working, daily, ..., yearly), records whose span ended before the
   plan's cutoff for that grain are read in bounded pages (`MemoryStore.retention_candidates`)
   and deleted by id (`MemoryStore.delete_records`). Finest first: detail goes before the
   summaries that hold it, never after.
2. **Only what a summary holds is deleted.** A live working memory or summary is deleted only
   when its *parent* summary (the one that folds it, by `cascade.rules.periods`) is live and names it
   in its ``source_ids``. Existing is not enough: a late write into a day already summarized,
   or a history import, is in no summary. Such a record is kept and counted
   (``RecordsKeptUnsummarized``), and its parent's period (when it has ended) is queued to be
   made or refreshed, so a later run can delete it; one kept past ``max_unsummarized`` is also
   counted as overdue (``RecordsUnsummarizedOverdue``: the cascade is not keeping up). A yearly
   summary has no parent; a forgotten record is past saving and goes.
3. **Purge**: records expired (``expires_at`` passed) and records forgotten longer ago than the
   grace period are removed (search already hides them; this frees the space).
4. **Quota and decay** of working memory, per agent: a record whose importance, decayed by
   ``0.95^weeks`` since its last retrieval (or its creation), is below 0.1 is deleted; past
   ``max_working`` records, the least important (decayed), then oldest, are deleted until the
   agent is at its quota. Both respect rule 2, and neither applies to a plan that keeps
   working memory for ever (``unlimited`` never forgets).

Every record a rule deletes gets an audit event ``retention`` naming the rule (``plan``,
``quota`` or ``decay``), so "where did this memory go?" has an answer.

Every step is idempotent: a second run finds nothing more to do. Metrics: ``RecordsDeleted`` and
``RecordsDeleted<Grain>``, ``RecordsKeptUnsummarized``, ``RecordsPurged``, ``RecordsOverQuota``,
``RecordsDecayed``.

A tenant's plan comes from the key store the authorizer reads (`KeyStorePlans`: the plan of the
tenant's newest live key), so an upgrade takes effect at the next run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from agent_memory.cascade.rules.periods import PARENT_GRAIN, covered_span, key_for_day, local_date, parent_key
from agent_memory.derived.rules.kinds import is_derived
from agent_memory.governance.rules.plans import DECAY_FLOOR, Retention, decayed_importance, hours_of
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    CleanupMemory,
    Clock,
    Job,
    JobQueue,
    KeyStore,
    ListQuery,
    PeriodScan,
    RecordLookup,
    TenantPlans,
)
from agent_memory.tenancy.rules.keys import KeyInfo
from agent_memory.tenancy.rules.tenant_settings import effective_retention
from agent_memory.tenancy.settings import SettingsCache

#: Records read per page, and so deleted per call at most.
PAGE = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FAR = datetime(9000, 1, 1, tzinfo=UTC)


class KeyStorePlans:
    """Plans read from a key store (local ``auth.db`` or the DynamoDB tenants table).

    The store is listed once per run (a Scan on DynamoDB; the table holds keys, not memories),
    and each tenant's plan is that of its newest unrevoked key, so issuing a key on a new plan is
    how an upgrade is made.
    """

    def __init__(self, keys: KeyStore) -> None:
        self._keys = keys
        self._plans: dict[str, str] | None = None

    def plan_of(self, tenant_id: str) -> str | None:
        if self._plans is None:
            newest: dict[str, KeyInfo] = {}
            for key in self._keys.list():
                if key.revoked_at is None and (
                    key.tenant_id not in newest or key.created_at > newest[key.tenant_id].created_at
                ):
                    newest[key.tenant_id] = key
            self._plans = {tenant: key.plan for tenant, key in newest.items()}
        return self._plans.get(tenant_id)


@dataclass
class RetentionReport:
    """What one run did, per tenant totals."""

    deleted: dict[str, int] = field(default_factory=dict)
    kept_unsummarized: int = 0
    unsummarized_overdue: int = 0
    summaries_queued: int = 0
    purged: int = 0
    over_quota: int = 0
    decayed: int = 0
    tenants: int = 0

    @property
    def total_deleted(self) -> int:
        return sum(self.deleted.values()) + self.purged + self.over_quota + self.decayed

    def as_dict(self) -> dict[str, object]:
        return {
            "tenants": self.tenants,
            "deleted": dict(self.deleted),
            "kept_unsummarized": self.kept_unsummarized,
            "unsummarized_overdue": self.unsummarized_overdue,
            "summaries_queued": self.summaries_queued,
            "purged": self.purged,
            "over_quota": self.over_quota,
            "decayed": self.decayed,
            "total_deleted": self.total_deleted,
        }


class RetentionService:
    def __init__(
        self,
        store: CleanupMemory,
        plans: TenantPlans,
        clock: Clock,
        retention: Mapping[str, Retention],
        jobs: JobQueue,
        *,
        timezone: str = "UTC",
        max_unsummarized: timedelta = timedelta(days=30),
        forget_grace: timedelta = timedelta(days=7),
        max_working: int = 10_000,
        page: int = PAGE,
        settings: SettingsCache | None = None,
    ) -> None:
        """``jobs`` takes the summarize jobs for periods whose records no summary holds yet;
        ``max_unsummarized`` is how long such a record may wait before it counts as overdue."""
        self._store = store
        self._plans = plans
        self._clock = clock
        self._retention = retention
        self._tz = timezone
        self._max_unsummarized = max_unsummarized
        self._grace = forget_grace
        self._max_working = max_working
        self._page = page
        self._jobs = jobs
        #: A tenant's own retention (shorter than its plan's, never longer) and per-agent bound.
        self._settings = settings

    def run(self, tenants: Iterable[str] | None = None) -> RetentionReport:
        """Clean up every tenant with records (or those named); what was done."""
        now = self._clock.now()
        report = RetentionReport()
        for tenant in tenants if tenants is not None else self.tenants():
            report.tenants += 1
            self._tenant(tenant, now, report)
        for grain, count in report.deleted.items():
            metrics.add_metric(name=f"RecordsDeleted{grain.capitalize()}", unit=MetricUnit.Count, value=count)
        metrics.add_metric(name="RecordsDeleted", unit=MetricUnit.Count, value=report.total_deleted)
        metrics.add_metric(
            name="RecordsKeptUnsummarized", unit=MetricUnit.Count, value=report.kept_unsummarized
        )
        metrics.add_metric(
            name="RecordsUnsummarizedOverdue", unit=MetricUnit.Count, value=report.unsummarized_overdue
        )
        metrics.add_metric(
            name="RetentionSummariesQueued", unit=MetricUnit.Count, value=report.summaries_queued
        )
        metrics.add_metric(name="RecordsPurged", unit=MetricUnit.Count, value=report.purged)
        metrics.add_metric(name="RecordsOverQuota", unit=MetricUnit.Count, value=report.over_quota)
        metrics.add_metric(name="RecordsDecayed", unit=MetricUnit.Count, value=report.decayed)
        logger.info("retention run", extra=report.as_dict())
        return report

    def tenants(self) -> Iterator[str]:
        """Every tenant with live records of any grain (from the store's agent listing)."""
        seen: set[str] = set()
        for grain in Grain:
            for agent in self._agents(grain):
                if agent[0] not in seen:
                    seen.add(agent[0])
                    yield agent[0]

    def _agents(self, grain: Grain, tenant: str | None = None) -> Iterator[tuple[str, str]]:
        cursor: str | None = None
        while True:
            page = self._store.agents_with_records(PeriodScan(grain, _EPOCH, _FAR, cursor=cursor))
            for ref in page.agents:
                if tenant is None or ref.tenant_id == tenant:
                    yield ref.tenant_id, ref.agent_id
            cursor = page.next_cursor
            if cursor is None:
                return

    # -- one tenant -----------------------------------------------------------------------------

    def _tenant(self, tenant: str, now: datetime, report: RetentionReport) -> None:
        plan = self._plans.plan_of(tenant)
        own = self._settings.settings(tenant) if self._settings is not None else None
        hours = effective_retention(hours_of(self._retention, plan), own)
        folds = _Folds(self._store, self._tz, now, now - self._max_unsummarized)
        for grain in Grain:  # finest first
            kept = hours.get(grain)
            if kept is None:
                continue
            deleted = self._grain(tenant, grain, now - timedelta(hours=kept), now, folds, report)
            report.deleted[grain.value] = report.deleted.get(grain.value, 0) + deleted
        report.purged += self._store.purge(tenant, now, now - self._grace)
        if hours.get(Grain.WORKING) is not None:  # unlimited: never
            bound = own.max_working_per_agent if own is not None else None
            self._quota(tenant, now, folds, report, min(self._max_working, bound or self._max_working))
        self._queue_summaries(tenant, folds, report)
        logger.info("retention of a tenant", extra={"tenant_id": tenant, "plan": plan})

    def _grain(
        self,
        tenant: str,
        grain: Grain,
        cutoff: datetime,
        now: datetime,
        folds: _Folds,
        report: RetentionReport,
    ) -> int:
        deleted = 0
        cursor: str | None = None
        while True:
            page = self._store.retention_candidates(tenant, grain, cutoff, cursor=cursor, limit=self._page)
            doomed: dict[str, list[str]] = {}
            for record in page.records:
                if record.is_live(now) and is_derived(record):
                    continue  # lives while its sources make it: its job drops it, not a plan
                if record.is_live(now) and not folds.holds(record):
                    report.kept_unsummarized += 1
                else:
                    doomed.setdefault(record.agent_id, []).append(record.id)
            for agent, ids in doomed.items():
                deleted += self._delete(tenant, agent, ids, "plan", now)
            cursor = page.next_cursor
            if cursor is None:
                return deleted

    def _delete(self, tenant: str, agent: str, ids: list[str], rule: str, now: datetime) -> int:
        """Delete by id, and say in the audit trail which rule took each record."""
        count = self._store.delete_records(tenant, agent, ids)
        self._store.append_audit(
            [
                AuditEvent(
                    tenant_id=tenant,
                    agent_id=agent,
                    record_id=record_id,
                    action=AuditAction.RETENTION,
                    actor="retention",
                    at=now,
                    detail={"rule": rule},
                )
                for record_id in ids
            ]
        )
        return count

    def _queue_summaries(self, tenant: str, folds: _Folds, report: RetentionReport) -> None:
        """Make (or refresh) the summaries that would let kept records go at the next run."""
        report.unsummarized_overdue += folds.overdue
        if not folds.wanted:
            return
        jobs = [
            Job.of(
                SummarizeJob(tenant_id=tenant, agent_id=agent, grain=grain, time_key=key, reason="retention")
            )
            for agent, grain, key in sorted(folds.wanted)
        ]
        if self._jobs is None:
            logger.warning(
                "records kept unsummarized; no job queue to make their summaries", extra={"count": len(jobs)}
            )
            return
        self._jobs.send(jobs)
        report.summaries_queued += len(jobs)

    # -- quota and decay ------------------------------------------------------------------------

    def _quota(
        self, tenant: str, now: datetime, folds: _Folds, report: RetentionReport, max_working: int
    ) -> None:
        for _, agent in self._agents(Grain.WORKING, tenant):
            records = self._working(tenant, agent, now)
            worth = {r.id: _worth(r, now) for r in records}
            # Least worth first, then oldest: the order in which working memory is given up.
            records.sort(key=lambda r: (worth[r.id], r.occurred_at, r.id))
            decayed = [r.id for r in records if worth[r.id] < DECAY_FLOOR and folds.holds(r)]
            gone = set(decayed)
            excess = len(records) - len(gone) - max_working
            over: list[str] = []
            for record in records:
                if excess <= 0:
                    break
                if record.id not in gone and folds.holds(record):
                    over.append(record.id)
                    excess -= 1
            report.kept_unsummarized += max(excess, 0)
            if decayed:
                report.decayed += self._delete(tenant, agent, decayed, "decay", now)
            if over:
                report.over_quota += self._delete(tenant, agent, over, "quota", now)

    def _working(self, tenant: str, agent: str, now: datetime) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        cursor: str | None = None
        while True:
            page = self._store.list(
                ListQuery(tenant, agent, now, grain=Grain.WORKING, limit=self._page, cursor=cursor)
            )
            out += page.records
            cursor = page.next_cursor
            if cursor is None:
                return out


def _worth(record: MemoryRecord, now: datetime) -> float:
    since = record.last_accessed_at or record.created_at
    return decayed_importance(record.importance, (now - since).total_seconds() / (7 * 86400))


class _Folds:
    """Whether a record's parent summary holds it, looked up once per (agent, parent) in a run;
    and the parents to make or refresh so that the records it does not hold can go later."""

    def __init__(self, store: RecordLookup, tz: str, now: datetime, overdue_before: datetime) -> None:
        self._store = store
        self._tz = tz
        self._now = now
        self._overdue_before = overdue_before
        self._sources: dict[tuple[str, str], frozenset[str] | None] = {}
        self.wanted: set[tuple[str, Grain, str]] = set()
        self.overdue = 0

    def holds(self, record: MemoryRecord) -> bool:
        """Whether the record's live parent summary names it among its sources (a yearly
        summary is folded no further: nothing to wait for)."""
        ref = parent_of(record, self._tz)
        if ref is None:
            return True
        grain, key = ref
        sid = summary_id(record.tenant_id, record.agent_id, grain.value, key)
        cache_key = (record.agent_id, sid)
        if cache_key not in self._sources:
            parent = self._store.get(record.tenant_id, record.agent_id, sid)
            live = parent is not None and parent.is_live(self._now)
            self._sources[cache_key] = frozenset(parent.source_ids) if live and parent else None
        sources = self._sources[cache_key]
        if sources is not None and record.id in sources:
            return True
        self._want(record, grain, key)
        return False

    def _want(self, record: MemoryRecord, grain: Grain, key: str) -> None:
        """Queue the parent's period, once it has ended (an open period is never summarized)."""
        if record.span[1] < self._overdue_before:
            self.overdue += 1
        _, end = covered_span(grain, key, self._tz)
        if end <= self._now:
            self.wanted.add((record.agent_id, grain, key))


def parent_of(record: MemoryRecord, tz: str) -> tuple[Grain, str] | None:
    """The (grain, time key) of the summary that folds ``record``, by the cascade's rules."""
    if record.grain is Grain.WORKING:
        return Grain.DAILY, key_for_day(Grain.DAILY, local_date(record.occurred_at, tz))
    if record.grain not in PARENT_GRAIN or record.time_key is None:
        return None
    return PARENT_GRAIN[record.grain], parent_key(record.grain, record.time_key)
