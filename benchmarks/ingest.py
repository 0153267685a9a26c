"""Bulk ingest through the HTTP API against the raw embedder, and search while it runs.

    python benchmarks/ingest.py [--data /work/shared/data/locomo10.json] [--turns 0]
                                [--background 10000] [--searches 300] [--workers 0]
                                [--search-rate 0] [--raw-repeats 2] [--writer-only]

What a team does first with a memory service is load its history; what it then notices is how
long the last turn takes to be stored, and whether searches slow down meanwhile. So, on a fresh
data directory:

1. the raw rate: the conversation turns (LoCoMo's 5,882, or the first ``--turns``) embedded by the
   project's `MiniLmEmbedder` in this process, in batches of 64: turns a second. It runs in two
   configurations (`RAW_CONFIGS`: one session of every core's threads, and the writer's bulk
   shape, a one-thread session per core side by side), each warmed first (loaded, a bulk-sized
   call run once), and the turns are timed ``--raw-repeats`` times in each here and as many again
   after the server stopped (`RawEmbedder`): on a shared machine one timing of the same turns
   ranged from 8 to 16 s, so every repeat is printed and kept, and the ratio is taken against the
   FASTEST of them all (the claim errs low);
2. ``--background`` memories of one other agent loaded straight into the store (no HTTP), and
   ``agent-memory serve`` started as a user starts it (``--workers``, 0: its default of one API
   process per core);
3. idle search: ``--searches`` questions to the background agent, one at a time (p50/p95);
4. the bulk load: `agent-memory import` of the turns (the `Importer`, 100 turns a request, ten
   agents, speakers and one conversation per session), while the same searches run again (back
   to back, or ``--search-rate`` a second); the clock stops when every agent reports no pending
   write. Turns a second = turns / that time. The server's CPU seconds meanwhile are counted by
   thread (`server_cpu`): the writer's, its embedding's, and the API's with the searches; on a
   shared machine they say where the work goes when the wall clock is stretched by others.
   The local writer takes `local.worker.WRITE_BATCH` messages at once and embeds every text of
   them once (`writing.memo_embedder`: a turn's words and its speaker's day,
   `writing.rules.contextual.vector_texts`) on a thread of its own while it stores the writes
   already embedded (`writing.write_vectors`): the next receive's texts while it stores this one
   (the local queue's `peek`), or, with nothing embedded ahead, this one's in two parts
   (`writing.write_vectors.PIPELINE_TEXTS` texts each); on every core at a lower thread priority
   than the searches (`MiniLmEmbedder`'s bulk session), and with several API processes in a
   process of its own at a lower priority still (`local.worker.WriterProcess`); before the
   idle searches one write is stored (`warm_up`), so that process has started.

``--writer-only`` measures the writer alone in this process instead (`writer_alone`).
Figures go to ``benchmarks/results/ingest[-...].json``; the table goes to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _corpus

DEFAULT_DATA = Path("/work/shared/data/locomo10.json")
TENANT = "bench"
SEARCH_AGENT = "bench-search"
EMBED_BATCH = 64
DEFAULTS: dict[str, Any] = {
    "turns": 0,
    "background": 10_000,
    "searches": 300,
    "workers": 0,
    "search_rate": 0.0,
    "raw_repeats": 2,
}


#: The ways the raw embedder runs the turns (`RawEmbedder`): `MiniLmEmbedder` as a process
#: with the model to itself makes it (one session of every core's threads), and as the writer
#: runs a bulk call (a one-thread session per core, batches side by side).
RAW_CONFIGS = {"one session of every core": {}, "one-thread sessions side by side": {"threads": 1}}


class RawEmbedder:
    """The embedder alone, in this process: what the write path is measured against (its CPU
    seconds too, every thread of the model's counted, for `server_cpu`'s figures).

    The model in each of its configurations (`RAW_CONFIGS`), kept for the whole run and warmed
    before anything is timed (loaded, and a bulk-sized call run), then timed ``repeats`` times
    over the turns before the server starts and again after it stopped (`measure`): one timing on
    a shared machine swings by half (8 to 16 s for the same 1,000 turns), so every repeat is kept
    and the fastest of them all is the rate the write path is held against (`fastest`)."""

    def __init__(self, texts: list[str]) -> None:
        from agent_memory.adapters.embedders.minilm import MiniLmEmbedder

        self._texts = texts
        self._models = {name: MiniLmEmbedder(**kwargs) for name, kwargs in RAW_CONFIGS.items()}
        for model in self._models.values():
            model.embed(["load the model"])
            model.embed(texts[:EMBED_BATCH])  # a bulk-sized call: every session built and run
        self.runs: dict[str, list[dict[str, Any]]] = {}

    def measure(self, when: str, repeats: int) -> None:
        """Embed the turns ``repeats`` times in each configuration, in batches of `EMBED_BATCH`,
        noted under ``when``."""
        for _ in range(repeats):
            for name, model in self._models.items():
                started, cpu = time.perf_counter(), time.process_time()
                for start in range(0, len(self._texts), EMBED_BATCH):
                    model.embed(self._texts[start : start + EMBED_BATCH])
                seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
                self.runs.setdefault(when, []).append(
                    {
                        "config": name,
                        "seconds": round(seconds, 2),
                        "cpu_s": round(cpu, 2),
                        "turns_per_s": round(len(self._texts) / seconds, 1),
                    }
                )

    def fastest(self) -> dict[str, Any]:
        """The fastest repeat (the figure the ratio uses), with every repeat by when it ran."""
        best = max((r for runs in self.runs.values() for r in runs), key=lambda r: r["turns_per_s"])
        return {**best, "repeats": self.runs}


#: The server's threads by what they do, by the start of their names (Linux ``comm``): the
#: writer's own thread, and the model's bulk session that it embeds on (`MiniLmEmbedder`).
THREAD_ROLES = {"writer-worker": "writer", "minilm-bulk": "embedding"}


def server_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of the server process ``pid`` and its child processes (the API workers,
    the writer's own process), by role (`THREAD_ROLES`, in any of them; the rest of a child
    process with the writer's thread is ``writer`` too, the rest of the others ``api``: the
    requests, searches among them).
    A loaded machine stretches the wall clock; it moves CPU seconds much less, so these say where
    the work goes. Linux only (``/proc``); empty elsewhere."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out = {"writer": 0.0, "embedding": 0.0, "api": 0.0, "total": 0.0}

    def seconds(stat_path: Path) -> float:
        fields = stat_path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    def by_role(process: int) -> tuple[dict[str, float], set[int]]:
        """A process's named threads' CPU by role, ``total`` (the process's), and its children."""
        used: dict[str, float] = {}
        children: set[int] = set()
        for task in Path(f"/proc/{process}/task").iterdir():
            try:  # a request's thread may end while it is read: its CPU stays in the process's total
                name = (task / "comm").read_text().strip()
                role = next((r for prefix, r in THREAD_ROLES.items() if name.startswith(prefix)), None)
                if role is not None:
                    used[role] = used.get(role, 0.0) + seconds(task / "stat")
                children.update(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
        # The process's total is read after its threads: a thread still running keeps adding CPU,
        # and a total read first fell a tick short of its threads' sum (the rest below zero).
        used["total"] = seconds(Path(f"/proc/{process}/stat"))
        return used, children

    try:
        first, children = by_role(pid)
    except OSError:  # no /proc, or the server is gone
        return {}
    readings = [first]
    for child in children:
        with contextlib.suppress(OSError):  # a child that ended meanwhile
            readings.append(by_role(child)[0])
    for n, used in enumerate(readings):
        rest = used["total"] - used.get("writer", 0.0) - used.get("embedding", 0.0)
        for role in ("writer", "embedding", "total"):
            out[role] += used.get(role, 0.0)
        out["writer" if n > 0 and "writer" in used else "api"] += rest
    return {k: round(v, 2) for k, v in out.items()}


def used_between(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before.get(k, 0.0), 2) for k in after}


def writer_alone(texts_of: list[Any], data_dir: Path) -> dict[str, Any]:
    """The writer in this process on the same turns (`--writer-only`): one `WriteService` accept
    per turn, then the `WriterService` fed `WRITE_BATCH` messages at a time (and told the next
    ones, as the local worker tells it), with MiniLM behind a
    counter. Model calls, texts and characters, and CPU seconds against the raw embedder's CPU
    seconds on the turns alone: figures that a loaded machine does not move much."""
    from datetime import UTC, datetime

    from agent_memory.adapters.embedders.minilm import MiniLmEmbedder
    from agent_memory.adapters.local_pending import LocalPendingWrites
    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
    from agent_memory.contract.v1 import WriteItem, WriteRequest
    from agent_memory.local.worker import WRITE_BATCH
    from agent_memory.model.caller import Caller
    from agent_memory.observability import discard_unpublished_metrics
    from agent_memory.writing.write import WriteService
    from agent_memory.writing.writer import WriterService

    class Counted(MiniLmEmbedder):
        calls = texts = chars = 0

        def embed(self, texts: Any) -> Any:
            Counted.calls, Counted.texts = Counted.calls + 1, Counted.texts + len(texts)
            Counted.chars += sum(len(t) for t in texts)
            return super().embed(texts)

    class Now:
        def now(self) -> datetime:
            return datetime.now(UTC)

    model = Counted(threads=1)  # as in the server's writer process: bulk calls side by side
    turns = [str(i.item["content"]) for i in texts_of]
    model.embed(["load the model"])
    raw_cpu = time.process_time()
    for start in range(0, len(turns), EMBED_BATCH):
        MiniLmEmbedder.embed(model, turns[start : start + EMBED_BATCH])
    raw_cpu = time.process_time() - raw_cpu
    Counted.calls = Counted.texts = Counted.chars = 0
    store = SqliteMemoryStore(data_dir / "alone.db", dimension=384, model_id=model.model_id)
    queue, pending = (
        LocalFifoQueue(data_dir / "alone-queue.db"),
        LocalPendingWrites(data_dir / "alone-queue.db"),
    )
    write = WriteService(queue, pending, Now())
    writer = WriterService(store, model, pending, queue, Now())
    for item in texts_of:
        request = WriteRequest(items=[WriteItem.model_validate(dict(item.item))])
        write.accept(Caller(TENANT, key_id="bench"), item.agent_id, request.to_new_memories())
    discard_unpublished_metrics()
    cpu, wall = time.process_time(), time.perf_counter()
    while batch := queue.receive(WRITE_BATCH):
        writer.expect(queue.peek(WRITE_BATCH))  # as `local.worker.QueueWorker` does
        for prepared in writer.prepare([m.body for m in batch]):
            if prepared.command is not None:
                writer.apply(prepared.command, prepared.vector)
        queue.ack(m.receipt_handle for m in batch)
        discard_unpublished_metrics()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "turns": len(turns),
        "model_calls": Counted.calls,
        "texts": Counted.texts,
        "chars_per_turn_char": round(Counted.chars / sum(len(t) for t in turns), 2),
        "cpu_s": round(cpu, 1),
        "raw_cpu_s": round(raw_cpu, 1),
        "cpu_share_of_raw": round(raw_cpu / cpu, 3),
        "wall_turns_per_s": round(len(turns) / wall, 1),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data_dir: Path, workers: int) -> tuple[subprocess.Popen[bytes], str, str]:
    cli = str(Path(sys.executable).with_name("agent-memory"))
    created = subprocess.run(
        [cli, "keys", "create", "--tenant", TENANT, "--plan", "pro", "--data-dir", str(data_dir)],
        check=True,
        capture_output=True,
        text=True,
    )
    key = next(line for line in created.stdout.splitlines() if line.startswith("{"))
    api_key = json.loads(key)["api_key"]
    port = free_port()
    args = [cli, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data_dir)]
    if workers:
        args += ["--workers", str(workers)]
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server, url, api_key
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start within 120 s")


#: The agent one write goes to before anything is timed (`warm_up`).
WARM_UP_AGENT = "bench-warm-up"


def warm_up(url: str, key: str, queries: list[str]) -> None:
    """Every part of the server ready before anything is timed: one write stored (the writer,
    which may run in a process of its own, started and its model loaded: otherwise its start
    would be timed with the idle searches) and ``queries`` searched (every API process's model
    and caches warm)."""
    from agent_memory.client import MemoryClient

    with MemoryClient(url, key, timeout_s=120) as client:
        client.remember(WARM_UP_AGENT, "The import starts once the server is warm.")
        client.wait_until_stored(WARM_UP_AGENT, timeout_s=600, interval_s=0.2)
    searches(url, key, queries)


def searches(
    url: str, key: str, queries: list[str], stop: threading.Event | None = None, every_s: float = 0.0
) -> list[float]:
    """Questions to the background agent, one at a time, until they run out (or ``stop``): back
    to back, or one every ``every_s`` seconds (a search that takes longer delays the next)."""
    client = _corpus.KeepAliveClient(url, key)
    timings = []
    try:
        for query in queries:
            if stop is not None and stop.is_set():
                break
            ms, _ = _corpus.timed_http_search(client, SEARCH_AGENT, {"query": query, "max_results": 10})
            timings.append(ms)
            if every_s > ms / 1000 and stop is not None:
                stop.wait(every_s - ms / 1000)
    finally:
        client.close()
    return timings


def bulk_load(
    url: str, key: str, items: list[Any], source: str, queries: list[str], search_rate: float
) -> dict[str, Any]:
    """Import ``items`` while searches run (back to back, or ``search_rate`` a second); when it
    was accepted and when every agent had it stored."""
    from agent_memory.client import MemoryClient
    from agent_memory.client.importing import Importer

    agents = sorted({i.agent_id for i in items})
    stop = threading.Event()
    during: list[float] = []
    every_s = 1 / search_rate if search_rate > 0 else 0.0

    def search_loop() -> None:
        while not stop.is_set():
            during.extend(searches(url, key, queries, stop, every_s))

    searcher = threading.Thread(target=search_loop, daemon=True)
    print(f"importing {len(items):,} turns of {len(agents)} agents ...", file=sys.stderr)
    started = time.perf_counter()
    searcher.start()
    try:
        with MemoryClient(url, key, timeout_s=120) as client:
            summary = Importer(client).run(items, source=source)
            accepted_s = time.perf_counter() - started
            for agent in agents:
                client.wait_until_stored(agent, timeout_s=3600, interval_s=0.2)
        stored_s = time.perf_counter() - started
    finally:
        stop.set()
        searcher.join()
    return {"summary": summary, "accepted_s": accepted_s, "stored_s": stored_s, "during": during}


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.at_start(), time.perf_counter()
    _corpus.configure_environment(data_dir, "minilm")
    os.environ["AGENT_MEMORY_SCHEDULER_ENABLED"] = "false"
    from agent_memory import container
    from agent_memory.client.importing import read_source, source_fingerprint
    from agent_memory.local.worker import WRITE_BATCH

    items = read_source(args.data, "locomo")
    if args.turns:
        items = items[: args.turns]
    if args.writer_only:
        alone = writer_alone(items, data_dir)
        print(json.dumps(alone))
        return {**_corpus.result_header("ingest-writer", run_started, load_at_start), "writer": alone}
    texts = [str(i.item["content"]) for i in items]
    print(f"raw embedder over {len(texts):,} turns, {args.raw_repeats} times ...", file=sys.stderr)
    raw_embedder = RawEmbedder(texts)
    raw_embedder.measure("before_load", args.raw_repeats)

    container.reset()
    if args.background:
        print(f"loading {args.background:,} background memories ...", file=sys.stderr)
        memories = _corpus.generate_memories(args.background, seed=_corpus.DEFAULT_SEED)
        _corpus.load_memories(container.store(), container.embedder(), memories, TENANT, SEARCH_AGENT)
        container.store().close()  # type: ignore[attr-defined]
        container.reset()

    server, url, key = start_server(data_dir, args.workers)
    try:
        queries = _corpus.generate_queries(args.searches)
        warm_up(url, key, queries[:20])
        cpu_idle = server_cpu(server.pid)
        idle = searches(url, key, queries)
        cpu_start = server_cpu(server.pid)
        agents = sorted({i.agent_id for i in items})
        load = bulk_load(url, key, items, source_fingerprint(args.data), queries, args.search_rate)
        cpu_load = used_between(cpu_start, server_cpu(server.pid))
        cpu_idle = used_between(cpu_idle, cpu_start)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"raw embedder again, {args.raw_repeats} times ...", file=sys.stderr)
    raw_embedder.measure("after_load", args.raw_repeats)
    raw = raw_embedder.fastest()
    summary, accepted_s, stored_s = load["summary"], load["accepted_s"], load["stored_s"]
    rate = len(items) / stored_s
    result = {
        **_corpus.result_header("ingest", run_started, load_at_start),
        "turns": len(items),
        "agents": len(agents),
        "write_batch": WRITE_BATCH,
        "raw_embedder": raw,
        "import": {
            **summary.as_dict(),
            "accepted_s": round(accepted_s, 2),
            "stored_s": round(stored_s, 2),
            "turns_per_s": round(rate, 1),
            "share_of_raw": round(rate / raw["turns_per_s"], 3),
        },
        "search_rate_per_s": args.search_rate or "back to back",
        "search_idle_ms": _corpus.summarize(idle),
        "search_during_load_ms": _corpus.summarize(load["during"]),
        "server_cpu_s": {"idle_searches": cpu_idle, "load": cpu_load},
    }
    write_cpu = cpu_load.get("writer", 0.0) + cpu_load.get("embedding", 0.0)
    if write_cpu > 0:  # the threads were named (`adapters.os_threads`: Linux, this code or later)
        result["server_cpu_s"]["raw_cpu_share_of_writer"] = round(raw["cpu_s"] / write_cpu, 3)
    print_result(result, args.background)
    return result


def print_result(result: dict[str, Any], background: int) -> None:
    """The run's figures as a person reads them (stdout)."""
    raw, load, cpu_load = result["raw_embedder"], result["import"], result["server_cpu_s"]["load"]
    rate = load["turns_per_s"]
    print(
        f"turns: {result['turns']:,} of {result['agents']} agents; background agent: {background:,} memories"
    )
    print(f"raw embedder in this process, batches of {EMBED_BATCH}, turns/s (seconds):")
    for when, runs in raw["repeats"].items():
        for config in RAW_CONFIGS:
            timings = ", ".join(
                f"{r['turns_per_s']:.1f} ({r['seconds']:.1f})" for r in runs if r["config"] == config
            )
            print(f"  {when.replace('_', ' ')}, {config}: {timings}")
    print(
        f"through the HTTP API: accepted in {load['accepted_s']:.1f} s, stored in {load['stored_s']:.1f} s: "
        f"{rate:.1f} turns/s, {100 * load['share_of_raw']:.0f} % of the fastest raw rate "
        f"({raw['turns_per_s']:.1f}, {raw['config']})"
    )
    if cpu_load:
        print(
            f"server CPU during the load: {cpu_load['total']:.1f} s; writer {cpu_load['writer']:.1f} s, "
            f"its embedding {cpu_load['embedding']:.1f} s (the raw embedder: {raw['cpu_s']:.1f} s), "
            f"API and {result['search_during_load_ms']['n']} searches {cpu_load['api']:.1f} s"
        )
    print(
        _corpus.table(
            [
                ("search idle", result["search_idle_ms"]),
                ("search during load", result["search_during_load_ms"]),
            ]
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"locomo10.json (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--turns", type=int, default=DEFAULTS["turns"], help="only the first N turns (0: all)"
    )
    parser.add_argument(
        "--background", type=int, default=DEFAULTS["background"], help="memories of the searched agent"
    )
    parser.add_argument(
        "--searches", type=int, default=DEFAULTS["searches"], help="questions in each search run"
    )
    parser.add_argument(
        "--workers", type=int, default=DEFAULTS["workers"], help="API processes (0: the default)"
    )
    parser.add_argument(
        "--search-rate",
        type=float,
        default=DEFAULTS["search_rate"],
        help="searches a second during the load (0: back to back, one searcher)",
    )
    parser.add_argument(
        "--raw-repeats",
        type=int,
        default=DEFAULTS["raw_repeats"],
        help="timings of the raw embedder before the load and again after it (the fastest counts)",
    )
    parser.add_argument(
        "--writer-only",
        action="store_true",
        help="the writer in this process alone: model calls, texts and CPU against the raw embedder",
    )
    args = parser.parse_args()
    if not args.data.exists():
        parser.error(f"no data set at {args.data} (LoCoMo's locomo10.json; see --data)")
    with tempfile.TemporaryDirectory(prefix="agent-memory-ingest-") as tmp:
        result = run(args, Path(tmp))
    values = {k: getattr(args, k) for k in DEFAULTS}
    name = "ingest-writer" if args.writer_only else "ingest"
    path = _corpus.write_result(_corpus.result_name(name, values, DEFAULTS), result)
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
