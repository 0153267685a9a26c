"""An export of one end user's 100,000 memories on the local store: its time, and how much memory
it takes (bounded: a page of records and the writer's buffer, whatever the export's size).

    python benchmarks/export_memory.py [--records 100000] [--others 20000] [--data-dir DIR]

**The data.** ``--records`` working memories of end user ``u1`` over four agents of one tenant, one
every few minutes over the last year, with ``--others`` memories of other end users interleaved
in the same agents (the export must walk past them), an audit event (feedback) on one memory in
ten, and a daily summary per agent and day: most only ``u1``'s words, one in five folding another
end user's too (named, not shown). Stored with `SqliteMemoryStore.put` in batches (vectors of
dimension 8: an export never reads one).

**The run.** The export service as the job worker runs it (`ExportService.run`, the local
archive, the JSON Lines format, runs of `RUN_S` seconds chained through checkpoints, each
queuing the next), twice: once timed, once under ``tracemalloc`` for the peak of the memory
Python allocated while exporting (the store's data is on disk; the export never holds more than
a page). The resident set size of the process is printed too (it includes the page cache of the
SQLite file). The file is read back and checked: every memory of ``u1`` once, nothing of anyone
else.

Results go to ``benchmarks/results/export_memory[-...].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "functions"))

from _corpus import at_start, code_version, machine  # noqa: E402
from agent_memory.adapters.local_exports import LocalExportArchive  # noqa: E402
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore  # noqa: E402
from agent_memory.contract.v1_exports import JsonLinesExport  # noqa: E402
from agent_memory.governance.export import RUN_S, ExportService  # noqa: E402
from agent_memory.governance.rules.export_jobs import ExportJob, ExportScope  # noqa: E402
from agent_memory.model.caller import Caller  # noqa: E402
from agent_memory.model.grains import Grain  # noqa: E402
from agent_memory.model.ids import content_hash  # noqa: E402
from agent_memory.model.records import MemoryKind, MemoryRecord  # noqa: E402
from agent_memory.ports import AuditEvent, Job, StoredRecord  # noqa: E402

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TENANT, AGENTS, DIM = "bench", ("support", "sales", "billing", "onboarding"), 8
ADMIN = Caller(TENANT, key_id="bench", scopes=frozenset({"admin"}))
PUT_BATCH = 2_000
SENTENCES = (
    "asked to move the delivery of order {n} to the Lisbon office on Friday",
    "prefers the window seat and a vegetarian meal on every flight ({n})",
    "reported that invoice {n} was charged twice and wants a refund",
    "confirmed the renewal of the annual plan for {n} seats",
    "said the onboarding call should wait until the security review of ticket {n}",
)


class Clock:
    def now(self) -> datetime:
        return NOW


class Jobs:
    def __init__(self) -> None:
        self.sent: list[Job] = []

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        self.sent += jobs


def record(n: int, user: str, agent: str, at: datetime) -> MemoryRecord:
    content = f"{user} " + SENTENCES[n % len(SENTENCES)].format(n=n)
    return MemoryRecord(
        id=f"mem_{n:026d}",
        tenant_id=TENANT,
        agent_id=agent,
        user_id=user,
        kind=MemoryKind.CONVERSATION,
        role="user",
        content=content,
        content_hash=content_hash(content),
        tags=["bench"],
        metadata={"channel": "chat", "n": n},
        created_at=at,
        updated_at=at,
        occurred_at=at,
    )


def daily(agent: str, day: datetime, users: list[str], n: int) -> MemoryRecord:
    start = day.replace(hour=0, minute=0, second=0, microsecond=0)
    content = f"[{start.date()}] {n} things were said about orders, invoices and seats."
    return MemoryRecord(
        id=f"sum_{agent}_{start.date()}".replace("-", "")[:40],
        tenant_id=TENANT,
        agent_id=agent,
        grain=Grain.DAILY,
        time_key=start.date().isoformat(),
        period_start=start,
        period_end=start + timedelta(days=1),
        kind=MemoryKind.SUMMARY,
        content=content,
        content_hash=content_hash(content),
        user_ids=users,
        created_at=start + timedelta(days=1),
        updated_at=start + timedelta(days=1),
        occurred_at=start,
    )


def populate(store: SqliteMemoryStore, records: int, others: int) -> int:
    """``records`` memories of u1 and ``others`` of other users, summaries, audit events; the
    number of summaries that are u1's alone."""
    total = records + others
    step = timedelta(days=365) / total
    vector = np.ones(DIM, dtype=np.float32)
    batch: list[StoredRecord] = []
    events: list[AuditEvent] = []
    other_every = max(1, total // others) if others else total + 1
    for n in range(total):
        at = NOW - timedelta(days=365) + n * step
        agent = AGENTS[n % len(AGENTS)]
        user = f"u{2 + n % 50}" if n % other_every == 0 and others else "u1"
        batch.append(StoredRecord(record(n, user, agent, at), vector))
        if user == "u1" and n % 10 == 0:
            events.append(AuditEvent(TENANT, agent, f"mem_{n:026d}", "feedback", "bench", at, {"n": n}))
        if len(batch) >= PUT_BATCH:
            store.put(batch)
            store.append_audit(events)
            batch, events = [], []
    if batch:
        store.put(batch)
        store.append_audit(events)
    summaries, alone = [], 0
    for d in range(365):
        day = NOW - timedelta(days=365 - d)
        for i, agent in enumerate(AGENTS):
            mixed = (d + i) % 5 == 0
            alone += not mixed
            users = ["u1", "u7"] if mixed else ["u1"]
            summaries.append(StoredRecord(daily(agent, day, users, d), vector))
    store.put(summaries)
    return alone


def export(store: SqliteMemoryStore, root: Path) -> tuple[Any, int, float]:
    """One export of u1, run to the end as the job worker would: (its state, runs, seconds)."""
    jobs = Jobs()
    service = ExportService(store, LocalExportArchive(root), JsonLinesExport(), jobs, Clock())
    started = time.perf_counter()
    state = service.start(ADMIN, ExportScope(user_id="u1"))
    runs = 0
    while jobs.sent:
        job = ExportJob.model_validate_json(jobs.sent.pop(0).body)
        service.run(job)
        runs += 1
    return service.get(ADMIN, state.id), runs, time.perf_counter() - started


def check(root: Path, state: Any, records: int) -> dict[str, int]:
    """Read the file back: every memory of u1 once, nothing of another user's."""
    seen: set[str] = set()
    lines = 0
    with (root / TENANT / f"{state.id}.jsonl").open("rb") as file:
        for raw in file:
            lines += 1
            line = json.loads(raw)
            if line["type"] == "memory":
                assert line["memory"]["user_id"] == "u1", line
                assert line["memory"]["id"] not in seen
                seen.add(line["memory"]["id"])
    assert len(seen) == records, (len(seen), records)
    return {"lines": lines, "memories": len(seen)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=20_000)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    load_at_start = at_start()
    base = args.data_dir or Path(tempfile.mkdtemp(prefix="export-bench-"))
    store = SqliteMemoryStore(base / "memory.db", DIM, "bench")

    started = time.perf_counter()
    alone = populate(store, args.records, args.others)
    print(f"stored {args.records:,} + {args.others:,} memories in {time.perf_counter() - started:.1f} s")

    state, runs, seconds = export(store, base / "exports")
    checked = check(base / "exports", state, args.records)
    assert state.progress.summaries == alone, (state.progress.summaries, alone)
    print(
        f"export: {seconds:.1f} s in {runs} runs of at most {RUN_S:.0f} s, "
        f"{state.progress.bytes / 1e6:.1f} MB, {checked['lines']:,} lines "
        f"({state.progress.memories:,} memories, {state.progress.summaries:,} summaries, "
        f"{state.progress.withheld_summaries:,} withheld, {state.progress.audit_events:,} audit events)"
    )

    tracemalloc.start()
    _, _, traced_s = export(store, base / "exports-traced")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"traced export: {traced_s:.1f} s, Python allocations peak {peak / 1e6:.1f} MB")
    print(f"process max RSS {rss_mb:.0f} MB (the SQLite file's pages included)")
    store.close()

    result = {
        "records": args.records,
        "others": args.others,
        "seconds": round(seconds, 2),
        "runs": runs,
        "run_s": RUN_S,
        "bytes": state.progress.bytes,
        "lines": checked["lines"],
        "summaries": state.progress.summaries,
        "withheld_summaries": state.progress.withheld_summaries,
        "audit_events": state.progress.audit_events,
        "records_per_s": round(args.records / seconds),
        "tracemalloc_peak_mb": round(peak / 1e6, 1),
        "traced_seconds": round(traced_s, 2),
        "max_rss_mb": round(rss_mb),
        "machine": machine(load_at_start),
        "code": code_version(),
    }
    suffix = "" if (args.records, args.others) == (100_000, 20_000) else f"-records{args.records}"
    out = ROOT / "benchmarks" / "results" / f"export_memory{suffix}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
