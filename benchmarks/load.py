"""Sustained load on the local runtime over loopback, with locust (headless), then the ledger.

    python benchmarks/load.py [--duration 60] [--users 50] [--tenants 5] [--agents 50]
                              [--embedder minilm] [--wait-min 0.1] [--wait-max 0.3]

Starts ``agent-memory serve`` on 127.0.0.1 (a fresh data directory, no scheduler), creates one
key per tenant, and runs ``--users`` concurrent clients for a fixed ``--duration``: each client is
one agent of one tenant (50 agents by default, across 5 tenants) and writes (3 in 4 requests,
one memory each) and searches (1 in 4) its own memory, with a short random pause in between.

What it reports (and writes to ``benchmarks/results/load.json``): throughput, p50/p95/p99 latency
and errors per request type; then, after the writer has drained the queue, the ledger: every
accepted id must resolve (``GET``), and the records stored plus the writes merged into a near
duplicate (dedup-on-write) must equal the writes accepted. Under load it also checks isolation:
every search result must carry the caller's own tenant and agent marker.

Locust is the load tool (``pip install 'agent-memory[bench]'``); it patches the standard library
with gevent on import, so the server runs in its own process, as it would in use.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gevent
from locust import FastHttpUser, between, events, task
from locust.env import Environment

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import (
    at_start,
    code_version,
    generate_memories,
    generate_queries,
    machine,
    write_result,
)

DEFAULTS = {"duration": 60, "users": 50, "tenants": 5, "agents": 50, "embedder": "minilm"}
MARKER = "[{tenant}/{agent}]"


class Shared:
    """What the clients share: their identities, the corpus, and what was accepted."""

    identities: list[tuple[str, str, str]] = []  # (tenant, agent, key)
    next_identity = itertools.count()
    memories: list[Any] = []
    queries: list[str] = []
    accepted: dict[tuple[str, str], list[str]] = {}
    leaks = 0
    searched_results = 0


class MemoryClient(FastHttpUser):
    """One agent of one tenant: writes what happens to it, and searches what it remembers."""

    wait_time = between(0.1, 0.3)

    def on_start(self) -> None:
        n = next(Shared.next_identity)
        self.tenant, self.agent, key = Shared.identities[n % len(Shared.identities)]
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.rng = random.Random(n)
        self.marker = MARKER.format(tenant=self.tenant, agent=self.agent)

    @task(3)
    def write(self) -> None:
        memory = self.rng.choice(Shared.memories)
        item = memory.write_item()
        item["content"] = f"{memory.content} {self.marker} #{self.rng.getrandbits(48):012x}"
        with self.client.post(
            f"/v1/agents/{self.agent}/memories",
            json={"items": [item]},
            headers=self.headers,
            name="write",
            catch_response=True,
        ) as response:
            if response.status_code != 202:
                response.failure(f"status {response.status_code}")
                return
            ids = [a["id"] for a in response.json()["accepted"]]
            Shared.accepted.setdefault((self.tenant, self.agent), []).extend(ids)

    @task(1)
    def search(self) -> None:
        with self.client.post(
            f"/v1/agents/{self.agent}/memories/search",
            json={"query": self.rng.choice(Shared.queries), "grain": "working", "max_results": 10},
            headers=self.headers,
            name="search",
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
                return
            results = response.json()["results"]
            Shared.searched_results += len(results)
            foreign = [r for r in results if self.marker not in r["content"]]
            if foreign:
                Shared.leaks += len(foreign)
                response.failure(f"{len(foreign)} result(s) of another agent")


# --- the server ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory.local.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def _get(url: str, key: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def start_server(data_dir: Path, port: int, embedder: str) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = {
        **os.environ,
        "AGENT_MEMORY_DATA_DIR": str(data_dir),
        "AGENT_MEMORY_EMBEDDER": embedder,
        "POWERTOOLS_LOG_LEVEL": "ERROR",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_memory.local.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-scheduler",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return server, env
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.2)


# --- the run ------------------------------------------------------------------------------------


def _entry_stats(entry: Any, elapsed: float) -> dict[str, Any]:
    return {
        "requests": entry.num_requests,
        "failures": entry.num_failures,
        "throughput_per_s": round(entry.num_requests / elapsed, 1),
        "p50_ms": entry.get_response_time_percentile(0.50),
        "p95_ms": entry.get_response_time_percentile(0.95),
        "p99_ms": entry.get_response_time_percentile(0.99),
        "max_ms": round(entry.max_response_time, 1),
        "mean_ms": round(entry.avg_response_time, 1),
    }


def drain(base: str, keys: dict[str, str], timeout_s: float = 900) -> float:
    """Seconds until no agent has a pending write (the writer caught up with what was accepted)."""
    started = time.monotonic()
    waiting = set(Shared.accepted)
    while waiting:
        if time.monotonic() - started > timeout_s:
            raise RuntimeError(f"{len(waiting)} agent(s) still have pending writes after {timeout_s} s")
        for tenant, agent in list(waiting):
            status, stats = _get(f"{base}/v1/agents/{agent}/stats", keys[tenant])
            if status == 200 and stats["pending_writes"] == 0:
                waiting.discard((tenant, agent))
        time.sleep(0.5)
    return time.monotonic() - started


def ledger(base: str, keys: dict[str, str]) -> dict[str, Any]:
    """Every accepted id resolves; stored records plus merges add up to what was accepted."""
    stored = 0
    for tenant, agent in Shared.accepted:
        status, stats = _get(f"{base}/v1/agents/{agent}/stats", keys[tenant])
        assert status == 200, stats
        stored += stats["records"]["working"]

    def resolve(item: tuple[str, str, str]) -> str:
        tenant, agent, memory_id = item
        status, body = _get(f"{base}/v1/agents/{agent}/memories/{memory_id}", keys[tenant])
        if status != 200:
            return "missing"
        if body["id"] != memory_id:
            return "merged"  # dedup-on-write folded it into a near duplicate; the id is an alias
        return "stored"

    items = [(t, a, i) for (t, a), ids in Shared.accepted.items() for i in ids]
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = Counter(pool.map(resolve, items))
    accepted = len(items)
    distinct = len(set(items))
    return {
        "accepted": accepted,
        "accepted_distinct_ids": distinct,
        "stored_records": stored,
        "resolved_as_stored": outcomes["stored"],
        "resolved_as_merged": outcomes["merged"],
        "missing": outcomes["missing"],
        "balances": outcomes["missing"] == 0 and stored + outcomes["merged"] == distinct,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=int, default=DEFAULTS["duration"], help="seconds of load")
    parser.add_argument("--users", type=int, default=DEFAULTS["users"], help="concurrent clients")
    parser.add_argument("--tenants", type=int, default=DEFAULTS["tenants"])
    parser.add_argument(
        "--agents", type=int, default=DEFAULTS["agents"], help="agents in all, across tenants"
    )
    parser.add_argument("--embedder", default=DEFAULTS["embedder"], choices=["minilm", "hashing"])
    parser.add_argument("--wait-min", type=float, default=0.1, help="pause between a client's requests (s)")
    parser.add_argument("--wait-max", type=float, default=0.3)
    args = parser.parse_args()
    MemoryClient.wait_time = between(args.wait_min, args.wait_max)

    load_at_start = at_start()
    Shared.memories = generate_memories(2000)
    Shared.queries = generate_queries(500)
    with tempfile.TemporaryDirectory(prefix="agent-memory-load-") as tmp:
        data_dir, port = Path(tmp) / "data", _free_port()
        server, env = start_server(data_dir, port, args.embedder)
        base = f"http://127.0.0.1:{port}"
        try:
            keys = {}
            for t in range(args.tenants):
                tenant = f"load-t{t}"
                out = _cli(
                    "keys",
                    "create",
                    "--tenant",
                    tenant,
                    "--plan",
                    "pro",
                    "--data-dir",
                    str(data_dir),
                    env=env,
                )
                keys[tenant] = json.loads(out)["api_key"]
            tenants = list(keys)
            Shared.identities = [
                (tenants[a % len(tenants)], f"agent-{a:03d}", keys[tenants[a % len(tenants)]])
                for a in range(args.agents)
            ]

            # stop_timeout: at the end each client finishes the request it has in flight, so the
            # server never accepts a write the ledger does not know of.
            environment = Environment(user_classes=[MemoryClient], host=base, events=events, stop_timeout=60)
            runner = environment.create_local_runner()
            print(
                f"load: {args.users} clients, {args.agents} agents, {args.tenants} tenants, {args.duration} s"
            )
            started = time.monotonic()
            runner.start(args.users, spawn_rate=args.users)
            gevent.spawn_later(args.duration, runner.quit)
            runner.greenlet.join()
            elapsed = time.monotonic() - started

            stats = environment.stats
            per_type = {name: _entry_stats(stats.get(name, "POST"), elapsed) for name in ("write", "search")}
            total = _entry_stats(stats.total, elapsed)
            errors = {f"{e.method} {e.name}: {e.error}": e.occurrences for e in stats.errors.values()}
            print("draining the write queue ...")
            drain_s = drain(base, keys)
            ledger_report = ledger(base, keys)
        finally:
            server.terminate()
            server.wait(30)

    result = {
        "benchmark": "load",
        "tool": "locust (headless, FastHttpUser)",
        "config": {**vars(args), "write_to_search": "3:1", "items_per_write": 1},
        "elapsed_s": round(elapsed, 1),
        "requests": {**per_type, "all": total},
        "errors": errors,
        "isolation": {"search_results_checked": Shared.searched_results, "foreign_results": Shared.leaks},
        "drain_s": round(drain_s, 1),
        "ledger": ledger_report,
        "machine": machine(load_at_start),
        "code": code_version(),
    }
    path = write_result("load", result)
    print(
        json.dumps({k: result[k] for k in ("requests", "errors", "isolation", "drain_s", "ledger")}, indent=2)
    )
    print(f"written to {path}")
    return 0 if ledger_report["balances"] and not Shared.leaks else 1


if __name__ == "__main__":
    sys.exit(main())
