"""Search throughput of ``agent-memory serve`` as concurrent clients are added, then a mixed row.

    python benchmarks/concurrency.py [--n 2000] [--embedder minilm|hashing] [--clients 1,4,16,64]
                                     [--duration 10] [--warmup 1] [--mixed-clients 20]
                                     [--client-processes 1] [--workers W] [--data-dir DIR]

`search_latency.py` times one search at a time; this asks what the server does with many at
once: how many searches a second it answers, and what its latency becomes, as clients are added.

1. **Load** ``--n`` memories of one agent straight into a fresh store (as `search_latency.py`
   does: embedded in batches, `put` one transaction a batch), close the store, create a key.
2. **Serve**: ``agent-memory serve --no-scheduler`` in its own process on 127.0.0.1, with
   ``--workers W`` only when given (so the server otherwise picks its own default); how many
   processes answered the API (``serve`` prints it) is recorded with the figures.
3. **Sweep**: for each count in ``--clients``, that many clients search back to back (no think
   time) for ``--duration`` seconds after ``--warmup`` seconds that are not counted. A client is a
   thread with one keep-alive ``http.client`` connection, opened before the clock starts.
4. **Mixed**: ``--mixed-clients`` clients, each sending 3 writes (one new memory each, 202) to 1
   search, reported per request type.

The clients run in ``--client-processes`` separate processes (spawned, standard library only), not
in this one: on a 2-core machine the load generator competes with the server for the CPU, and 64
threads behind one GIL in the process that also holds the embedder would measure themselves.
Each row records the CPU the client processes used during the window (CPU seconds per second:
1.0 is one core busy), so a row where the generator, not the server, was saturated can be told
apart. A request counts when it completes inside the window; throughput and latency are of the
200 (202) answers, anything else is an error.
Figures are printed and written to ``benchmarks/results/concurrency[-...].json``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import _corpus

TENANT = "bench"
AGENT = "bench-agent"
SEARCH_PATH = f"/v1/agents/{AGENT}/memories/search"
WRITE_PATH = f"/v1/agents/{AGENT}/memories"
WRITES_PER_SEARCH = 3
OK = {"search": 200, "write": 202}
DEFAULTS: dict[str, Any] = {
    "n": 2_000,
    "embedder": "minilm",
    "clients": "1-4-16-64",
    "duration": 10.0,
    "warmup": 1.0,
    "mixed_clients": 20,
    "client_processes": 1,
    "workers": None,
}


# --- the clients (in spawned processes) ----------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """What a client process needs: where to send what, with how many threads, for how long."""

    port: int
    key: str
    threads: int
    mixed: bool
    warmup_s: float
    duration_s: float
    queries: list[str]
    items: list[dict[str, Any]]


def _client(load: Load, n: int, go: threading.Barrier, window: list[float], out: list[Any]) -> None:
    """One client: back-to-back requests on one keep-alive connection; in-window ones recorded."""
    headers = {"Authorization": f"Bearer {load.key}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", load.port, timeout=60)
    with contextlib.suppress(OSError):
        conn.connect()  # before the clock starts (a failure is retried by the first request)
    go.wait()
    start, end = window
    i = 0
    while time.monotonic() < end:
        i += 1
        if load.mixed and i % (WRITES_PER_SEARCH + 1):
            kind, path = "write", WRITE_PATH
            item = dict(load.items[(n * 7919 + i) % len(load.items)])
            item["content"] = f"{item['content']} #{os.getpid()}-{n}-{i}"  # never the same memory
            body: dict[str, Any] = {"items": [item]}
        else:
            kind, path = "search", SEARCH_PATH
            query = load.queries[(n * 7919 + i) % len(load.queries)]
            body = {"query": query, "grain": "working", "max_results": 10}
        sent = time.perf_counter()
        try:
            conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
            response = conn.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            status = 0  # no answer: reconnect and go on
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", load.port, timeout=60)
        ms = (time.perf_counter() - sent) * 1000
        if start <= time.monotonic() <= end:
            out.append((kind, status, ms))
    conn.close()


def client_process(load: Load, first: int, start: Any, results: Any) -> None:
    """``load.threads`` clients; says when they are connected, waits for ``start``, reports back."""
    go = threading.Barrier(load.threads + 1)
    window = [0.0, 0.0]
    outs: list[list[Any]] = [[] for _ in range(load.threads)]
    threads = [
        threading.Thread(target=_client, args=(load, first + t, go, window, outs[t]), daemon=True)
        for t in range(load.threads)
    ]
    for thread in threads:
        thread.start()
    results.put(("ready", None))
    start.wait()
    now = time.monotonic()
    window[:] = [now + load.warmup_s, now + load.warmup_s + load.duration_s]
    go.wait()
    time.sleep(max(0.0, window[0] - time.monotonic()))
    cpu = time.process_time()
    time.sleep(max(0.0, window[1] - time.monotonic()))
    cpu = time.process_time() - cpu
    for thread in threads:
        thread.join()
    results.put(("done", {"cpu_s": cpu, "samples": [s for out in outs for s in out]}))


def run_step(ctx: Any, load: Load, clients: int, processes: int) -> dict[str, Any]:
    """``clients`` clients spread over up to ``processes`` processes; their merged samples."""
    shares = [clients // processes + (p < clients % processes) for p in range(processes)]
    start, results = ctx.Event(), ctx.Queue()
    procs, first = [], 0
    for threads in filter(None, shares):
        args = (replace(load, threads=threads), first, start, results)
        procs.append(ctx.Process(target=client_process, args=args, daemon=True))
        first += threads
    for proc in procs:
        proc.start()
    try:
        for _ in procs:
            results.get(timeout=120)  # "ready": every client connected
        start.set()
        done = [results.get(timeout=load.warmup_s + load.duration_s + 120)[1] for _ in procs]
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
    return {
        "cpu_s": sum(d["cpu_s"] for d in done),
        "samples": [s for d in done for s in d["samples"]],
    }


# --- the figures ---------------------------------------------------------------------------------


def figures(samples: list[Any], kind: str | None, duration_s: float) -> dict[str, Any]:
    """Throughput and latency of the successful answers (of one kind, or all), and the errors."""
    chosen = [(k, status, ms) for k, status, ms in samples if kind in (None, k)]
    ok = [ms for k, status, ms in chosen if status == OK[k]]
    errors = Counter(str(status) for k, status, _ in chosen if status != OK[k])
    return {
        "requests": len(ok),
        "per_s": round(len(ok) / duration_s, 1),
        "latency_ms": _corpus.summarize(ok) if ok else None,
        "errors": sum(errors.values()),
        "error_statuses": dict(errors),
    }


def _cell(row: dict[str, Any], label: str) -> str:
    lat = row["latency_ms"] or dict.fromkeys(("p50", "p95", "p99"), float("nan"))
    return (
        f"{label:<18} {row['per_s']:>9.1f} {lat['p50']:>8.1f} {lat['p95']:>8.1f} {lat['p99']:>8.1f}"
        f" {row['errors']:>7}"
    )


def report(result: dict[str, Any]) -> str:
    p = result["params"]
    workers = f"{p['server_processes']} API process(es)" + (
        " (server default)" if p["workers"] is None else ""
    )
    lines = [
        f"search throughput: {p['memories']:,} memories of one agent, {p['embedder']}, {workers}, "
        f"{p['duration_s']:g} s a row after {p['warmup_s']:g} s warm-up, "
        f"{p['client_processes']} client process(es)",
        "",
        f"{'':<18} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7}"
        f" {'vs first':>9} {'client CPU':>10}",
    ]
    for row in result["sweep"]:
        cpu = f" {row['vs_first']:>8.2f}x {row['client_cpu_share']:>10.0%}"
        lines.append(_cell(row, f"{row['clients']} client(s)") + cpu)
    mixed = result["mixed"]
    lines += [_cell(mixed[kind], f"mixed {mixed['clients']}, {kind}") for kind in ("write", "search", "all")]
    return "\n".join(lines)


# --- the server ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, workers: int | None, log_dir: Path) -> subprocess.Popen[bytes]:
    """``agent-memory serve`` in its own process group (its workers included), once it is healthy."""
    command = [sys.executable, "-m", "agent_memory.local.cli", "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--no-scheduler"]
    if workers is not None:
        command += ["--workers", str(workers)]
    with (log_dir / "stdout").open("wb") as out, (log_dir / "stderr").open("wb") as err:
        server = subprocess.Popen(command, env=os.environ, stdout=out, stderr=err, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2),
        ):
            return server
        if server.poll() is not None or time.monotonic() > deadline:
            stop_server(server)
            tail = (log_dir / "stderr").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the server did not start:\n{tail}")
        time.sleep(0.2)


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server stops its workers), then SIGKILL to the whole group after 20 s."""
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


# --- the run -------------------------------------------------------------------------------------


def prepare(args: argparse.Namespace, data_dir: Path) -> tuple[str, str, dict[str, float]]:
    """Load the memories into a fresh store and close it; a key for the tenant; the model id."""
    _corpus.configure_environment(data_dir, args.embedder)
    from agent_memory import container
    from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
    from agent_memory.settings import get_settings
    from agent_memory.tenancy.rules.keys import NewKey

    container.reset()
    settings = get_settings()
    embedder, store = container.embedder(), container.store()
    memories = _corpus.generate_memories(args.n)
    print(
        f"loading {args.n:,} memories with {embedder.model_id} into {settings.sqlite_path}", file=sys.stderr
    )
    try:
        loaded = _corpus.load_memories(store, embedder, memories, TENANT, AGENT)
    finally:
        store.close()  # type: ignore[attr-defined]
    _, key = LocalKeyStore(settings.auth_path).create(NewKey(TENANT, "pro"))
    return key, embedder.model_id, loaded


def run(args: argparse.Namespace, clients: list[int], data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.at_start(), time.perf_counter()
    key, model_id, loaded = prepare(args, data_dir)
    load = Load(
        port=_free_port(),
        key=key,
        threads=0,
        mixed=False,
        warmup_s=args.warmup,
        duration_s=args.duration,
        queries=_corpus.generate_queries(500),
        items=[m.write_item() for m in _corpus.generate_memories(1000, seed=_corpus.DEFAULT_SEED + 3)],
    )
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="agent-memory-concurrency-") as log_dir:
        server = start_server(load.port, args.workers, Path(log_dir))
        # `serve` says how many processes answer the API on its first line ("processes: N").
        found = re.search(r"processes: (\d+)", (Path(log_dir) / "stdout").read_text(errors="replace"))
        try:
            client = _corpus.KeepAliveClient(f"http://127.0.0.1:{load.port}", key)
            status, body = client.post(SEARCH_PATH, {"query": load.queries[0], "grain": "working"})
            client.close()
            if status != 200:
                raise RuntimeError(f"a first search answered {status}: {body[:300]!r}")
            sweep = []
            for n in clients:
                print(f"{n} client(s) ...", file=sys.stderr)
                step = run_step(ctx, load, n, args.client_processes)
                row = {"clients": n, **figures(step["samples"], "search", args.duration)}
                sweep.append(row | {"client_cpu_share": round(step["cpu_s"] / args.duration, 3)})
            print(f"mixed, {args.mixed_clients} client(s) ...", file=sys.stderr)
            step = run_step(ctx, replace(load, mixed=True), args.mixed_clients, args.client_processes)
            mixed: dict[str, Any] = {"clients": args.mixed_clients, "writes_per_search": WRITES_PER_SEARCH}
            for kind in ("write", "search", None):
                mixed[kind or "all"] = figures(step["samples"], kind, args.duration)
            mixed["client_cpu_share"] = round(step["cpu_s"] / args.duration, 3)
        finally:
            stop_server(server)
        stray = (Path(log_dir) / "stdout").read_text(errors="replace").splitlines()
    # The two lines `serve` prints at start (its URL and the development key) are expected.
    _corpus.note_stray_output("\n".join(stray[2:]))
    base = next((r for r in sweep if r["clients"] == 1), sweep[0])
    for row in sweep:
        row["vs_first"] = round(row["per_s"] / base["per_s"], 2) if base["per_s"] else 0.0
    return {
        **_corpus.result_header("concurrency", run_started, load_at_start),
        "params": {
            "memories": args.n,
            "embedder": model_id,
            "clients": clients,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "mixed_clients": args.mixed_clients,
            "client_processes": args.client_processes,
            "workers": args.workers,
            "server_processes": int(found[1]) if found else None,
            "search": {"grain": "working", "max_results": 10},
            "vs_first": f"throughput relative to the {base['clients']}-client row",
        },
        "load": loaded,
        "sweep": sweep,
        "mixed": mixed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=DEFAULTS["n"], help="memories to load (default 2000)")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default=DEFAULTS["embedder"])
    parser.add_argument(
        "--clients", default="1,4,16,64", help="client counts of the sweep (default 1,4,16,64)"
    )
    parser.add_argument("--duration", type=float, default=DEFAULTS["duration"], help="seconds a row")
    parser.add_argument("--warmup", type=float, default=DEFAULTS["warmup"], help="uncounted seconds first")
    parser.add_argument("--mixed-clients", type=int, default=DEFAULTS["mixed_clients"])
    parser.add_argument("--client-processes", type=int, default=DEFAULTS["client_processes"])
    parser.add_argument("--workers", type=int, help="serve --workers W (default: the server's default)")
    parser.add_argument("--data-dir", type=Path, help="an empty or new directory (default: a temporary one)")
    args = parser.parse_args(argv)
    try:
        clients = [int(c) for c in args.clients.split(",")]
    except ValueError:
        parser.error("--clients must be a comma-separated list of numbers, e.g. 1,4,16,64")
    if min(clients) < 1 or args.n < 1 or args.mixed_clients < 1 or args.client_processes < 1:
        parser.error("--clients, --n, --mixed-clients and --client-processes must be at least 1")
    if args.duration <= 0 or args.warmup < 0:
        parser.error("--duration must be positive and --warmup at least 0")

    with _corpus.fresh_data_dir(parser, args.data_dir, prefix="agent-memory-concurrency-") as data_dir:
        result = run(args, clients, data_dir)
    print(report(result))
    values = {**vars(args), "clients": "-".join(map(str, clients))}
    name = _corpus.result_name("concurrency", values, DEFAULTS)
    print(f"\nwritten to {_corpus.write_result(name, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
