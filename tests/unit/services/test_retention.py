"""Retention on the local store, on a controlled clock: plans, cutoffs, the rule that only what a
live summary lists by id is deleted, purges, quotas, importance decay and the audit trail."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from tests.fakes import FixedClock
from tests.payloads import memory_record

from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.cascade.rules.periods import covered_span, key_for_day
from agent_memory.governance.retention import KeyStorePlans, RetentionService, parent_of
from agent_memory.governance.rules.plans import DEFAULT_PLANS, load_plans
from agent_memory.model.grains import Grain
from agent_memory.model.ids import memory_id, summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports import AuditAction, AuditQuery, Job, StoredRecord
from agent_memory.tenancy.rules.keys import KeyInfo

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DIM = 8


class Plans:
    def __init__(self, plans: dict[str, str]) -> None:
        self.plans = plans

    def plan_of(self, tenant_id: str) -> str | None:
        return self.plans.get(tenant_id)


class Jobs:
    """The job queue, recording what retention asked to be summarized."""

    def __init__(self) -> None:
        self.sent: list[Job] = []

    def send(self, jobs: list[Job], delay_s: int = 0) -> None:
        self.sent += jobs

    def keys(self) -> set[tuple[str, str]]:
        return {
            (j.grain.value, j.time_key) for j in (SummarizeJob.model_validate_json(x.body) for x in self.sent)
        }


@pytest.fixture
def jobs() -> Jobs:
    return Jobs()


@pytest.fixture
def store(tmp_path: Path) -> SqliteMemoryStore:
    return SqliteMemoryStore(tmp_path / "m.db", dimension=DIM, model_id="test")


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def working(
    tenant: str, at: datetime, text: str, agent: str = "a", importance: float = 0.5, **fields: object
) -> MemoryRecord:
    return memory_record(
        memory_id(tenant, agent, text),
        text,
        tenant=tenant,
        agent=agent,
        at=at,
        importance=importance,
        **fields,
    )


def summary(
    tenant: str, grain: Grain, key: str, agent: str = "a", sources: tuple[str, ...] = ()
) -> MemoryRecord:
    start, end = covered_span(grain, key, "UTC")
    text = f"{grain.value} {key}"
    return memory_record(
        summary_id(tenant, agent, grain.value, key),
        text,
        tenant=tenant,
        agent=agent,
        at=start,
        created_at=end,
        updated_at=end,
        grain=grain,
        time_key=key,
        period_start=start,
        period_end=end,
        kind=MemoryKind.SUMMARY,
        source_ids=list(sources),
    )


def put(store: SqliteMemoryStore, *records: MemoryRecord) -> None:
    store.put([StoredRecord(r, _vec(i)) for i, r in enumerate(records)])


#: A plan that keeps working memory for years, so quota and decay are seen on their own.
LONG = '{"long": {"working": 100000}}'


def service(
    store: SqliteMemoryStore, plans: dict[str, str], jobs: Jobs | None = None, **kw: object
) -> RetentionService:
    return RetentionService(store, Plans(plans), FixedClock(NOW), load_plans(LONG), jobs or Jobs(), **kw)  # type: ignore[arg-type]


def daily_of(*records: MemoryRecord) -> MemoryRecord:
    """The daily summary of the first record's day, made from all of ``records``."""
    first = records[0]
    key = key_for_day(Grain.DAILY, first.occurred_at.date())
    return summary(first.tenant_id, Grain.DAILY, key, first.agent_id, tuple(r.id for r in records))


def alive(store: SqliteMemoryStore, record: MemoryRecord) -> bool:
    return store.get(record.tenant_id, record.agent_id, record.id) is not None


@pytest.mark.parametrize(("plan", "hours"), [("free", 48), ("starter", 120), ("pro", 240)])
def test_working_memory_goes_at_its_plans_cutoff_once_summarized(
    store: SqliteMemoryStore, plan: str, hours: int
) -> None:
    # GIVEN summarized working memory just inside and just outside the plan's cutoff
    inside = working("t", NOW - timedelta(hours=hours - 1), "inside")
    outside = working("t", NOW - timedelta(hours=hours + 1), "outside")
    put(store, inside, outside, daily_of(inside), daily_of(outside))
    # WHEN retention runs
    report = service(store, {"t": plan}).run()
    # THEN only the record past the cutoff is gone
    assert not alive(store, outside)
    assert alive(store, inside)
    assert report.deleted["working"] == 1


@pytest.mark.parametrize("plan", ["free", "starter", "pro"])
@pytest.mark.parametrize("grain", [Grain.DAILY, Grain.WEEKLY, Grain.MONTHLY, Grain.QUARTERLY, Grain.YEARLY])
def test_each_summary_grain_goes_at_its_plans_cutoff(
    store: SqliteMemoryStore, plan: str, grain: Grain
) -> None:
    # GIVEN a summary of that grain whose period ended past the cutoff, and one that ended inside it
    kept = timedelta(hours=DEFAULT_PLANS[plan][grain] or 0)
    old_day = (NOW - kept - timedelta(days=400)).date()
    new_day = (NOW - kept + timedelta(days=1)).date()
    old = summary("t", grain, key_for_day(grain, old_day))
    recent_key = key_for_day(grain, new_day)
    recent = summary("t", grain, recent_key)
    put(store, old, recent)
    # AND their parents exist (so nothing is kept as unsummarized)
    parents = []
    for rec in (old, recent):
        ref = parent_of(rec, "UTC")
        if ref is not None:
            parents.append(summary("t", *ref, sources=(rec.id,)))
    put(store, *parents)
    # WHEN retention runs with a generous hard maximum age
    service(store, {"t": plan}, max_unsummarized=timedelta(days=10_000)).run()
    # THEN the old one is gone; the recent one (its period ended after the cutoff) stays
    assert not alive(store, old)
    if covered_span(grain, recent_key, "UTC")[1] > NOW - kept:
        assert alive(store, recent)


def test_unlimited_never_forgets(store: SqliteMemoryStore) -> None:
    # GIVEN
    ancient = working("t", NOW - timedelta(days=5000), "ancient")
    put(store, ancient, daily_of(ancient))
    # WHEN / THEN
    assert service(store, {"t": "unlimited"}, max_unsummarized=timedelta(days=10)).run().total_deleted == 0
    assert alive(store, ancient)


def test_unsummarized_memory_is_kept_until_its_parent_exists_then_deleted(store: SqliteMemoryStore) -> None:
    # GIVEN free-plan working memory 3 days old whose daily summary was never made
    old = working("t", NOW - timedelta(days=3), "not yet summarized")
    put(store, old)
    # WHEN retention runs THEN it is kept and counted
    report = service(store, {"t": "free"}).run()
    assert alive(store, old)
    assert report.kept_unsummarized == 1
    # WHEN its daily summary is made and retention runs again THEN it goes
    put(store, daily_of(old))
    report = service(store, {"t": "free"}).run()
    assert not alive(store, old)
    assert report.kept_unsummarized == 0


def test_unsummarized_memory_is_kept_past_the_maximum_age_and_its_day_is_queued(
    store: SqliteMemoryStore, jobs: Jobs
) -> None:
    # GIVEN a history import: working memory 31 days old that no summary holds
    old = working("t", NOW - timedelta(days=31), "never summarized")
    put(store, old)
    # WHEN retention runs THEN it is kept, counted overdue, and its day is queued to be summarized
    report = service(store, {"t": "free"}, jobs, max_unsummarized=timedelta(days=30)).run()
    assert alive(store, old)
    assert report.unsummarized_overdue == 1 and report.summaries_queued == 1
    assert jobs.keys() == {("daily", old.occurred_at.date().isoformat())}


def test_a_late_write_into_a_summarized_day_is_kept_until_the_summary_names_it(
    store: SqliteMemoryStore, jobs: Jobs
) -> None:
    # GIVEN a day summarized from one record, and a late write into that day the summary lacks
    early = working("t", NOW - timedelta(days=5, hours=3), "early")
    late = working("t", NOW - timedelta(days=5, hours=2), "Late note: Hannah signed the lease")
    put(store, early, late, daily_of(early))
    # WHEN retention runs THEN only the listed record goes; the late one stays and its day is queued
    report = service(store, {"t": "free"}, jobs).run()
    assert not alive(store, early) and alive(store, late)
    assert report.kept_unsummarized == 1
    assert jobs.keys() == {("daily", late.occurred_at.date().isoformat())}
    # WHEN the day is re-made with it THEN the next run deletes it
    put(store, daily_of(early, late))
    service(store, {"t": "free"}).run()
    assert not alive(store, late)


def test_a_stale_or_forgotten_parent_holds_nothing(store: SqliteMemoryStore) -> None:
    # GIVEN
    from agent_memory.ports import AuditEvent

    record = working("t", NOW - timedelta(days=5), "held by a hidden summary")
    day = daily_of(record)
    put(store, record, day)
    # WHEN / THEN
    assert store.mark_stale("t", "a", day.id, AuditEvent("t", "a", day.id, "stale", "key", NOW))
    service(store, {"t": "free"}).run()
    assert alive(store, record)


def test_every_deletion_is_in_the_audit_trail_with_its_rule(store: SqliteMemoryStore) -> None:
    # GIVEN
    gone = working("t", NOW - timedelta(days=5), "past the plan")
    put(store, gone, daily_of(gone))
    service(store, {"t": "free"}).run()
    # WHEN
    events = store.audit_events(AuditQuery("t", "a", record_id=gone.id)).events
    # THEN
    assert [(e.action, e.detail["rule"]) for e in events] == [(AuditAction.RETENTION, "plan")]


def test_an_unsummarized_daily_summary_is_kept_until_its_week_is_made(store: SqliteMemoryStore) -> None:
    # GIVEN
    day = summary("t", Grain.DAILY, "2026-09-01")
    put(store, day)
    # WHEN
    service(store, {"t": "free"}, max_unsummarized=timedelta(days=1000)).run()
    # THEN
    assert alive(store, day)
    week = key_for_day(Grain.WEEKLY, datetime(2026, 9, 1).date())
    put(store, summary("t", Grain.WEEKLY, week, sources=(day.id,)))
    service(store, {"t": "free"}, max_unsummarized=timedelta(days=1000)).run()
    assert not alive(store, day)


def test_a_second_run_deletes_nothing_more_and_other_tenants_are_untouched(store: SqliteMemoryStore) -> None:
    # GIVEN
    records = [working("t", NOW - timedelta(days=3, minutes=i), f"r{i}") for i in range(30)]
    other = working("u", NOW - timedelta(days=3), "other tenant on pro")
    # WHEN / THEN
    assert len({r.occurred_at.date() for r in records}) == 1
    put(store, *records, daily_of(*records), other)
    first = service(store, {"t": "free", "u": "pro"}, page=7).run()
    second = service(store, {"t": "free", "u": "pro"}, page=7).run()
    assert first.deleted["working"] == 30
    assert second.total_deleted == 0
    assert alive(store, other)


def test_expired_and_long_forgotten_records_are_purged(store: SqliteMemoryStore) -> None:
    from agent_memory.ports import AuditEvent

    expired = working("t", NOW - timedelta(hours=1), "expired", expires_at=NOW - timedelta(minutes=1))
    fresh = working("t", NOW - timedelta(hours=1), "fresh", expires_at=NOW + timedelta(days=1))
    forgotten = working("t", NOW - timedelta(hours=1), "forgotten")
    put(store, expired, fresh, forgotten)
    event = AuditEvent("t", "a", forgotten.id, "forget", "key", NOW - timedelta(days=1))
    assert store.soft_delete("t", "a", forgotten.id, event)
    # WHEN retention runs within the grace period THEN the forgotten record stays (soft-deleted)
    report = service(store, {"t": "pro"}, forget_grace=timedelta(days=7)).run()
    assert report.purged == 1
    assert not alive(store, expired) and alive(store, fresh) and alive(store, forgotten)
    # AND the expired record's deletion names its rule in the audit trail
    events = store.audit_events(AuditQuery("t", "a", record_id=expired.id)).events
    assert [(e.action, e.actor, e.detail) for e in events] == [
        (AuditAction.RETENTION, "retention", {"rule": "expired"})
    ]
    # WHEN the grace period has passed THEN it is purged
    service(store, {"t": "pro"}, forget_grace=timedelta(hours=1)).run()
    assert not alive(store, forgotten)


def test_over_quota_the_least_important_then_oldest_go_first(store: SqliteMemoryStore) -> None:
    # GIVEN
    base = NOW - timedelta(hours=5)
    low_old = working("t", base, "low old", importance=0.2)
    low_new = working("t", base + timedelta(hours=1), "low new", importance=0.2)
    high_old = working("t", base, "high old", importance=0.9)
    mid = working("t", base + timedelta(hours=2), "mid", importance=0.5)
    put(store, low_old, low_new, high_old, mid, daily_of(low_old, low_new, high_old, mid))
    # WHEN
    report = service(store, {"t": "long"}, max_working=2).run()
    # THEN
    assert report.over_quota == 2
    assert [alive(store, r) for r in (low_old, low_new, high_old, mid)] == [False, False, True, True]


def test_quota_keeps_unsummarized_memory(store: SqliteMemoryStore) -> None:
    # GIVEN
    records = [working("t", NOW - timedelta(hours=1, minutes=i), f"q{i}") for i in range(3)]
    put(store, *records)  # no daily summary
    report = service(store, {"t": "long"}, max_working=1).run()
    # WHEN / THEN
    assert all(alive(store, r) for r in records)
    assert report.kept_unsummarized == 2


def test_importance_decays_without_retrieval_and_a_recent_retrieval_saves_it(
    store: SqliteMemoryStore,
) -> None:
    # GIVEN importance 0.5, unretrieved for 40 weeks: 0.5 * 0.95**40 = 0.064 < 0.1
    old = NOW - timedelta(weeks=40)
    faded = working("t", old, "faded", importance=0.5)
    # AND one retrieved last week: 0.5 * 0.95 = 0.475
    retrieved = working("t", old, "retrieved", importance=0.5, last_accessed_at=NOW - timedelta(weeks=1))
    # AND an important one: 1.0 * 0.95**40 = 0.129
    important = working("t", old, "important", importance=1.0)
    put(store, faded, retrieved, important, daily_of(faded, retrieved, important))
    # WHEN retention runs
    report = service(store, {"t": "long"}).run()
    # THEN only the unretrieved, unimportant one decayed below the floor, and is gone
    assert report.decayed == 1
    assert not alive(store, faded) and alive(store, retrieved) and alive(store, important)


def test_plans_come_from_the_newest_live_key_and_settings_override_defaults() -> None:
    # GIVEN
    keys = [
        KeyInfo("k1", "t", "free", "", "", "2026-01-01T00:00:00Z", None),
        KeyInfo("k2", "t", "pro", "", "", "2026-06-01T00:00:00Z", None),
        KeyInfo("k3", "t", "unlimited", "", "", "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z"),
    ]

    # WHEN
    class Keys:
        def list(self) -> list[KeyInfo]:
            return keys

    # THEN
    plans = KeyStorePlans(Keys())
    assert plans.plan_of("t") == "pro"
    assert plans.plan_of("nobody") is None
    merged = load_plans('{"free": {"working": 24}, "team": {"daily": null}}')
    assert merged["free"][Grain.WORKING] == 24
    assert merged["free"][Grain.DAILY] == DEFAULT_PLANS["free"][Grain.DAILY]
    assert merged["team"][Grain.DAILY] is None
