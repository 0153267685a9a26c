"""Retention: forgetting on purpose, per plan and grain, without losing what is not summarized.

One run, per tenant with records:

1. **Per grain, finest first** (working, daily, ..., yearly), records whose span ended before the
   plan's cutoff for that grain are read in bounded pages (`MemoryStore.retention_candidates`)
   and deleted by id (`MemoryStore.delete_records`). Finest first: detail goes before the
   summaries that hold it, never after.
2. **Nothing unsummarized is lost.** A live working memory or summary whose *parent* summary
   (the one that folds it, by `domain.cascade`) does not exist is kept and counted
   (``RecordsKeptUnsummarized``), until its parent is made or it is older than the hard
   maximum age (a cascade that never runs must not keep memory for ever). A yearly summary has
   no parent; a forgotten record is past saving and goes.
3. **Purge**: records expired (``expires_at`` passed) and records forgotten longer ago than the
   grace period are removed (search already hides them; this frees the space).
4. **Quota and decay** of working memory, per agent: a record whose importance, decayed by
   ``0.95^weeks`` since its last retrieval (or its creation), is below 0.1 is deleted; past
   ``max_working`` records, the least important (decayed), then oldest, are deleted until the
   agent is at its quota. Both respect rule 2, and neither applies to a plan that keeps
   working memory for ever (``unlimited`` never forgets).

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
from typing import Protocol

from agent_memory.domain.cascade import PARENT_GRAIN, key_for_day, local_date, parent_key
from agent_memory.domain.grains import Grain
from agent_memory.domain.ids import summary_id
from agent_memory.domain.keys import KeyInfo
from agent_memory.domain.plans import DECAY_FLOOR, Retention, decayed_importance, retention_of
from agent_memory.domain.records import MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Clock, MemoryStore, TenantPlans

#: Records read per page, and so deleted per call at most.
PAGE = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FAR = datetime(9000, 1, 1, tzinfo=UTC)


class _ListsKeys(Protocol):
    def list(self) -> list[KeyInfo]: ...


class KeyStorePlans:
    """Plans read from a key store (local ``auth.db`` or the DynamoDB tenants table).

    The store is listed once per run (a Scan on DynamoDB; the table holds keys, not memories),
    and each tenant's plan is that of its newest unrevoked key, so issuing a key on a new plan is
    how an upgrade is made.
    """

    def __init__(self, keys: _ListsKeys) -> None:
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
            "purged": self.purged,
            "over_quota": self.over_quota,
            "decayed": self.decayed,
            "total_deleted": self.total_deleted,
        }


class RetentionService:
    def __init__(
        self,
        store: MemoryStore,
        plans: TenantPlans,
        clock: Clock,
        retention: Mapping[str, Retention],
        *,
        timezone: str = "UTC",
        max_unsummarized: timedelta = timedelta(days=30),
        forget_grace: timedelta = timedelta(days=7),
        max_working: int = 10_000,
        page: int = PAGE,
    ) -> None:
        self._store = store
        self._plans = plans
        self._clock = clock
        self._retention = retention
        self._tz = timezone
        self._max_unsummarized = max_unsummarized
        self._grace = forget_grace
        self._max_working = max_working
        self._page = page

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
            page = self._store.agents_with_records(grain, _EPOCH, _FAR, cursor=cursor)
            for ref in page.agents:
                if tenant is None or ref.tenant_id == tenant:
                    yield ref.tenant_id, ref.agent_id
            cursor = page.next_cursor
            if cursor is None:
                return

    # -- one tenant -----------------------------------------------------------------------------

    def _tenant(self, tenant: str, now: datetime, report: RetentionReport) -> None:
        plan = self._plans.plan_of(tenant)
        hard_cutoff = now - self._max_unsummarized
        for grain in Grain:  # finest first
            kept = retention_of(self._retention, plan, grain)
            if kept is None:
                continue
            deleted = self._grain(tenant, grain, now - kept, now, hard_cutoff, report)
            report.deleted[grain.value] = report.deleted.get(grain.value, 0) + deleted
        report.purged += self._store.purge(tenant, now, now - self._grace)
        if retention_of(self._retention, plan, Grain.WORKING) is not None:  # unlimited: never
            self._quota(tenant, now, hard_cutoff, report)
        logger.info("retention of a tenant", extra={"tenant_id": tenant, "plan": plan})

    def _grain(
        self,
        tenant: str,
        grain: Grain,
        cutoff: datetime,
        now: datetime,
        hard_cutoff: datetime,
        report: RetentionReport,
    ) -> int:
        deleted = 0
        cursor: str | None = None
        parents = _ParentCache(self._store, self._tz)
        while True:
            page = self._store.retention_candidates(tenant, grain, cutoff, cursor=cursor, limit=self._page)
            doomed: dict[str, list[str]] = {}
            for record in page.records:
                if self._must_keep(record, now, hard_cutoff, parents):
                    report.kept_unsummarized += 1
                else:
                    doomed.setdefault(record.agent_id, []).append(record.id)
            for agent, ids in doomed.items():
                deleted += self._store.delete_records(tenant, agent, ids)
            cursor = page.next_cursor
            if cursor is None:
                return deleted

    def _must_keep(
        self, record: MemoryRecord, now: datetime, hard_cutoff: datetime, parents: _ParentCache
    ) -> bool:
        """Live, not past the hard maximum age, and not folded into an existing parent yet."""
        if not record.is_live(now) or record.span[1] < hard_cutoff:
            return False
        return not parents.summarized(record, now)

    # -- quota and decay ------------------------------------------------------------------------

    def _quota(self, tenant: str, now: datetime, hard_cutoff: datetime, report: RetentionReport) -> None:
        parents = _ParentCache(self._store, self._tz)
        for _, agent in self._agents(Grain.WORKING, tenant):
            records = self._working(tenant, agent, now)
            worth = {r.id: _worth(r, now) for r in records}
            # Least worth first, then oldest: the order in which working memory is given up.
            records.sort(key=lambda r: (worth[r.id], r.occurred_at, r.id))

            def deletable(r: MemoryRecord) -> bool:
                return r.span[1] < hard_cutoff or parents.summarized(r, now)

            decayed = [r.id for r in records if worth[r.id] < DECAY_FLOOR and deletable(r)]
            gone = set(decayed)
            excess = len(records) - len(gone) - self._max_working
            over: list[str] = []
            for record in records:
                if excess <= 0:
                    break
                if record.id not in gone and deletable(record):
                    over.append(record.id)
                    excess -= 1
            report.kept_unsummarized += max(excess, 0)
            if decayed:
                report.decayed += self._store.delete_records(tenant, agent, decayed)
            if over:
                report.over_quota += self._store.delete_records(tenant, agent, over)

    def _working(self, tenant: str, agent: str, now: datetime) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        cursor: str | None = None
        while True:
            page = self._store.list(tenant, agent, now, grain=Grain.WORKING, limit=self._page, cursor=cursor)
            out += page.records
            cursor = page.next_cursor
            if cursor is None:
                return out


def _worth(record: MemoryRecord, now: datetime) -> float:
    since = record.last_accessed_at or record.created_at
    return decayed_importance(record.importance, (now - since).total_seconds() / (7 * 86400))


class _ParentCache:
    """Whether a record's parent summary exists, looked up once per (agent, parent)."""

    def __init__(self, store: MemoryStore, tz: str) -> None:
        self._store = store
        self._tz = tz
        self._known: dict[tuple[str, str, str], bool] = {}

    def summarized(self, record: MemoryRecord, now: datetime) -> bool:
        ref = parent_of(record, self._tz)
        if ref is None:
            return True  # a yearly summary is folded no further: nothing to wait for
        grain, key = ref
        sid = summary_id(record.tenant_id, record.agent_id, grain.value, key)
        cache_key = (record.tenant_id, record.agent_id, sid)
        if cache_key not in self._known:
            parent = self._store.get(record.tenant_id, record.agent_id, sid)
            # A forgotten parent counts as made: its children were judged with it.
            self._known[cache_key] = parent is not None
        return self._known[cache_key]


def parent_of(record: MemoryRecord, tz: str) -> tuple[Grain, str] | None:
    """The (grain, time key) of the summary that folds ``record``, by the cascade's rules."""
    if record.grain is Grain.WORKING:
        return Grain.DAILY, key_for_day(Grain.DAILY, local_date(record.occurred_at, tz))
    if record.grain not in PARENT_GRAIN or record.time_key is None:
        return None
    return PARENT_GRAIN[record.grain], parent_key(record.grain, record.time_key)
