"""Retention over a million records: how long the daily cleanup takes on the local (SQLite) store.

    python benchmarks/retention.py [--records 1000000] [--agents 100] [--data-dir DIR] [--seed N]

**The data.** ``--records`` records of ``--agents`` agents in eight tenants (three on ``free``,
two on ``starter``, two on ``pro``, one on ``unlimited``; plans come from the tenants' API keys in
the local key store, as the authorizer and the retention run read them). Built directly and
stored with `SqliteMemoryStore.put` in transactions of `PUT_BATCH` records, with random unit
vectors of the configured dimension (no HTTP, no queue, no embedding model: retention never
looks at a vector, only the bytes they take matter). The contents are the sentences of `_corpus`.

Each agent has a history of summaries (every closed daily, weekly, monthly, quarterly and yearly
period from one to seven years back, so every grain has summaries past some plan's cutoff) and
working memory over its last 3 to 120 days, at the same instant `NOW` of the run:

* kinds and importances from the corpus, with the default lifetime of each kind (conversation
  7 days, task 30, decision 90, error 14), so many records are **expired**; 4% carry an
  importance of 0.05, below the decay floor (`DECAY_FLOOR`) from the start;
* 1% are **forgotten** (soft-deleted) at a random instant since they occurred, most of them
  longer ago than the grace period;
* 3% of the days of the last 120 have **no daily summary** (a failed run), and for every third
  agent neither has yesterday (the daily run has not reached it): working memory of those days
  past its cutoff is **kept unsummarized** if younger than the hard maximum age, deleted if older;
* three agents (one each on free, starter and pro) hold 1.6 times the **working-memory quota**
  within their plan's cutoff. The quota is the setting's default (10,000), or records/agents when
  that is smaller, so a small run has agents over it too (passed to the run as
  ``AGENT_MEMORY_MAX_WORKING_PER_AGENT``).

**The run.** A fresh process (so its peak RSS is the cleanup's own) invokes the retention
handler the way the daily schedule does (`agent_memory.handlers.retention.handler` with the
settings of the data directory), with the container's clock fixed at `NOW`, and then once more:
the second run must delete nothing. Timed: each run's wall time, and the load.

**The check.** While generating, the script works out what the documented rules (the module
docstring of `agent_memory.governance.retention`) say must happen to each record, and compares the
handler's report with it: deleted per grain, purged, decayed, over quota, kept unsummarized. The
reasons below split the report's counts further (the handler reports per grain, not per reason).

Results go to ``benchmarks/results/retention[-...].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import _corpus
from agent_memory.tenancy.rules.keys import NewKey

#: The instant of the run: 03:17 UTC, after the daily summaries of yesterday would have run.
NOW = datetime(2026, 11, 22, 3, 17, tzinfo=UTC)
DEFAULTS: dict[str, Any] = {"records": 1_000_000, "agents": 100, "seed": _corpus.DEFAULT_SEED}
#: (plan, tenants on it).
TENANT_PLANS = (("free", 3), ("starter", 2), ("pro", 2), ("unlimited", 1))
#: Records stored per transaction while loading.
PUT_BATCH = 10_000
#: Agents over quota hold this many times the quota, within their plan's working cutoff.
OVER_QUOTA = 1.6
QUOTA_WINDOW = {"free": timedelta(hours=40), "starter": timedelta(days=4.5), "pro": timedelta(days=9)}
WORKING_WINDOWS_DAYS = (3, 14, 45, 120)
HISTORY_YEARS = (1, 2, 3, 5, 7)
FORGOTTEN_SHARE = 0.01
LOW_IMPORTANCE_SHARE = 0.04
LOW_IMPORTANCE = 0.05
FAILED_DAY_SHARE = 0.03
FAILED_DAYS_WITHIN = 120
#: Share of an agent's records that may be summaries (small runs shorten the history to fit).
MAX_SUMMARY_SHARE = 0.4
POOL = 4096


# --------------------------------------------------------------------------------------------
# The plan of the data
# --------------------------------------------------------------------------------------------


@dataclass
class AgentSpec:
    index: int
    tenant: str
    plan: str
    agent: str
    window: timedelta
    history_days: int
    over_quota: bool
    working: int = 0
    summaries: list[tuple[Any, str]] = field(default_factory=list)
    daily_missing: set[str] = field(default_factory=set)


def tenants() -> list[tuple[str, str]]:
    return [(f"bench-{plan}-{i}", plan) for plan, n in TENANT_PLANS for i in range(n)]


@cache
def _span(grain: Any, key: str) -> tuple[datetime, datetime]:
    from agent_memory.cascade.rules.periods import covered_span

    return covered_span(grain, key, "UTC")


def closed_periods(first: date, last: date) -> list[tuple[Any, str]]:
    """Every summary period holding a day of ``[first, last]`` whose covered span ended by `NOW`."""
    from agent_memory.cascade.rules.periods import keys_between
    from agent_memory.model.grains import SUMMARY_GRAINS

    return [
        (grain, key)
        for grain in SUMMARY_GRAINS
        for key in keys_between(grain, first, last)
        if _span(grain, key)[1] <= NOW
    ]


def plan_agents(records: int, agents: int, quota: int, rng: random.Random) -> list[AgentSpec]:
    """Who holds what: quota agents first (one per forgetting plan), the rest share the remainder."""
    from agent_memory.model.grains import Grain

    tenant_list = tenants()
    if agents < len(tenant_list) or records < agents * 60:
        raise SystemExit(f"need at least {len(tenant_list)} agents and 60 records per agent")
    specs: list[AgentSpec] = []
    quota_plans = set(QUOTA_WINDOW)
    for index in range(agents):
        tenant, plan = tenant_list[index % len(tenant_list)]
        over = plan in quota_plans
        quota_plans.discard(plan)
        window = QUOTA_WINDOW[plan] if over else timedelta(days=WORKING_WINDOWS_DAYS[index % 4])
        years = 1 if over else HISTORY_YEARS[index % len(HISTORY_YEARS)]
        specs.append(
            AgentSpec(index, tenant, plan, f"agent-{index:03d}", window, years * 365, over_quota=over)
        )

    last_day = NOW.date() - timedelta(days=1)
    recent = [last_day - timedelta(days=i) for i in range(FAILED_DAYS_WITHIN)]

    def fit(spec: AgentSpec, budget: int) -> None:
        """The longest history (up to its years) whose summaries fit the agent's budget."""
        floor_days = spec.window.days + 2
        days = spec.history_days
        while True:
            periods = closed_periods(NOW.date() - timedelta(days=days), last_day)
            if len(periods) <= MAX_SUMMARY_SHARE * budget or days <= floor_days:
                break
            days = max(floor_days, int(days * MAX_SUMMARY_SHARE * budget / len(periods)))
        spec.history_days = days
        failed = {d.isoformat() for d in rng.sample(recent, int(FAILED_DAY_SHARE * len(recent)))}
        if spec.index % 3 == 0:
            failed.add(last_day.isoformat())
        spec.daily_missing = failed
        spec.summaries = [(g, k) for g, k in periods if not (g is Grain.DAILY and k in spec.daily_missing)]

    left = records
    for spec in specs:
        if spec.over_quota:
            spec.working = int(OVER_QUOTA * quota)
            fit(spec, spec.working)
            left -= spec.working + len(spec.summaries)
    others = [s for s in specs if not s.over_quota]
    for i, spec in enumerate(others):
        budget = left // len(others) + (1 if i < left % len(others) else 0)
        fit(spec, budget)
        spec.working = budget - len(spec.summaries)
        if spec.working < 1:
            raise SystemExit(f"{spec.agent}: {budget} records cannot hold its summaries")
    return specs


# --------------------------------------------------------------------------------------------
# What the rules say must happen to each record
# --------------------------------------------------------------------------------------------


class Expected:
    """The documented retention rules applied to each generated record, counted by reason."""

    def __init__(self, quota: int, max_unsummarized: timedelta, grace: timedelta, plans: Any) -> None:
        from agent_memory.governance.rules.plans import retention_of

        self.quota = quota
        self.hard = NOW - max_unsummarized
        self.grace_end = NOW - grace
        self.plans = plans
        self.retention_of = retention_of
        self.reasons: Counter[str] = Counter()
        self.deleted: Counter[str] = Counter()
        self.kept_unsummarized = self.purged = self.decayed = self.over_quota = self.overdue = 0
        #: Over the quota, but every record left to give up waits for its daily summary.
        self.kept_over_quota = 0

    def cutoff(self, plan: str, grain: Any) -> datetime | None:
        kept = self.retention_of(self.plans, plan, grain)
        return None if kept is None else NOW - kept

    def summary(self, spec: AgentSpec, grain: Any, key: str, made: set[tuple[Any, str]]) -> None:
        from agent_memory.cascade.rules.periods import PARENT_GRAIN, parent_key

        cutoff = self.cutoff(spec.plan, grain)
        end = _span(grain, key)[1]
        if cutoff is None:
            self.reasons["kept: the unlimited plan"] += 1
        elif end <= cutoff:  # stored span end (end - 1us) < cutoff
            # every generated summary names all of its children, so "its parent names it" is
            # "its parent was made"
            summarized = grain not in PARENT_GRAIN or (PARENT_GRAIN[grain], parent_key(grain, key)) in made
            if summarized:
                self.deleted[grain.value] += 1
                self.reasons[f"{grain.value}: past its cutoff"] += 1
            else:
                self.kept_unsummarized += 1
                self.overdue += end < self.hard
                self.reasons[f"kept: {grain.value} past its cutoff, parent not made yet"] += 1
        else:
            self.reasons["kept: within its cutoff"] += 1

    def working_agent(self, spec: AgentSpec, rows: Sequence[tuple[datetime, Any, Any, float, bool]]) -> None:
        """``rows``: (occurred, expires_at, deleted_at, importance, parent made) of one agent."""
        from agent_memory.governance.rules.plans import DECAY_FLOOR, decayed_importance
        from agent_memory.model.grains import Grain

        cutoff = self.cutoff(spec.plan, Grain.WORKING)
        live_left = deletable_left = 0
        for occurred, expires, deleted, importance, parent in rows:
            fate = self._fate(cutoff, occurred, expires, deleted, parent)
            if fate is not None:
                self.reasons[fate] += 1
                continue
            # live working memory left for the quota step (created_at = occurred_at)
            deletable = parent
            weeks = (NOW - occurred).total_seconds() / (7 * 86400)
            if decayed_importance(importance, weeks) < DECAY_FLOOR and deletable:
                self.decayed += 1
                self.reasons["quota: importance decayed below the floor"] += 1
                continue
            live_left += 1
            deletable_left += deletable
            if cutoff is not None and occurred >= cutoff:
                self.reasons["kept: within its cutoff"] += 1
            else:
                self.reasons["kept: working past its cutoff, daily summary not made yet"] += 1
        excess = live_left - self.quota
        if excess > 0:
            over = min(excess, deletable_left)
            self.over_quota += over
            self.kept_unsummarized += excess - over
            self.kept_over_quota += excess - over
            self.reasons["quota: over the working-memory quota"] += over
            self.reasons["kept: within its cutoff"] -= over

    def _fate(
        self, cutoff: datetime | None, occurred: datetime, expires: Any, deleted: Any, parent: bool
    ) -> str | None:
        """Why a working record goes (or stays) before the quota step; None: live, left to it."""
        purge_expired = expires is not None and expires <= NOW
        purge_forgotten = deleted is not None and deleted < self.grace_end
        purge = "purge: expired" if purge_expired else "purge: forgotten past grace"
        if cutoff is None:  # unlimited: only the purge, no quota
            self.purged += purge_expired or purge_forgotten
            return purge if purge_expired or purge_forgotten else "kept: the unlimited plan"
        if occurred < cutoff:
            reason = None
            if deleted is not None or purge_expired:
                reason = "working: past its cutoff, expired or forgotten"
            elif parent:
                reason = "working: past its cutoff, summarized"
            if reason is None:
                self.kept_unsummarized += 1
                self.overdue += occurred < self.hard
                return None  # kept, and live: the quota step counts it (it cannot give it up)
            self.deleted["working"] += 1
            return reason
        if purge_expired or purge_forgotten:
            self.purged += 1
            return purge
        if deleted is not None:
            return "kept: forgotten within the grace period"
        return None

    def report(self) -> dict[str, Any]:
        from agent_memory.model.grains import Grain

        return {
            "deleted": {g.value: self.deleted[g.value] for g in Grain},
            "kept_unsummarized": self.kept_unsummarized,
            "unsummarized_overdue": self.overdue,
            "purged": self.purged,
            "over_quota": self.over_quota,
            "decayed": self.decayed,
            "total_deleted": sum(self.deleted.values()) + self.purged + self.over_quota + self.decayed,
        }


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def generate(specs: Sequence[AgentSpec], expected: Expected, seed: int) -> Iterator[Any]:
    """Every record of every agent (summaries, then working memory), counted into ``expected``."""
    from agent_memory.cascade.rules.periods import PARENT_GRAIN, key_for_day, parent_key
    from agent_memory.governance.rules.plans import default_ttl_days
    from agent_memory.model.grains import Grain
    from agent_memory.model.ids import content_hash, memory_id, summary_id
    from agent_memory.model.records import MemoryKind, MemoryRecord, normalise_topic

    rng = random.Random(seed)
    pool = _corpus.generate_memories(POOL, seed=seed)
    hashes = [content_hash(m.content) for m in pool]
    for spec in specs:
        made = set(spec.summaries)
        rows: list[tuple[datetime, Any, Any, float, bool]] = []
        working: list[MemoryRecord] = []
        children: dict[tuple[Any, str], list[str]] = {}
        window_s = spec.window.total_seconds()
        for i in range(spec.working):
            drawn = rng.randrange(POOL)
            m = pool[drawn]
            occurred = NOW - timedelta(seconds=60 + rng.random() * (window_s - 60))
            ttl = default_ttl_days(MemoryKind(m.kind))
            expires = occurred + timedelta(days=ttl) if ttl else None
            deleted = None
            if rng.random() < FORGOTTEN_SHARE:
                deleted = occurred + (NOW - occurred) * rng.random()
            importance = LOW_IMPORTANCE if rng.random() < LOW_IMPORTANCE_SHARE else m.importance
            day = key_for_day(Grain.DAILY, occurred.date())
            rows.append((occurred, expires, deleted, importance, (Grain.DAILY, day) in made))
            record_id = memory_id(spec.tenant, spec.agent, str(i))
            children.setdefault((Grain.DAILY, day), []).append(record_id)
            working.append(
                MemoryRecord(
                    id=record_id,
                    tenant_id=spec.tenant,
                    agent_id=spec.agent,
                    kind=MemoryKind(m.kind),
                    role=m.role,  # type: ignore[arg-type]
                    content=m.content,
                    topic=normalise_topic(m.topic),
                    topic_raw=m.topic,
                    importance=importance,
                    tags=list(m.tags),
                    content_hash=hashes[drawn],
                    created_at=occurred,
                    updated_at=deleted or occurred,
                    occurred_at=occurred,
                    expires_at=expires,
                    deleted_at=deleted,
                )
            )
        # a summary names all of its children (retention deletes only what its parent names)
        for grain, key in spec.summaries:
            if grain in PARENT_GRAIN:
                parent = (PARENT_GRAIN[grain], parent_key(grain, key))
                children.setdefault(parent, []).append(summary_id(spec.tenant, spec.agent, grain.value, key))
        for grain, key in spec.summaries:
            start, end = _span(grain, key)
            text = " ".join(pool[(hash(key) + i) % POOL].content for i in range(5))
            expected.summary(spec, grain, key, made)
            yield MemoryRecord(
                id=summary_id(spec.tenant, spec.agent, grain.value, key),
                tenant_id=spec.tenant,
                agent_id=spec.agent,
                grain=grain,
                time_key=key,
                period_start=start,
                period_end=end,
                kind=MemoryKind.SUMMARY,
                content=text,
                content_hash=content_hash(text),
                importance=0.6,
                source_ids=children.get((grain, key), []),
                created_at=end,
                updated_at=end,
                occurred_at=start,
            )
        yield from working
        expected.working_agent(spec, rows)


def load(store: Any, records: Iterator[Any], total: int, dimension: int, seed: int) -> dict[str, Any]:
    """`put` in batches of `PUT_BATCH`; the time to build records and vectors, and to store them."""
    import numpy as np

    from agent_memory.ports import StoredRecord

    vectors = np.random.default_rng(seed)
    build_s = put_s = 0.0
    done = 0
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        batch = [r for _, r in zip(range(PUT_BATCH), records, strict=False)]
        if not batch:
            break
        matrix = vectors.standard_normal((len(batch), dimension), dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        t1 = time.perf_counter()
        store.put([StoredRecord(r, v) for r, v in zip(batch, matrix, strict=True)])
        build_s += t1 - t0
        put_s += time.perf_counter() - t1
        done += len(batch)
        print(f"\r  loaded {done:,}/{total:,}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seconds = time.perf_counter() - started
    return {
        "records": done,
        "build_s": round(build_s, 2),
        "put_s": round(put_s, 2),
        "total_s": round(seconds, 2),
        "records_per_s": round(done / seconds, 1),
        "batch": PUT_BATCH,
    }


def census(db: Path) -> dict[str, Any]:
    """What the file holds: records per grain, and how many are forgotten or expired at `NOW`."""
    now_us = int(NOW.timestamp() * 1_000_000)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        per_grain = dict(conn.execute("SELECT grain, count(*) FROM records GROUP BY grain").fetchall())
        forgotten, expired = conn.execute(
            "SELECT count(deleted_at), sum(expires_at <= ?) FROM records", (now_us,)
        ).fetchone()
    return {
        "total": sum(per_grain.values()),
        "per_grain": per_grain,
        "forgotten": forgotten,
        "expired": expired or 0,
        "file_mb": round(db.stat().st_size / 1e6, 1),
    }


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


# --------------------------------------------------------------------------------------------
# The cleanup (in its own process)
# --------------------------------------------------------------------------------------------


class FixedClock:
    def now(self) -> datetime:
        return NOW


def cleanup(out: Path) -> None:
    """Run the retention handler twice at `NOW`, as the daily schedule would; write what it did."""
    from agent_memory import container
    from agent_memory.handlers import retention
    from agent_memory.local.lambda_context import LocalContext
    from agent_memory.observability import discard_unpublished_metrics
    from agent_memory.settings import get_settings

    container.clock = FixedClock  # type: ignore[assignment]  # the run's instant, not the wall clock
    runs = []
    for n in (1, 2):
        print(f"retention run {n}", file=sys.stderr)
        started = time.perf_counter()
        report = retention.handler({}, LocalContext(function_name="retention", timeout_s=900))
        seconds = time.perf_counter() - started
        discard_unpublished_metrics()
        runs.append({"seconds": round(seconds, 2), "report": report, "peak_rss_mb": peak_rss_mb()})
        print(f"  {seconds:.1f} s: {report}", file=sys.stderr)
    container.store().close()  # type: ignore[attr-defined]
    out.write_text(json.dumps({"runs": runs, "max_working": get_settings().max_working_per_agent}))


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=DEFAULTS["records"])
    parser.add_argument("--agents", type=int, default=DEFAULTS["agents"])
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="an empty directory, kept afterwards (default: a temp one)",
    )
    parser.add_argument("--cleanup", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cleanup is not None:
        cleanup(args.cleanup)
        return

    load_at_start = _corpus.at_start()
    keep = args.data_dir is not None
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="agent-memory-retention-"))
    if keep and data_dir.exists() and any(data_dir.iterdir()):
        raise SystemExit(f"{data_dir} is not empty: give an empty or new directory")
    data_dir.mkdir(parents=True, exist_ok=True)
    quota = min(10_000, args.records // args.agents)
    _corpus.configure_environment(data_dir, "hashing")
    os.environ["AGENT_MEMORY_MAX_WORKING_PER_AGENT"] = str(quota)
    os.environ["AGENT_MEMORY_SCHEDULER_ENABLED"] = "false"
    try:
        result = measure(args, data_dir, quota)
    finally:
        if not keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    result["machine"] = _corpus.machine(load_at_start)
    result["code"] = _corpus.code_version()
    name = _corpus.result_name("retention", vars(args), DEFAULTS)
    print(f"wrote {_corpus.write_result(name, result)}", file=sys.stderr)


def measure(args: argparse.Namespace, data_dir: Path, quota: int) -> dict[str, Any]:
    from agent_memory.adapters.embedders import build_embedder
    from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
    from agent_memory.governance.rules.plans import load_plans
    from agent_memory.settings import get_settings

    settings = get_settings()
    assert settings.max_working_per_agent == quota
    embedder = build_embedder(settings)  # the store records its model: the run opens it with the same
    keys = LocalKeyStore(settings.auth_path)
    for tenant, plan in tenants():
        keys.create(NewKey(tenant, plan))
    rng = random.Random(args.seed)
    specs = plan_agents(args.records, args.agents, quota, rng)
    expected = Expected(
        quota,
        timedelta(days=settings.retention_max_unsummarized_days),
        timedelta(days=settings.forget_grace_days),
        load_plans(settings.plans),
    )

    store = SqliteMemoryStore(settings.sqlite_path, dimension=embedder.dimension, model_id=embedder.model_id)
    print(f"loading {args.records:,} records of {args.agents} agents", file=sys.stderr)
    loaded = load(store, generate(specs, expected, args.seed), args.records, embedder.dimension, args.seed)
    store.close()
    loaded["peak_rss_mb"] = peak_rss_mb()
    before = census(settings.sqlite_path)
    assert before["total"] == args.records == sum(expected.reasons.values()), before

    out = data_dir / "cleanup.json"
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--cleanup", str(out)],
        check=True,
        env=os.environ.copy(),
    )
    cleanup_result = json.loads(out.read_text())
    after = census(settings.sqlite_path)
    first, second = cleanup_result["runs"]
    want = expected.report()
    got = {k: first["report"][k] for k in want}
    matches = got == want
    result = {
        "parameters": {
            "records": args.records,
            "agents": args.agents,
            "seed": args.seed,
            "now": NOW.isoformat(),
            "tenants": dict(tenants()),
            "max_working_per_agent": cleanup_result["max_working"],
            "retention_max_unsummarized_days": settings.retention_max_unsummarized_days,
            "forget_grace_days": settings.forget_grace_days,
            "dimension": embedder.dimension,
            "agents_over_quota": [s.agent for s in specs if s.over_quota],
        },
        "load": loaded,
        "before": before,
        "after": after,
        "run1": {
            **first,
            "records_per_s": round(first["report"]["total_deleted"] / first["seconds"], 1),
        },
        "run2": second,
        "reasons": dict(sorted(expected.reasons.items())),
        "expected_report": want,
        "kept_over_quota_unsummarized": expected.kept_over_quota,
        "matches_expected": matches,
        "idempotent": second["report"]["total_deleted"] == 0,
    }
    print_summary(result)
    if not matches:
        print(f"MISMATCH: the handler reported {got}, the rules say {want}", file=sys.stderr)
    return result


def print_summary(result: dict[str, Any]) -> None:
    load_, before, after = result["load"], result["before"], result["after"]
    run1, run2 = result["run1"], result["run2"]
    report = run1["report"]
    lines = [
        f"load: {load_['records']:,} records in {load_['total_s']} s "
        f"({load_['records_per_s']:,.0f}/s; build {load_['build_s']} s, put {load_['put_s']} s), "
        f"peak RSS {load_['peak_rss_mb']} MB",
        f"records before: {before['total']:,} {before['per_grain']} "
        f"(forgotten {before['forgotten']:,}, expired {before['expired']:,}), {before['file_mb']} MB",
        f"records after:  {after['total']:,} {after['per_grain']}",
        f"run 1: {run1['seconds']} s, {report['total_deleted']:,} deleted ({run1['records_per_s']:,.0f}/s), "
        f"peak RSS {run1['peak_rss_mb']} MB",
        f"  deleted per grain: {report['deleted']}",
        f"  purged {report['purged']:,}, decayed {report['decayed']:,}, over quota {report['over_quota']:,}, "
        f"kept unsummarized {report['kept_unsummarized']:,}",
        f"run 2: {run2['seconds']} s, {run2['report']['total_deleted']:,} deleted, "
        f"kept unsummarized {run2['report']['kept_unsummarized']:,} (idempotent: {result['idempotent']})",
        f"matches the rules: {result['matches_expected']}",
        "by reason:",
        *(f"  {reason:68} {count:>9,}" for reason, count in result["reasons"].items()),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
