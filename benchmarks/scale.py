"""Search at scale: 10,000, 100,000 and 1,000,000 memories of one agent, and a fleet of agents.

    python benchmarks/scale.py [--scenarios 10000,100000,1000000,fleet] [--queries 200]
                               [--embedder hashing|minilm] [--seed S]
                               [--fleet-agents 1000] [--fleet-size 1000] [--keep]

`search_latency.py` measures one agent of 10,000 memories. This asks what happens when an agent
grows a hundredfold, and when one server holds many agents: does a search stay fast, does the
vector index (`adapters/sqlite/sqlite_ann.py`: an int8 sketch scanned and rescored, per agent of at least
``AGENT_MEMORY_ANN_MIN_VECTORS`` live vectors, 10,000 by default) still find what exact search
finds, what does a restarted server pay for its first search, and what does it hold in memory
and on disk. Each scenario is a number of memories of one agent (tenant ``bench``, agent
``bench-agent``), or ``fleet``: ``--fleet-agents`` agents of ``--fleet-size`` memories each
(1,000 x 1,000: a million memories again, none of them in an agent large enough for an index).

**Each scenario runs in a process of its own** (this script started again with ``--one``), on a
fresh data directory (a temporary one, removed afterwards unless ``--keep``): the settings are
read from the environment once, and the peak resident memory of a process is the peak of its
whole life, so a scenario must not inherit the previous one's. In that process:

1. **Load** the memories with `_corpus.load_memories` (embedded in batches, stored with
   `SqliteMemoryStore.put`, no HTTP, no queue, no dedup lookups) into the store the container
   builds from the settings (so with the settings' index threshold). Then, for every
   agent at or above the threshold, build its index now (`store.build_vector_index`, every core),
   timed: a server builds it in the background the first time a search finds the agent that big.
2. **Search in the service and over HTTP**, interleaved: `SearchService.search` (the container's,
   the one the API handler calls) and ``POST /v1/agents/{agent}/memories/search`` to a
   `LocalRuntime` started in this process (127.0.0.1, a free port, a real key, no scheduler) from
   ``http.client`` over one keep-alive connection; each of ``--queries`` corpus questions after 5
   warm-ups, in the two shapes of `search_latency.py` (the query alone; the query with a 30-day
   window and ``kinds: ["decision"]``). The very first search after the load is reported apart.
   In the fleet, searches go to agents drawn with a seeded `random.Random`: a *cold* row goes to
   an agent this process has not searched yet (its vectors are read from SQLite), a *warm* row
   to one of a hot set of 50 agents searched before (their vectors are in the process's cache,
   256 MB across agents, which 50 agents of 1,000 vectors fit and 1,000 do not).
3. **Resident memory** of this process after the searches: current (``VmRSS``) and peak
   (``VmHWM``; ``ru_maxrss`` is recorded too). The peak includes the load: the corpus itself is
   a few hundred MB of Python objects at a million memories, dropped before the searches.
   ``ru_maxrss`` is no use in a child of a big process: Linux starts it from the parent's
   resident size at the fork and keeps it across exec, so the restart's fresh process (a child
   of this one) reports ``VmHWM``, its own peak, only. Resident memory is split into anonymous
   (``RssAnon``: the heap, numpy arrays, caches) and mapped files (``RssFile``: pages of
   ``memory.db``, which SQLite reads through ``mmap``, and of the index files a search touched;
   they are the page cache, shared between processes and dropped by the kernel under pressure).
4. **Write -> searchable**: through the same runtime, 20 writes of fresh sentences (corpus
   sentences of another seed with a short seeded tag appended, none within cosine 0.85 of a
   stored memory or of another write, so dedup-on-write merges none), each followed by a search
   for its text every 5 ms until the id the POST returned comes back, as `write_to_searchable.py`
   does (in the fleet, to its first agent). The writes land in the index's exact *delta*; no
   fold is triggered by 20 rows.
5. **Recall of the approximate index** (single-agent scenarios with an index): for each question,
   its embedding alone (`StoreQuery` with a vector, no text, ``limit`` 10) searched in the indexed
   store and in a second `SqliteMemoryStore` over the same file with ``ann_min_vectors=0``
   (exact cosine over every vector). Recall@10 is tie-aware: an approximate hit counts when its
   cosine is at least the exact 10th cosine - 1e-6 (the templated corpus has many sentences
   equally near a question; which of them a search returns is arbitrary). The store-level latency
   of both is reported, the exact one being what every search would cost without the index.
6. **First search after a restart**: the store closed, a fresh interpreter
   (``subprocess.run([sys.executable, "-c", ...])``, same environment) imports the app, opens the
   container's store and search service, and times its first `SearchService.search` alone (that
   is the criterion), then a second one (same agent, another question) and, in the fleet, the
   first search of another agent. Three restarts with the page cache as the run left it, then
   three with the scenario's files evicted from the page cache first (``posix_fadvise``
   ``DONTNEED`` on each file: only this run's files, nothing else on the machine is touched), the
   nearest to a restart after a reboot that needs no root. The fresh process's resident memory
   after its first search is what a restarted server holds: reported first.
7. **Disk**: ``memory.db`` with its ``-wal`` and ``-shm`` (measured after the load and the index
   build, while the store is open) and the ``ann/`` directory.

**The embedder is ``hashing`` by default**: the local MiniLM model embeds about 500 texts a
second on this 2-core machine, 35 minutes for a million, and the query embedding (2.5 ms with
MiniLM) is not what grows with the store. ``--embedder minilm`` works for the smaller scenarios.
The hashing embedder's vectors are 384 floats like MiniLM's, so the store does the same work, but
they are the hard case for an approximate index: a question's nearest memories sit at a cosine of
about 0.4 (MiniLM: 0.7), in a space with no structure beyond shared words, where an HNSW graph
(this index's first design) needed a far wider search than with MiniLM's vectors: 0.966 at
expansion 1024 against 1.000 at 100,000. The int8 sketch does not depend on that structure: it
only has to keep the true neighbours among its first candidates, which rounding rarely upsets.
Read the recall here as a lower bound for a real model.

**The corpus** is `_corpus.generate_memories(n, seed)`, which rejects a sentence it already made:
at 1,000,000 it yields 1,000,000 distinct sentences, but the templates are near saturation there
(2.44 million draws for 1,000,000 distinct sentences, against 11,456 draws for 10,000), so many
stored sentences differ from another only in a number or a name, and a question has many
neighbours of near-equal cosine. Nothing is appended to the stored sentences: they are distinct
already. The fleet is the same million dealt round-robin (memory ``i`` to agent ``i mod agents``,
so each agent's memories span the whole year). Generating the corpus is timed apart from loading.

Figures are printed per scenario, then side by side, and written to
``benchmarks/results/scale[-...].json`` with the machine and the commit.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _corpus

TENANT = "bench"
AGENT = "bench-agent"
FLEET = "fleet"
WINDOW_DAYS = 30
WINDOW_KIND = "decision"
WARMUP = 5
#: Agents of the fleet searched before the timed searches, whose vectors stay cached (warm rows).
HOT_AGENTS = 50
RECALL_K = 10
TIE_TOLERANCE = 1e-6
WRITES = 20
POLL_S = 0.005
WRITE_TIMEOUT_S = 30.0
RESTARTS = 3
PROBE_MARK = "SCALE-PROBE "
DEFAULTS: dict[str, Any] = {
    "scenarios": "10000,100000,1000000,fleet",
    "queries": 200,
    "embedder": "hashing",
    "seed": _corpus.DEFAULT_SEED,
    "fleet_agents": 1000,
    "fleet_size": 1000,
}


@dataclass(frozen=True)
class Scenario:
    """``agents`` agents of ``size`` memories each."""

    name: str
    agents: tuple[str, ...]
    size: int

    @property
    def fleet(self) -> bool:
        return self.name == FLEET

    @property
    def total(self) -> int:
        return len(self.agents) * self.size

    def describe(self) -> str:
        if self.fleet:
            return f"fleet: {len(self.agents):,} agents x {self.size:,} memories ({self.total:,})"
        return f"{self.size:,} memories of one agent"


def scenario(name: str, args: argparse.Namespace) -> Scenario:
    if name == FLEET:
        agents = tuple(f"agent-{i:04d}" for i in range(args.fleet_agents))
        return Scenario(FLEET, agents, args.fleet_size)
    return Scenario(name, (AGENT,), int(name))


# --------------------------------------------------------------------------------------------
# Measuring helpers
# --------------------------------------------------------------------------------------------


def memory_now() -> dict[str, float]:
    """This process's resident memory now (``VmRSS``) and at its peak (``VmHWM``), in MB, and
    ``ru_maxrss`` (on Linux it starts from the parent's resident size at fork and survives exec,
    so in a child of a big process it says the parent's size; ``VmHWM`` is the process's own)."""
    status = dict(
        line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line
    )
    return {
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "rss_anon_mb": round(int(status["RssAnon"].split()[0]) / 1024, 1),
        "rss_file_mb": round(int(status["RssFile"].split()[0]) / 1024, 1),
        "peak_rss_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1),
        "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def disk_usage(data_dir: Path) -> dict[str, int]:
    """Bytes of the database, its WAL and shared-memory files, and the ``ann/`` directory."""

    def size(path: Path) -> int:
        return path.stat().st_size if path.exists() else 0

    ann = data_dir / "ann"
    return {
        "memory_db": size(data_dir / "memory.db"),
        "memory_db_wal": size(data_dir / "memory.db-wal"),
        "memory_db_shm": size(data_dir / "memory.db-shm"),
        "ann_dir": sum(p.stat().st_size for p in ann.rglob("*") if p.is_file()) if ann.exists() else 0,
        "ann_files": sum(1 for p in ann.rglob("*") if p.is_file()) if ann.exists() else 0,
    }


def evict_page_cache(data_dir: Path) -> int:
    """Drop this run's files from the page cache (flushed first: dirty pages stay); their bytes."""
    total = 0
    for path in data_dir.rglob("*"):
        if not path.is_file():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            with contextlib.suppress(OSError):
                os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    return total


def shapes(query: str) -> dict[str, dict[str, Any]]:
    """The search shapes of `search_latency.py`, as JSON bodies of the HTTP contract: the query
    alone, with a window and a kind, and naming one of the corpus's speakers (searched twice)."""
    as_of = _corpus.ANCHOR.isoformat().replace("+00:00", "Z")
    speaker = _corpus.SPEAKERS[sum(map(ord, query)) % len(_corpus.SPEAKERS)]
    return {
        "query": {"query": query},
        f"query+{WINDOW_DAYS}d+kind": {
            "query": query,
            "as_of": as_of,
            "max_days_ago": WINDOW_DAYS,
            "kinds": [WINDOW_KIND],
        },
        "query+speaker": {"query": f"{speaker} {query}"},
    }


def service_search(service: Any, agent: str, body: dict[str, Any]) -> tuple[float, int]:
    """One `SearchService.search`: ms and hits."""
    from agent_memory.contract.v1 import SearchRequest
    from agent_memory.observability import metrics

    request = SearchRequest.model_validate(body).to_query()
    started = time.perf_counter()
    response = service.search(TENANT, agent, request)
    elapsed_ms = (time.perf_counter() - started) * 1000
    metrics.clear_metrics()  # what the handler's flush does; left to grow, it prints every 100
    return elapsed_ms, len(response)


class Rows:
    """Latencies and hit counts per row label, in the order rows first appear."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {}
        self.hits: dict[str, list[int]] = {}

    def add(self, label: str, ms: float, hits: int) -> None:
        self.ms.setdefault(label, []).append(ms)
        self.hits.setdefault(label, []).append(hits)

    def summary(self) -> dict[str, dict[str, float]]:
        return {
            label: _corpus.summarize(values)
            | {"mean_hits": round(sum(self.hits[label]) / len(self.hits[label]), 2)}
            for label, values in self.ms.items()
        }


# --------------------------------------------------------------------------------------------
# One scenario, in its own process
# --------------------------------------------------------------------------------------------


def load(store: Any, embedder: Any, scenario_: Scenario, seed: int) -> dict[str, Any]:
    """Generate the corpus and load it, agent by agent; seconds per step."""
    started = time.perf_counter()
    memories = _corpus.with_speakers(_corpus.generate_memories(scenario_.total, seed=seed))
    corpus_s = time.perf_counter() - started
    print(f"  corpus: {len(memories):,} distinct memories in {corpus_s:.1f} s", file=sys.stderr)
    n_agents = len(scenario_.agents)
    loaded_at = time.perf_counter()
    totals = {"model_load_s": 0.0, "embed_s": 0.0, "put_s": 0.0}  # summed over the agents
    for i, agent in enumerate(scenario_.agents):
        part = memories[i::n_agents]
        if n_agents == 1:
            figures = _corpus.load_memories(store, embedder, part, TENANT, agent)
        else:
            with contextlib.redirect_stderr(io.StringIO()):  # its per-batch progress, per agent
                figures = _corpus.load_memories(store, embedder, part, TENANT, agent)
            if (i + 1) % 25 == 0 or i + 1 == n_agents:
                print(
                    f"\r  loaded {i + 1:,}/{n_agents:,} agents ({(i + 1) * scenario_.size:,} memories)",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
        for key in totals:
            totals[key] += figures[key]
    if n_agents > 1:
        print(file=sys.stderr)
    load_s = time.perf_counter() - loaded_at
    del memories
    gc.collect()
    return {
        "corpus_s": round(corpus_s, 2),
        "load_s": round(load_s, 2),
        "model_load_s": round(totals["model_load_s"], 2),
        "embed_s": round(totals["embed_s"], 2),
        "put_s": round(totals["put_s"], 2),
        "memories_per_s": round(scenario_.total / load_s, 1),
    }


def build_indexes(store: Any, scenario_: Scenario, min_vectors: int) -> dict[str, Any] | None:
    """Build the index of every agent at or above the threshold; None when none is."""
    if min_vectors <= 0 or scenario_.size < min_vectors:
        return None
    started = time.perf_counter()
    built = 0
    for agent in scenario_.agents:
        print(f"  building the vector index of {agent} ({scenario_.size:,} vectors)", file=sys.stderr)
        built += bool(store.build_vector_index(TENANT, agent))
    if not built:  # usearch missing: every agent is searched exactly
        print("  no vector index was built (is usearch installed?)", file=sys.stderr)
        return None
    return {"agents": built, "index_build_s": round(time.perf_counter() - started, 2)}


def measure_searches(
    service: Any, client: Any, scenario_: Scenario, queries: Sequence[str], seed: int
) -> dict[str, Any]:
    """The service and HTTP rows, interleaved (query i in every layer and shape, then i + 1)."""
    layers = (
        ("service", lambda agent, body: service_search(service, agent, body)),
        ("http keep-alive", lambda agent, body: _corpus.timed_http_search(client, agent, body)),
    )
    rows = Rows()
    warmups, timed = queries[:WARMUP], queries[WARMUP:]
    if not scenario_.fleet:
        first_ms, _ = service_search(service, AGENT, {"query": warmups[0]})
        for query in warmups[1:]:
            for _, search in layers:
                for body in shapes(query).values():
                    search(AGENT, body)
        for query in timed:
            for layer, search in layers:
                for shape, body in shapes(query).items():
                    rows.add(f"{layer}, {shape}", *search(AGENT, body))
        return {"first_search_ms": round(first_ms, 2), "latency_ms": rows.summary()}

    rng = random.Random(seed + 2)
    order = list(scenario_.agents)
    rng.shuffle(order)
    hot = order[: min(HOT_AGENTS, max(1, len(order) // 5))]
    fresh = iter(order[len(hot) :])
    first_ms, _ = service_search(service, hot[0], {"query": warmups[0]})
    for i, agent in enumerate(hot):  # every hot agent once, so that their vectors are cached
        service_search(service, agent, {"query": warmups[i % len(warmups)]})
    for query in warmups:
        for _, search in layers:
            search(rng.choice(hot), {"query": query})
    for query in timed:
        for layer, search in layers:
            for shape, body in shapes(query).items():
                agent = next(fresh, None)
                if agent is not None:
                    rows.add(f"{layer} cold agent, {shape}", *search(agent, body))
                rows.add(f"{layer} warm agent, {shape}", *search(rng.choice(hot), body))
    return {
        "first_search_ms": round(first_ms, 2),
        "hot_agents": len(hot),
        "latency_ms": dict(sorted(rows.summary().items(), key=lambda kv: "warm" in kv[0])),
    }


def choose_writes(store: Any, embedder: Any, agent: str, n: int, seed: int) -> list[_corpus.Memory]:
    """``n`` fresh memories: corpus sentences of another seed with a seeded tag appended (the
    templated corpus repeats itself at a million), none near a stored memory of ``agent`` or
    another chosen one (`_corpus.distinct_writes`)."""
    from dataclasses import replace

    rng = random.Random(seed + 7)
    letters = "bcdfghjklmnprstvz"
    candidates = [
        replace(
            m, content=f"{m.content} (check {''.join(rng.choices(letters, k=7))}-{rng.randint(100, 999)})"
        )
        for m in _corpus.generate_memories(40 * n, seed=seed + 7)
    ]
    return _corpus.distinct_writes(candidates, embedder, store, TENANT, agent, n)


def measure_writes(client: Any, agent: str, writes: Sequence[_corpus.Memory]) -> dict[str, Any]:
    runs = [_corpus.write_then_find(client, agent, m, POLL_S, WRITE_TIMEOUT_S) for m in writes]
    found = [r["searchable_ms"] for r in runs if r["searchable_ms"] is not None]
    return {
        "agent": agent,
        "writes": len(runs),
        "post_ms": _corpus.summarize([r["post_ms"] for r in runs]),
        "write_to_searchable_ms": _corpus.summarize(found) if found else None,
        "not_found_within_timeout": len(runs) - len(found),
        "searches_per_write": _corpus.summarize([len(r["polls"]) for r in runs]),
    }


def measure_recall(store: Any, embedder: Any, settings: Any, queries: Sequence[str]) -> dict[str, Any]:
    """Tie-aware recall@10 of the indexed store against exact search over the same file, and the
    store-level latency of both."""
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
    from agent_memory.ports import StoreQuery

    exact = SqliteMemoryStore(
        settings.sqlite_path, dimension=embedder.dimension, model_id=embedder.model_id, ann_min_vectors=0
    )
    try:
        vectors = embedder.embed(list(queries))
        now = datetime.now(UTC)

        def ask(s: Any, vector: Any) -> tuple[float, list[float]]:
            started = time.perf_counter()
            hits = s.search(StoreQuery(TENANT, AGENT, now, vector=vector, limit=RECALL_K))
            return (time.perf_counter() - started) * 1000, [float(c.similarity) for c in hits]

        exact_first_ms, _ = ask(exact, vectors[0])  # reads every vector of the agent
        for vector in vectors[1:WARMUP]:
            ask(exact, vector)
            ask(store, vector)
        recalls: list[float] = []
        approx_ms: list[float] = []
        exact_ms: list[float] = []
        for vector in vectors[WARMUP:]:
            ms, approx = ask(store, vector)
            approx_ms.append(ms)
            ms, truth = ask(exact, vector)
            exact_ms.append(ms)
            k = min(RECALL_K, len(truth))
            if k == 0:
                recalls.append(1.0)
                continue
            bar = sorted(truth, reverse=True)[k - 1] - TIE_TOLERANCE
            recalls.append(min(k, sum(s >= bar for s in approx[:RECALL_K])) / k)
        memory_with_exact = memory_now()
    finally:
        exact.close()
    return {
        "queries": len(recalls),
        "mean_recall": round(statistics.fmean(recalls), 4),
        "share_perfect": round(sum(r == 1.0 for r in recalls) / len(recalls), 4),
        "min_recall": min(recalls),
        "approx_store_ms": _corpus.summarize(approx_ms),
        "exact_store_ms": _corpus.summarize(exact_ms),
        "exact_first_search_ms": round(exact_first_ms, 1),
        "memory_with_exact_store": memory_with_exact,
    }


#: The fresh process of a restart: imports the app, opens the store and the search service, and
#: times its first searches. Prints one line of JSON after `PROBE_MARK`.
PROBE = """
import time
started = time.time()
import json, resource, sys
from pathlib import Path


def memory():
    status = dict(l.split(":", 1) for l in Path("/proc/self/status").read_text().splitlines() if ":" in l)
    return {
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "rss_anon_mb": round(int(status["RssAnon"].split()[0]) / 1024, 1),
        "rss_file_mb": round(int(status["RssFile"].split()[0]) / 1024, 1),
        "peak_rss_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1),
    }


spawned = float(sys.argv[1])
mark, tenant, agent, other = sys.argv[2:6]
questions = sys.argv[6:9]
from agent_memory import container
from agent_memory.contract.v1 import SearchRequest

imported = time.time()
store = container.store()
service = container.api_services().search
opened = time.time()
before = memory()
searches = [(agent, questions[0]), (agent, questions[1])] + ([(other, questions[2])] if other else [])
ms, hits = [], []
for who, question in searches:
    t0 = time.perf_counter()
    hits.append(len(service.search(tenant, who, SearchRequest(query=question).to_query())))
    ms.append((time.perf_counter() - t0) * 1000)
    if len(ms) == 1:
        after_first = memory()
store.close()
print(mark + json.dumps({
    "python_start_ms": (started - spawned) * 1000,
    "imports_ms": (imported - started) * 1000,
    "open_ms": (opened - imported) * 1000,
    "start_to_open_ms": (opened - spawned) * 1000,
    "first_search_ms": ms[0],
    "second_search_ms": ms[1],
    "other_agent_first_search_ms": ms[2] if other else None,
    "hits": hits,
    "memory_before_search": before,
    "memory_after_first_search": after_first,
}))
"""


def restart_probe(agent: str, other: str, questions: Sequence[str]) -> dict[str, Any]:
    """One fresh interpreter's start, store opening and first searches (see `PROBE`)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, repr(time.time()), PROBE_MARK, TENANT, agent, other, *questions[:3]],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith(PROBE_MARK):
            return json.loads(line.removeprefix(PROBE_MARK))
    raise RuntimeError(f"the restart probe failed ({done.returncode}): {done.stderr[-2000:]}")


def measure_restarts(
    data_dir: Path, scenario_: Scenario, queries: Sequence[str], seed: int
) -> dict[str, Any]:
    """`RESTARTS` fresh processes with the page cache as the run left it, then `RESTARTS` with the
    scenario's files evicted from it first."""
    rng = random.Random(seed + 3)
    out: dict[str, Any] = {}
    for variant in ("page_cache_warm", "files_evicted"):
        runs = []
        for _ in range(RESTARTS):
            agent, other = (rng.sample(scenario_.agents, 2)) if scenario_.fleet else (AGENT, "")
            if variant == "files_evicted":
                evict_page_cache(data_dir)
            runs.append(restart_probe(agent, other, rng.sample(list(queries), 3)))
        out[variant] = {
            "runs": runs,
            "median": {
                key: round(statistics.median(r[key] for r in runs), 1)
                for key in runs[0]
                if isinstance(runs[0][key], float)
            },
            "memory_after_first_search_median": {
                key: round(statistics.median(r["memory_after_first_search"][key] for r in runs), 1)
                for key in ("rss_mb", "rss_anon_mb", "rss_file_mb", "peak_rss_mb")
            },
        }
    return out


def run_one(args: argparse.Namespace, scenario_: Scenario, data_dir: Path) -> dict[str, Any]:
    """Everything of one scenario (the module docstring's steps), in this process."""
    run_started = time.perf_counter()
    _corpus.configure_environment(data_dir, args.embedder)
    from agent_memory import container
    from agent_memory.local.server import LocalRuntime
    from agent_memory.settings import get_settings
    from agent_memory.tenancy.rules.keys import NewKey

    # Powertools warns when a request added no metric (not a problem here; they are disabled).
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    container.reset()
    settings = get_settings()
    embedder, store = container.embedder(), container.store()
    print(
        f"scenario {scenario_.name}: {scenario_.describe()}, {embedder.model_id}, into {data_dir}",
        file=sys.stderr,
    )
    result: dict[str, Any] = {
        "scenario": scenario_.name,
        "agents": len(scenario_.agents),
        "memories_per_agent": scenario_.size,
        "memories": scenario_.total,
        "embedder": embedder.model_id,
        "ann_min_vectors": settings.ann_min_vectors,
        # Per scenario: a long run may span commits (the orchestrator records the last one).
        "code": _corpus.code_version(),
    }
    result["load"] = load(store, embedder, scenario_, args.seed)
    result["index"] = build_indexes(store, scenario_, settings.ann_min_vectors)
    result["disk_bytes"] = disk_usage(data_dir)
    queries = _corpus.generate_queries(args.queries + WARMUP, seed=args.seed + 1)

    print(f"  searching: {args.queries} queries after {WARMUP} warm-ups, service and HTTP", file=sys.stderr)
    _corpus.import_handlers()
    runtime = LocalRuntime(settings, host="127.0.0.1", port=0, scheduler=False)
    _, key = runtime.keys.create(NewKey(TENANT, "pro"))
    runtime.start()
    client = _corpus.KeepAliveClient(runtime.url, key)
    stray = io.StringIO()
    try:
        with contextlib.redirect_stdout(stray):  # see `_corpus.note_stray_output`
            result["search"] = measure_searches(
                container.api_services().search, client, scenario_, queries, args.seed
            )
            result["memory_after_searches"] = memory_now()
            writer_agent = AGENT if not scenario_.fleet else scenario_.agents[0]
            print(f"  {WRITES} writes, each searched for until found ({writer_agent})", file=sys.stderr)
            writes = choose_writes(store, embedder, writer_agent, WRITES, args.seed)
            result["write_to_searchable"] = measure_writes(client, writer_agent, writes)
    finally:
        client.close()
        runtime.stop()
        _corpus.note_stray_output(stray.getvalue())

    if result["index"] is not None and not scenario_.fleet:
        print("  recall of the index against exact search", file=sys.stderr)
        result["recall"] = measure_recall(store, embedder, settings, queries)
    store.close()  # type: ignore[attr-defined]
    container.reset()
    gc.collect()

    print(f"  {2 * RESTARTS} restarts: a fresh process's first searches", file=sys.stderr)
    result["restart"] = measure_restarts(data_dir, scenario_, queries, args.seed)
    result["wall_s"] = round(time.perf_counter() - run_started, 1)
    return result


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MB"


def report(r: dict[str, Any]) -> str:
    load_, index, search = r["load"], r["index"], r["search"]
    title = (
        f"fleet: {r['agents']:,} agents x {r['memories_per_agent']:,} memories"
        if r["scenario"] == FLEET
        else f"{r['memories']:,} memories of one agent"
    )
    lines = [
        f"=== {title} ({r['embedder']}; vector index from {r['ann_min_vectors']:,} vectors) ===",
        f"load: {load_['load_s']:.1f} s (embed {load_['embed_s']:.1f} s + store {load_['put_s']:.1f} s; "
        f"{load_['memories_per_s']:,.0f} memories/s); corpus generated in {load_['corpus_s']:.1f} s",
        "index build: "
        + ("none (every agent below the threshold)" if index is None else f"{index['index_build_s']:.1f} s"),
        f"first search after the load, in process: {search['first_search_ms']:.1f} ms"
        + (f"; warm rows over a hot set of {search['hot_agents']} agents" if "hot_agents" in search else ""),
        "",
    ]
    rows = [(label, s) for label, s in search["latency_ms"].items()]
    recall = r.get("recall")
    if recall:
        rows += [
            ("store, approximate (vector only)", recall["approx_store_ms"]),
            ("store, exact (vector only)", recall["exact_store_ms"]),
        ]
    lines.append(_corpus.table(rows))
    hits = ", ".join(f"{label} {s['mean_hits']:g}" for label, s in search["latency_ms"].items())
    lines.append(f"mean hits: {hits}")
    if recall:
        lines.append(
            f"recall@{RECALL_K} (tie-aware) over {recall['queries']} queries: "
            f"mean {recall['mean_recall']:.4f}, "
            f"{recall['share_perfect']:.1%} perfect, min {recall['min_recall']:.2f}; "
            f"exact store's first search {recall['exact_first_search_ms']:.0f} ms"
        )
    lines.append("")
    for variant, label in (("page_cache_warm", "page cache warm"), ("files_evicted", "files evicted")):
        v = r["restart"][variant]
        m, mem = v["median"], v["memory_after_first_search_median"]
        firsts = ", ".join(f"{run['first_search_ms']:.0f}" for run in v["runs"])
        other = (
            f", another agent's first {m['other_agent_first_search_ms']:.1f} ms"
            if "other_agent_first_search_ms" in m
            else ""
        )
        lines.append(
            f"restart ({label}, median of {len(v['runs'])}): FIRST SEARCH {m['first_search_ms']:.1f} ms "
            f"(runs {firsts}), second {m['second_search_ms']:.1f} ms{other}; "
            f"start to store open {m['start_to_open_ms']:.0f} ms (python {m['python_start_ms']:.0f} + "
            f"imports {m['imports_ms']:.0f} + open {m['open_ms']:.0f}); "
            f"RSS after first search {mem['rss_mb']:.0f} MB (anonymous {mem['rss_anon_mb']:.0f} + "
            f"mapped files {mem['rss_file_mb']:.0f}; peak {mem['peak_rss_mb']:.0f} MB)"
        )
    after = r["memory_after_searches"]
    lines.append(
        f"this process after the searches: RSS {after['rss_mb']:.0f} MB (anonymous "
        f"{after['rss_anon_mb']:.0f} + mapped files {after['rss_file_mb']:.0f}), "
        f"peak {after['peak_rss_mb']:.0f} MB"
        + (
            f"; with the exact store loaded: RSS {recall['memory_with_exact_store']['rss_mb']:.0f} MB"
            if recall
            else ""
        )
    )
    d = r["disk_bytes"]
    lines.append(
        f"disk: memory.db {_mb(d['memory_db'])} "
        f"(+ wal {_mb(d['memory_db_wal'])}, shm {_mb(d['memory_db_shm'])}), "
        f"ann/ {_mb(d['ann_dir'])} in {d['ann_files']} files"
    )
    w = r["write_to_searchable"]
    write_rows = [("POST (202)", w["post_ms"])]
    if w["write_to_searchable_ms"]:
        write_rows.append(("write -> searchable", w["write_to_searchable_ms"]))
    lines += [
        "",
        f"{w['writes']} writes to {w['agent']}, polling every {POLL_S * 1000:g} ms:",
        _corpus.table(write_rows),
        f"searches per write until found: p50 {w['searches_per_write']['p50']:g}, "
        f"max {w['searches_per_write']['max']:g}; not found within {WRITE_TIMEOUT_S:g} s: "
        f"{w['not_found_within_timeout']}",
    ]
    return "\n".join(lines)


def overview(results: Sequence[dict[str, Any]]) -> str:
    """The scenarios side by side: the figures a reader compares."""

    def row_of(r: dict[str, Any], label: str) -> dict[str, float] | None:
        rows = r["search"]["latency_ms"]
        return rows.get(label) or rows.get(label.replace("service", "service cold agent"))

    head = (
        f"{'scenario':<10} {'load s':>7} {'index s':>8} {'svc p50':>8} {'svc p95':>8} {'svc p99':>8} "
        f"{'http p95':>9} {'recall':>7} {'restart 1st':>12} {'evicted 1st':>12} {'restart RSS':>12} "
        f"{'disk MB':>8} {'w->s p50':>9}"
    )
    lines = ["service and HTTP rows: the query alone (fleet: a cold agent); restart: median ms", head]
    for r in results:
        svc = row_of(r, "service, query") or {}
        http = r["search"]["latency_ms"].get("http keep-alive, query") or r["search"]["latency_ms"].get(
            "http keep-alive cold agent, query", {}
        )
        recall = r.get("recall")
        recall_text = f"{recall['mean_recall']:.4f}" if recall else "-"
        restart, evicted = r["restart"]["page_cache_warm"], r["restart"]["files_evicted"]
        d = r["disk_bytes"]
        disk = (d["memory_db"] + d["memory_db_wal"] + d["memory_db_shm"] + d["ann_dir"]) / 1024 / 1024
        w = r["write_to_searchable"]["write_to_searchable_ms"]
        lines.append(
            f"{r['scenario']:<10} {r['load']['load_s']:>7.1f} "
            f"{(r['index'] or {}).get('index_build_s', 0.0):>8.1f} "
            f"{svc.get('p50', float('nan')):>8.1f} {svc.get('p95', float('nan')):>8.1f} "
            f"{svc.get('p99', float('nan')):>8.1f} {http.get('p95', float('nan')):>9.1f} "
            f"{recall_text:>7} "
            f"{restart['median']['first_search_ms']:>12.1f} {evicted['median']['first_search_ms']:>12.1f} "
            f"{restart['memory_after_first_search_median']['rss_mb']:>9.0f} MB "
            f"{disk:>8.0f} {(w['p50'] if w else float('nan')):>9.1f}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Main: one process per scenario
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def scenario_dir(keep: bool) -> Iterator[Path]:
    data_dir = Path(tempfile.mkdtemp(prefix="agent-memory-scale-"))
    try:
        yield data_dir
    finally:
        if keep:
            print(f"kept {data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def options(args: argparse.Namespace) -> list[str]:
    """The options a scenario's process is started with (the same as this one's)."""
    return [
        f"--queries={args.queries}",
        f"--embedder={args.embedder}",
        f"--seed={args.seed}",
        f"--fleet-agents={args.fleet_agents}",
        f"--fleet-size={args.fleet_size}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenarios",
        default=DEFAULTS["scenarios"],
        help="comma-separated memory counts of one agent, and/or 'fleet' (default %(default)s)",
    )
    parser.add_argument("--queries", type=int, default=DEFAULTS["queries"], help="timed searches per row")
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default=DEFAULTS["embedder"])
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="corpus seed")
    parser.add_argument(
        "--fleet-agents", type=int, default=DEFAULTS["fleet_agents"], help="agents of the fleet"
    )
    parser.add_argument(
        "--fleet-size", type=int, default=DEFAULTS["fleet_size"], help="memories per fleet agent"
    )
    parser.add_argument("--keep", action="store_true", help="keep each scenario's data directory")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # run one scenario (in its own process)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    if not names or any(n != FLEET and not (n.isdigit() and int(n) >= 1) for n in names):
        parser.error("--scenarios: memory counts (positive integers) and/or 'fleet', comma-separated")
    if args.queries < 1 or args.fleet_agents < 2 or args.fleet_size < 1:
        parser.error("--queries >= 1, --fleet-agents >= 2 and --fleet-size >= 1, please")

    if args.one is not None:
        result = run_one(args, scenario(args.one, args), args.data_dir)
        args.out.write_text(json.dumps(result))
        return 0

    load_at_start, started = _corpus.at_start(), time.perf_counter()
    results: list[dict[str, Any]] = []
    name = _corpus.result_name(
        "scale",
        {k: getattr(args, k) for k in DEFAULTS} | {"scenarios": "+".join(names)},
        DEFAULTS | {"scenarios": DEFAULTS["scenarios"].replace(",", "+")},
    )
    for scenario_name in names:
        with scenario_dir(args.keep) as data_dir, tempfile.NamedTemporaryFile(suffix=".json") as out:
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    f"--one={scenario_name}",
                    f"--data-dir={data_dir}",
                    f"--out={out.name}",
                    *options(args),
                ],
                check=False,
            )
            if done.returncode != 0:
                print(f"scenario {scenario_name} failed ({done.returncode})", file=sys.stderr)
                return done.returncode
            results.append(json.loads(Path(out.name).read_text()))
        print(report(results[-1]), flush=True)
        print(flush=True)
        payload = {
            **_corpus.result_header("scale", started, load_at_start),
            "params": {
                "scenarios": names,
                "queries": args.queries,
                "warmup": WARMUP,
                "embedder": args.embedder,
                "seed": args.seed,
                "fleet_agents": args.fleet_agents,
                "fleet_size": args.fleet_size,
                "hot_agents": min(HOT_AGENTS, max(1, args.fleet_agents // 5)),
                "window": {
                    "max_days_ago": WINDOW_DAYS,
                    "kinds": [WINDOW_KIND],
                    "as_of": _corpus.ANCHOR.isoformat(),
                },
                "max_results": 10,
                "recall_k": RECALL_K,
                "tie_tolerance": TIE_TOLERANCE,
                "writes": WRITES,
                "poll_ms": POLL_S * 1000,
                "restarts_per_variant": RESTARTS,
            },
            "scenarios": {r["scenario"]: r for r in results},
        }
        path = _corpus.write_result(name, payload)  # after every scenario: a failed run keeps the rest
    print(overview(results))
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
