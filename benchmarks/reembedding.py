"""A tenant's change of embedding model on the local store: how fast the re-embedding job moves its
memories, and what a search costs in the tenant's own space against the deployment's.

    python benchmarks/reembedding.py [--n 10000] [--embedder hashing|minilm] [--queries 100]

1. **Load** ``--n`` synthetic memories (`_corpus`) of one agent, embedded by the deployment's
   model (the hashing embedder at 384 dimensions: the model's own speed is not the subject).
2. **Re-embed** them with ``--embedder`` as the tenant's model, through `ReembedService.run` (the
   job: pages of 64 read from the store, embedded, stored if unchanged), run by run until nothing
   is missing; timed in all and split into the model's time and the rest (the store's reads and
   writes, the state's saves). Then the switch, a cache lifetime later.
3. **Search** ``--queries`` questions by `SearchService.search` before the move (the deployment's
   space) and after it (the tenant's space, searched exactly), and once right after a write in
   each (the tenant's space reloads the agent's matrix when it changed; the deployment's merges
   the new rows).

Figures are printed and written to ``benchmarks/results/reembedding[-...].json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import _corpus

TENANT, AGENT = "bench", "bench-agent"
DEFAULTS: dict[str, Any] = {"n": 10_000, "embedder": "hashing", "queries": 100, "seed": _corpus.DEFAULT_SEED}


class _Jobs:
    def __init__(self) -> None:
        self.sent = 0

    def send(self, jobs: Sequence[Any], delay_s: int = 0) -> None:
        self.sent += len(jobs)


class _TimedEmbedder:
    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds = inner, 0.0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


class _Clock:
    def __init__(self) -> None:
        self.at = _corpus.ANCHOR

    def now(self) -> Any:
        return self.at


class _Bench:
    """The store loaded with the deployment's model, and the services of one tenant's move."""

    def __init__(self, args: argparse.Namespace) -> None:
        from agent_memory.adapters.embedders.hashing import HashingEmbedder
        from agent_memory.adapters.embedders.minilm import MiniLmEmbedder
        from agent_memory.adapters.local_secrets import LocalFileSecretStore
        from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
        from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore
        from agent_memory.recall.rules.ranking import RankingWeights
        from agent_memory.recall.search import SearchService
        from agent_memory.tenancy.models import TenantEmbedders
        from agent_memory.tenancy.reembed import ReembedService
        from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider
        from agent_memory.tenancy.settings import SettingsCache

        self.args = args
        workdir = Path(tempfile.mkdtemp(prefix="reembed-"))
        deployment = HashingEmbedder(384)
        self.store = SqliteMemoryStore(workdir / "memory.db", dimension=384, model_id=deployment.model_id)
        memories = _corpus.generate_memories(args.n, seed=args.seed)
        self.load = _corpus.load_memories(self.store, deployment, memories, TENANT, AGENT)
        settings_store = SqliteTenantSettingsStore(workdir / "tenant_settings.db")
        cache = SettingsCache(settings_store, ttl_s=60, states=settings_store)
        minilm = args.embedder == "minilm"
        self.choice = ModelChoice(
            provider=ModelProvider.LOCAL, model=args.embedder, dimension=None if minilm else 256
        )
        self.model = _TimedEmbedder(MiniLmEmbedder() if minilm else HashingEmbedder(256))
        self.model.embed(["load the model"])
        self.model.seconds = 0.0
        secrets = LocalFileSecretStore(workdir / "secrets")
        self.embedders = TenantEmbedders(deployment, cache, secrets, lambda c, k: self.model)
        self.clock = _Clock()
        self.reembed = ReembedService(
            self.store,
            settings_store,
            cache,
            self.embedders,
            _Jobs(),
            self.clock,  # type: ignore[arg-type]
        )
        self.search = SearchService(
            self.store,
            deployment,
            self.clock,
            RankingWeights(),
            settings=cache,
            embedders=self.embedders,  # type: ignore[arg-type]
        )
        self.queries = _corpus.generate_queries(args.queries, seed=args.seed + 1)

    def searches(self) -> dict[str, float]:
        from agent_memory.model.queries import SearchQuery

        spent = []
        for q in self.queries:
            started = time.perf_counter()
            self.search.search(TENANT, AGENT, SearchQuery(query=q, max_results=10))
            spent.append((time.perf_counter() - started) * 1000)
        return _corpus.summarize(spent)

    def search_after_a_write(self, seed: int) -> float:
        """One memory written in every space the tenant writes, then one search (ms)."""
        from agent_memory.model.queries import SearchQuery
        from agent_memory.ports import SpaceVector, StoredRecord

        [record] = _corpus.records_of(_corpus.generate_memories(1, seed=seed), TENANT, AGENT, self.clock.at)
        made = {
            w.space: w.embedder.embed([record.content])[0] for w in self.embedders.for_tenant(TENANT).writes
        }
        spaces = tuple(SpaceVector(space, v) for space, v in made.items() if space)
        self.store.put([StoredRecord(record, made.get(""), spaces)])
        started = time.perf_counter()
        self.search.search(TENANT, AGENT, SearchQuery(query=self.queries[0], max_results=10))
        return round((time.perf_counter() - started) * 1000, 2)

    def move(self) -> dict[str, Any]:
        """The job, run by run until nothing is missing, then the switch a cache lifetime later."""
        from agent_memory.tenancy.rules.embedding_spaces import ReembedJob

        self.reembed.start(TENANT, self.choice)
        started, runs = time.perf_counter(), 0
        while True:
            runs += 1
            if self.reembed.run(ReembedJob(tenant_id=TENANT)).remaining == 0:
                break
        seconds = time.perf_counter() - started
        self.clock.at += timedelta(seconds=62)
        assert self.reembed.run(ReembedJob(tenant_id=TENANT)).switched
        total = self.store.count_missing(TENANT, "")  # nothing: every memory has both vectors still
        records = self.args.n + 1
        return {
            "records": records,
            "runs": runs,
            "seconds": round(seconds, 2),
            "records_per_s": round(records / seconds, 1),
            "model_s": round(self.model.seconds, 2),
            "store_and_state_s": round(seconds - self.model.seconds, 2),
            "deployment_vectors_missing_at_switch": total,
        }


def run(args: argparse.Namespace) -> dict[str, Any]:
    bench = _Bench(args)
    before = bench.searches()
    before_write = bench.search_after_a_write(args.seed + 10_000)
    moved = bench.move()
    after = bench.searches()
    after_write = bench.search_after_a_write(args.seed + 20_000)
    return {
        "benchmark": "reembedding",
        "parameters": vars(args),
        "load": bench.load,
        "reembedding": moved,
        "search_ms_deployment_space": before,
        "search_ms_tenant_space": after,
        "first_search_after_a_write_ms": {"deployment_space": before_write, "tenant_space": after_write},
        "machine": _corpus.machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=DEFAULTS["n"])
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default=DEFAULTS["embedder"])
    parser.add_argument("--queries", type=int, default=DEFAULTS["queries"])
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    args = parser.parse_args()
    # Before the app's modules are imported: Powertools reads its settings when they are.
    _corpus.configure_environment(Path(tempfile.mkdtemp(prefix="reembed-env-")), "hashing")
    result = run(args)
    r = result["reembedding"]
    print(
        f"re-embedded {r['records']:,} memories in {r['seconds']} s ({r['records_per_s']}/s; "
        f"model {r['model_s']} s, store and state {r['store_and_state_s']} s) in {r['runs']} runs"
    )
    for label in ("search_ms_deployment_space", "search_ms_tenant_space"):
        s = result[label]
        print(f"{label}: p50 {s['p50']} ms, p95 {s['p95']} ms")
    print(f"first search after a write: {result['first_search_after_a_write_ms']}")
    path = _corpus.write_result(_corpus.result_name("reembedding", vars(args), DEFAULTS), result)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
