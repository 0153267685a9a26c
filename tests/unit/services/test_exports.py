"""The export service on the embedded store and the local archive: what an export holds, and how
its runs share the work (short runs chained through checkpoints write the file one long run
writes; a second delivery never writes beside the first; a run that keeps failing gives up)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.fakes import FixedClock
from tests.payloads import memory_record

from agent_memory.adapters.local_exports import LocalExportArchive
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.contract.v1_exports import JsonLinesExport
from agent_memory.errors import DependencyError, ForbiddenError, NotFoundError
from agent_memory.governance.export import ExportService
from agent_memory.governance.rules.export_jobs import ExportJob, ExportScope, ExportState
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.ports import AuditEvent, Job, Page, StoredRecord
from agent_memory.ports.export_store import ExportQuery

DIM = 8
ADMIN = Caller("t1", key_id="k1", scopes=frozenset({"admin"}))


class Jobs:
    """A job queue that keeps what is sent, for the test to run."""

    def __init__(self) -> None:
        self.sent: list[Job] = []

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        self.sent += jobs

    def take(self) -> ExportJob | None:
        return ExportJob.model_validate_json(self.sent.pop(0).body) if self.sent else None


class Ticks:
    """A monotonic timer moving one second at every reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class Flaky(SqliteMemoryStore):
    """The store, failing its first ``failures`` export pages after the first ``ok`` ones."""

    failures = 0
    ok = 0

    def export_records(self, query: ExportQuery) -> Page:
        if self.ok > 0:
            self.ok -= 1
        elif self.failures > 0:
            self.failures -= 1
            raise DependencyError("the store is unavailable")
        return super().export_records(query)


@pytest.fixture
def store(tmp_path: Path) -> Flaky:
    return Flaky(tmp_path / "memory.db", DIM, "m")


def put(store: SqliteMemoryStore, clock: FixedClock, n: int, agent: str = "a1", **fields: Any) -> list[str]:
    base = clock.now() - timedelta(days=3)
    records = [
        memory_record(
            f"mem_{agent}{fields.get('user_id', 'x')}{i:04d}",
            f"{agent} memory {i} of {fields.get('user_id')}",
            agent=agent,
            at=base + timedelta(minutes=i),
            **fields,
        )
        for i in range(n)
    ]
    store.put([StoredRecord(r, np.ones(DIM, dtype=np.float32)) for r in records])
    return [r.id for r in records]


def service(
    store: SqliteMemoryStore, tmp_path: Path, clock: FixedClock, jobs: Jobs, **kw: Any
) -> ExportService:
    archive = LocalExportArchive(tmp_path / "exports")
    return ExportService(store, archive, JsonLinesExport(), jobs, clock, timer=Ticks(), **kw)


def run_all(exports: ExportService, jobs: Jobs) -> int:
    """Run every queued job (and those the runs queue) to the end; how many runs there were."""
    runs = 0
    while (job := jobs.take()) is not None:
        runs += 1
        exports.run(job)
    return runs


def lines(tmp_path: Path, state: ExportState) -> list[dict[str, Any]]:
    path = tmp_path / "exports" / state.tenant_id / f"{state.id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_short_runs_chained_through_checkpoints_write_what_one_long_run_writes(
    store: Flaky, tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN 23 memories of u1 in two agents, with an audit event on one, and u2's beside them
    ids = put(store, clock, 15, user_id="u1") + put(store, clock, 8, agent="a2", user_id="u1")
    put(store, clock, 5, user_id="u2")
    store.append_audit(
        [AuditEvent("t1", "a1", ids[3], "feedback", "k1", clock.now(), {"outcome": "applied"})]
    )
    jobs = Jobs()
    long = service(store, tmp_path, clock, jobs, page_size=4, run_s=10_000)
    short = service(store, tmp_path, clock, jobs, page_size=4, run_s=2, save_every_s=1)

    # WHEN the same export runs once in one go, and once in two-second runs
    first = long.start(ADMIN, ExportScope(user_id="u1"))
    assert run_all(long, jobs) == 1
    second = short.start(ADMIN, ExportScope(user_id="u1"))
    runs = run_all(short, jobs)

    # THEN the second took many runs and wrote the same lines, each memory once
    assert runs > 3
    one, many = lines(tmp_path, long.get(ADMIN, first.id)), lines(tmp_path, short.get(ADMIN, second.id))
    assert one[1:] == many[1:]
    assert [m["memory"]["id"] for m in many if m["type"] == "memory"] == ids
    audited = next(m for m in many if m["type"] == "memory" and m["memory"]["id"] == ids[3])
    assert [a["action"] for a in audited["audit"]] == ["feedback"]
    assert [v["change"] for v in audited["versions"]] == ["written", "feedback"]
    done = short.get(ADMIN, second.id)
    assert done.status == "done" and done.progress.memories == 23 and done.progress.estimated_total == 23
    assert done.progress.bytes == (tmp_path / "exports" / "t1" / f"{second.id}.jsonl").stat().st_size


def test_summaries_holding_only_the_users_words_are_shown_the_others_named(
    store: Flaky, tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN daily summaries folding u1 alone, u1 and u2, and u2 alone
    day = clock.now() - timedelta(days=3)

    def daily(summary_id: str, users: list[str], agent: str = "a1") -> StoredRecord:
        start = day.replace(hour=0, minute=0)
        record = memory_record(
            summary_id,
            f"summary of {users}",
            agent=agent,
            at=start,
            grain=Grain.DAILY,
            kind=MemoryKind.SUMMARY,
            time_key=start.date().isoformat(),
            period_start=start,
            period_end=start + timedelta(days=1),
            user_ids=users,
        )
        return StoredRecord(record, np.ones(DIM, dtype=np.float32))

    store.put(
        [daily("sum_a", ["u1"]), daily("sum_b", ["u1", "u2"], agent="a2"), daily("sum_c", ["u2"], "a3")]
    )
    jobs = Jobs()
    exports = service(store, tmp_path, clock, jobs)

    # WHEN u1 is exported
    state = exports.start(ADMIN, ExportScope(user_id="u1"))
    run_all(exports, jobs)

    # THEN
    found = lines(tmp_path, exports.get(ADMIN, state.id))
    summaries = [line for line in found if line["type"] == "summary"]
    assert [(s.get("withheld", False), (s.get("memory") or s.get("summary"))["id"]) for s in summaries] == [
        (False, "sum_a"),
        (True, "sum_b"),
    ]
    assert "summary of ['u1', 'u2']" not in json.dumps(found)
    assert found[-1]["withheld_summaries"] == 1


def test_a_second_delivery_while_a_run_holds_the_export_does_nothing(
    store: Flaky, tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN an export claimed by a run that died holding it
    put(store, clock, 3, user_id="u1")
    jobs = Jobs()
    exports = service(store, tmp_path, clock, jobs)
    state = exports.start(ADMIN, ExportScope(user_id="u1"))
    archive = LocalExportArchive(tmp_path / "exports")
    read, tag = archive.read("t1", state.id) or (None, "")
    assert read is not None
    archive.replace(read.claimed(clock.now(), timedelta(minutes=5)), tag)
    job = jobs.take()
    assert job is not None

    # WHEN the job is delivered again at once, then once the lease ran out
    again = exports.run(job)
    clock.advance(minutes=6)
    after = exports.run(job)

    # THEN the first finds it held and writes nothing; the second does the export
    assert again is None
    assert after is not None and after.status == "done" and after.progress.memories == 3


def test_a_run_that_fails_is_retried_from_its_checkpoint_and_one_that_keeps_failing_gives_up(
    store: Flaky, tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a store that fails two pages after the first three, and one that then always fails
    ids = put(store, clock, 20, user_id="u1")
    jobs = Jobs()
    exports = service(store, tmp_path, clock, jobs, page_size=2, run_s=10_000, save_every_s=1)
    store.ok, store.failures = 3, 2
    state = exports.start(ADMIN, ExportScope(user_id="u1"))

    # WHEN the job is run, and run again as the queue redelivers it
    job = jobs.take()
    assert job is not None
    for _ in range(2):
        with pytest.raises(DependencyError):
            exports.run(job)
    done = exports.run(job)

    # THEN the export is whole, every memory once
    assert done is not None and done.status == "done" and done.failures == 2
    assert [m["memory"]["id"] for m in lines(tmp_path, done) if m["type"] == "memory"] == ids

    # AND an export whose runs fail three times is given up, its file with it
    store.failures = 3
    failing = exports.start(ADMIN, ExportScope(user_id="u1"))
    job = jobs.take()
    assert job is not None
    for attempt in range(3):
        if attempt < 2:
            with pytest.raises(DependencyError):
                exports.run(job)
        else:
            assert exports.run(job) is None
    gone = exports.get(ADMIN, failing.id)
    assert gone.status == "failed" and gone.error
    assert not list((tmp_path / "exports" / "t1").glob(f"{failing.id}.jsonl*"))
    assert state.id != failing.id


def test_an_export_is_its_tenants_alone(store: Flaky, tmp_path: Path, clock: FixedClock) -> None:
    # GIVEN an export of tenant t1
    jobs = Jobs()
    exports = service(store, tmp_path, clock, jobs)
    state = exports.start(ADMIN, ExportScope(agent_id="a1"))
    other = Caller("t2", key_id="k2", scopes=frozenset({"admin"}))

    # WHEN / THEN another tenant's admin does not find it, nor list it
    with pytest.raises(NotFoundError):
        exports.get(other, state.id)
    with pytest.raises(NotFoundError):
        exports.location(other, state.id)
    assert exports.recent(other, 10) == []
    assert [s.id for s in exports.recent(ADMIN, 10)] == [state.id]


def test_a_key_bound_to_agents_exports_and_sees_only_its_agents(
    store: Flaky, tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN exports of a1 and a2 of the tenant, and an admin key bound to a1
    jobs = Jobs()
    exports = service(store, tmp_path, clock, jobs)
    bound = Caller("t1", key_id="k3", scopes=frozenset({"admin"}), agents=frozenset({"a1"}))
    mine = exports.start(bound, ExportScope(agent_id="a1"))
    theirs = exports.start(ADMIN, ExportScope(agent_id="a2"))

    # WHEN / THEN it may not export an end user (every agent) or another agent, nor see a2's
    with pytest.raises(ForbiddenError):
        exports.start(bound, ExportScope(user_id="u1"))
    with pytest.raises(ForbiddenError):
        exports.start(bound, ExportScope(agent_id="a2"))
    with pytest.raises(NotFoundError):
        exports.get(bound, theirs.id)
    assert [s.id for s in exports.recent(bound, 10)] == [mine.id]
