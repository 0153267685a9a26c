"""Search latency over one agent's memory, in the service and end to end through the local HTTP API.

    python benchmarks/search_latency.py [--n 10000] [--passages 2000] [--queries 200]
                                        [--embedder minilm|minilm-memory|hashing] [--data-dir DIR]
                                        [--warmup 5] [--seed S] [--answer-judge minilm|none]

What it does, and why that way:

1. **Load** ``--n`` synthetic memories (`_corpus`) of one agent into a fresh local store: embedded
   in batches with the configured embedder and stored with `SqliteMemoryStore.put`. That skips
   the HTTP write path and the queue on purpose (their cost is `write_to_searchable.py`'s
   subject); embedding and storing are timed separately.
2. **Service level**: `SearchService.search`, the code every search runs, with a query alone and
   with a query, a 30-day window and a kind filter (the rows are then chosen in SQL first), and a
   query over both sources (``sources: ["private", "shared"]``: memories and passages ranked in
   one list, a second store search on the knowledge tables), and a query that names the person
   who said a conversation turn (the corpus's turns have four speakers; the store is asked again
   with the name out of the words matched). The embedder and the store are wrapped in timers, so
   the run also tells where a search spends its time: embedding the query, the store's search,
   the access bookkeeping, and the rest (scoring, building the response).
3. **End to end**: the same searches as ``POST /v1/agents/{agent}/memories/search`` to a
   `LocalRuntime` started in this process on 127.0.0.1 (a free port), with a real API key, from
   two clients: ``urllib`` (a new connection per request, as most scripts call an API) and
   ``http.client`` over one keep-alive connection (the row that shows a response held back by
   Nagle's algorithm, should the server's TCP_NODELAY ever go).

The first search after the load is reported on its own: it builds the agent's vector cache, which
every write to the agent invalidates again. A few warm-up searches follow; then each of
``--queries`` questions (drawn from the corpus's subjects, never a stored sentence) is timed in
every layer, client and shape, interleaved, so that load from elsewhere falls on every row alike.
Figures are printed and written to ``benchmarks/results/search_latency[-...].json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _corpus
from _opensearch import use_opensearch_store
from agent_memory.tenancy.rules.keys import NewKey

TENANT = "bench"
AGENT = "bench-agent"
WINDOW_DAYS = 30
WINDOW_KIND = "decision"
DEFAULTS: dict[str, Any] = {
    "n": 10_000,
    "passages": 2_000,
    "queries": 200,
    "embedder": "minilm",
    "seed": _corpus.DEFAULT_SEED,
    "store": "sqlite",
    "answer_judge": "none",
}


class _Timed:
    """Accumulates the seconds spent in calls it wraps, per label (reset per search)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def call(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - started


class _TimedEmbedder:
    def __init__(self, inner: Any, timer: _Timed) -> None:
        self._inner, self._timer = inner, timer
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Any:
        return self._timer.call("embed", self._inner.embed, texts)


class _TimedStore:
    def __init__(self, inner: Any, timer: _Timed) -> None:
        self._inner, self._timer = inner, timer

    def search(self, query: Any) -> Any:
        return self._timer.call("store_search", self._inner.search, query)

    def record_access(self, *args: Any) -> None:
        self._timer.call("record_access", self._inner.record_access, *args)

    def search_passages(self, query: Any) -> Any:
        return self._timer.call("knowledge_search", self._inner.search_passages, query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _requests(queries: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The two search shapes, as JSON bodies of the HTTP contract."""
    as_of = _corpus.ANCHOR.isoformat().replace("+00:00", "Z")
    return {
        "query": [{"query": q} for q in queries],
        f"query+{WINDOW_DAYS}d+kind": [
            {"query": q, "as_of": as_of, "max_days_ago": WINDOW_DAYS, "kinds": [WINDOW_KIND]} for q in queries
        ],
        "query+shared": [{"query": q, "sources": ["private", "shared"]} for q in queries],
        # naming who said it: the store is asked again without the name (`recall.search`)
        "query+speaker": [
            {"query": f"{_corpus.SPEAKERS[i % len(_corpus.SPEAKERS)]} {q}"} for i, q in enumerate(queries)
        ],
    }


#: Sections per synthetic document of shared knowledge.
SECTIONS = 20


def load_passages(store: Any, embedder: Any, n: int, seed: int) -> dict[str, float]:
    """``n`` passages of shared knowledge (``n / SECTIONS`` documents of ``SECTIONS`` sections,
    each section one synthetic sentence under its heading), split, embedded and stored as the
    writer does; the seconds it took."""
    from agent_memory.knowledge.rules.passages import KnowledgeDocument, document_hash, passages_of
    from agent_memory.ports import StoredPassage

    started = time.perf_counter()
    sentences = [m.content for m in _corpus.generate_memories(n, seed=seed + 7)]
    for d in range(0, n, SECTIONS):
        text = "\n\n".join(f"## Section {i}\n{s}" for i, s in enumerate(sentences[d : d + SECTIONS]))
        document = KnowledgeDocument(
            tenant_id=TENANT,
            doc_id=f"doc-{d // SECTIONS}",
            version="v1",
            title=f"Handbook {d // SECTIONS}",
            text=text,
            content_hash=document_hash(text),
            created_at=_corpus.ANCHOR,
            updated_at=_corpus.ANCHOR,
        )
        passages = passages_of(document)
        vectors = embedder.embed([p.embedded_text for p in passages])
        stored = [StoredPassage(p, v) for p, v in zip(passages, vectors, strict=True)]
        store.put_document(document.model_copy(update={"passages": len(passages)}), stored)
    return {"passages_s": round(time.perf_counter() - started, 2)}


def timed_service_search(
    service: Any, timer: _Timed, body: dict[str, Any]
) -> tuple[float, dict[str, float], int]:
    """One `SearchService.search`: total ms, ms per wrapped step (and the rest), and hits."""
    from agent_memory.contract.v1 import SearchRequest
    from agent_memory.observability import metrics

    request = SearchRequest.model_validate(body).to_query()
    timer.spent.clear()
    started = time.perf_counter()
    response = service.search(TENANT, AGENT, request)
    total_ms = (time.perf_counter() - started) * 1000
    metrics.clear_metrics()  # what the handler's flush does; left to grow, it prints every 100
    split = {k: v * 1000 for k, v in timer.spent.items()}
    split["other"] = total_ms - sum(split.values())
    return total_ms, split, len(response)


def _split_summary(splits: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    total = sum(sum(s.values()) for s in splits)
    labels = ("embed", "store_search", "knowledge_search", "record_access", "other")
    return {
        label: {
            "mean_ms": round(sum(s.get(label, 0.0) for s in splits) / len(splits), 3),
            "share": round(sum(s.get(label, 0.0) for s in splits) / total, 3),
        }
        for label in labels
        if any(label in s for s in splits)
    }


class _Samples:
    """Latencies and hit counts per (layer, shape), the warm-up searches left out."""

    def __init__(self, warmup: int) -> None:
        self.warmup = warmup
        self.ms: dict[tuple[str, str], list[float]] = {}
        self.hits: dict[tuple[str, str], list[int]] = {}
        self.splits: dict[str, list[dict[str, float]]] = {}

    def add(
        self, i: int, layer: str, shape: str, ms: float, hits: int, split: dict[str, float] | None = None
    ) -> None:
        if i < self.warmup:
            return
        self.ms.setdefault((layer, shape), []).append(ms)
        self.hits.setdefault((layer, shape), []).append(hits)
        if split is not None:
            self.splits.setdefault(shape, []).append(split)

    def latency(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for (layer, shape), values in self.ms.items():
            out.setdefault(layer, {})[shape] = _corpus.summarize(values)
        return out

    def mean_hits(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for (layer, shape), values in self.hits.items():
            out.setdefault(layer, {})[shape] = round(sum(values) / len(values), 2)
        return out


def measure(
    service: Any, timer: _Timed, settings: Any, shapes: dict[str, list[dict[str, Any]]], samples: _Samples
) -> None:
    """Every search of the table, interleaved: query i in each layer, client and shape, then i + 1.

    So that load from elsewhere on the machine (and the machine's own drift) falls on every row
    alike, and the rows can be compared with each other.
    """
    from agent_memory.local.server import LocalRuntime

    _corpus.import_handlers()
    runtime = LocalRuntime(settings, host="127.0.0.1", port=0)
    _, key = runtime.keys.create(NewKey(TENANT, "pro"))
    runtime.start()
    clients = [_corpus.NewConnectionClient(runtime.url, key), _corpus.KeepAliveClient(runtime.url, key)]
    stray = io.StringIO()
    try:
        with contextlib.redirect_stdout(stray):  # see `_corpus.note_stray_output`
            for i in range(len(next(iter(shapes.values())))):
                for shape, bodies in shapes.items():
                    ms, split, hits = timed_service_search(service, timer, bodies[i])
                    samples.add(i, "service", shape, ms, hits, split)
                for client in clients:
                    for shape, bodies in shapes.items():
                        ms, hits = _corpus.timed_http_search(client, AGENT, bodies[i])
                        samples.add(i, f"http {client.name}", shape, ms, hits)
    finally:
        for client in clients:
            client.close()
        runtime.stop()
    _corpus.note_stray_output(stray.getvalue())


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.at_start(), time.perf_counter()
    _corpus.configure_environment(data_dir, args.embedder)
    from agent_memory import container
    from agent_memory.adapters.clock import SystemClock
    from agent_memory.contract.v1 import SearchRequest
    from agent_memory.recall.search import SearchService
    from agent_memory.settings import get_settings

    # Powertools warns when a request added no metric (not a problem here; they are disabled).
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    container.reset()
    if args.store == "opensearch":
        use_opensearch_store("latency")
    settings = get_settings()
    embedder, store = container.embedder(), container.store()

    memories = _corpus.with_speakers(_corpus.generate_memories(args.n, seed=args.seed))
    queries = _corpus.generate_queries(args.queries + args.warmup, seed=args.seed + 1)
    print(f"loading {args.n:,} memories with {embedder.model_id}, {settings.store} store", file=sys.stderr)
    loaded = _corpus.load_memories(store, embedder, memories, TENANT, AGENT)
    if args.passages:
        print(f"loading {args.passages:,} passages of shared knowledge", file=sys.stderr)
        loaded |= load_passages(store, embedder, args.passages, args.seed)

    timer = _Timed()
    timed_store = _TimedStore(store, timer)
    service = SearchService(
        timed_store,
        _TimedEmbedder(embedder, timer),
        SystemClock(),
        container.ranking(settings),
        knowledge=timed_store,  # type: ignore[arg-type]
        answer_judge=container.current().answer_judge,
    )
    started = time.perf_counter()
    service.search(TENANT, AGENT, SearchRequest(query=queries[0]).to_query())
    cold_ms = (time.perf_counter() - started) * 1000

    shapes = _requests(queries)
    samples = _Samples(args.warmup)
    try:
        measure(service, timer, settings, shapes, samples)
    finally:
        if hasattr(store, "close"):  # the SQLite store; an OpenSearch alias is left to its node
            store.close()

    return {
        **_corpus.result_header("search_latency", run_started, load_at_start),
        "params": {
            "store": settings.store,
            "memories": args.n,
            "passages": args.passages,
            "queries": args.queries,
            "warmup": args.warmup,
            "seed": args.seed,
            "embedder": embedder.model_id,
            "window": {
                "max_days_ago": WINDOW_DAYS,
                "kinds": [WINDOW_KIND],
                "as_of": _corpus.ANCHOR.isoformat(),
            },
            "max_results": 10,
        },
        "load": loaded,
        "first_search_ms": round(cold_ms, 2),
        "latency_ms": samples.latency(),
        "mean_hits": samples.mean_hits(),
        "service_split": {shape: _split_summary(values) for shape, values in samples.splits.items()},
    }


def report(result: dict[str, Any]) -> str:
    p = result["params"]
    load_ = result["load"]
    rows = [
        (f"{layer:<19} {shape}", summary)
        for layer, shapes in result["latency_ms"].items()
        for shape, summary in shapes.items()
    ]
    lines = [
        f"search latency: {p['memories']:,} memories of one agent, {p['embedder']}, "
        f"{p['queries']} queries after {p['warmup']} warm-up",
        f"load: embed {load_['embed_s']:.1f} s + store {load_['put_s']:.1f} s "
        f"({load_['memories_per_s']:.0f} memories/s; model load {load_['model_load_s']:.2f} s)",
        f"first search (builds the vector cache): {result['first_search_ms']:.1f} ms",
        "",
        _corpus.table(rows),
        "",
        "where a service-level search spends its time (mean ms, share):",
    ]
    for shape, parts in result["service_split"].items():
        cells = " · ".join(f"{k} {v['mean_ms']:.2f} ({v['share']:.0%})" for k, v in parts.items())
        lines.append(f"  {shape:<16} {cells}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=DEFAULTS["n"], help="memories to load (default 10000)")
    parser.add_argument(
        "--passages", type=int, default=DEFAULTS["passages"], help="shared knowledge passages (default 2000)"
    )
    parser.add_argument("--queries", type=int, default=DEFAULTS["queries"], help="timed searches per shape")
    parser.add_argument("--warmup", type=int, default=5, help="untimed searches first, per shape")
    parser.add_argument(
        "--embedder", choices=("minilm", "minilm-memory", "hashing"), default=DEFAULTS["embedder"]
    )
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="corpus seed")
    parser.add_argument(
        "--store",
        choices=("sqlite", "opensearch"),
        default=DEFAULTS["store"],
        help="opensearch: the OpenSearch store on OPENSEARCH_URL (`make opensearch-up`)",
    )
    parser.add_argument("--data-dir", type=Path, help="an empty or new directory (default: a temporary one)")
    _corpus.add_judge_option(parser)
    args = parser.parse_args(argv)
    _corpus.use_judge(args)
    if args.n < 1 or args.queries < 1 or args.warmup < 0 or args.passages < 0:
        parser.error("--n and --queries must be at least 1, --warmup and --passages at least 0")

    with _corpus.fresh_data_dir(parser, args.data_dir) as data_dir:
        result = run(args, data_dir)
    print(report(result))
    name = _corpus.result_name(
        "search_latency",
        {
            "n": args.n,
            "passages": args.passages,
            "queries": args.queries,
            "embedder": args.embedder,
            "seed": args.seed,
            "store": args.store,
            "answer_judge": args.answer_judge,
        },
        DEFAULTS,
    )
    print(f"\nwritten to {_corpus.write_result(name, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
