"""How long after a write a memory can be found, and after a forget until it is gone from search.

    python benchmarks/write_to_searchable.py [--writes 50] [--background 0] [--poll-ms 5]
                                             [--embedder minilm|hashing] [--client new|keep-alive]
                                             [--store sqlite|opensearch]

A write is accepted with 202 once it is queued; the queue worker then embeds it, checks it against
its nearest neighbour (dedup-on-write) and stores it. What a client cares about is the sum: how
long until a search finds what it just wrote. So, against a `LocalRuntime` started in this process
(its real worker thread, the configured embedder), for each of ``--writes`` memories:

1. ``POST /v1/agents/{agent}/memories`` with one item (timed: the POST latency);
2. search for its text every ``--poll-ms`` until the id the POST returned comes back (timed from
   just before the POST: the write->searchable latency).

3. ``DELETE /v1/agents/{agent}/memories/{id}`` (timed: the forget's latency), then search for
   its text every ``--poll-ms`` until the id no longer comes back (timed from just before the
   DELETE: forget -> gone from search). A forget answers once the memory is forgotten in the
   store, so on both stores the first search after it should already miss it; the poll shows it.

The memories are chosen so that none is a near duplicate of another (or of the ``--background``
memories loaded first): a merged write keeps the older record's id, and the new id would never be
found. The poll's own round trip (a search: embedding the query included) bounds the resolution;
its latency is reported alongside. ``--store opensearch`` keeps the memory in the OpenSearch store
on ``OPENSEARCH_URL`` (a fresh alias; `_opensearch.use_opensearch_store`), everything else local.
Figures go to ``benchmarks/results/write_to_searchable[-...].json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _corpus
from _opensearch import use_opensearch_store
from agent_memory.tenancy.rules.keys import NewKey

TENANT = "bench"
AGENT = "bench-writer"
DEFAULTS: dict[str, Any] = {
    "writes": 50,
    "background": 0,
    "poll_ms": 5.0,
    "embedder": "minilm",
    "client": "new",
    "store": "sqlite",
    "seed": _corpus.DEFAULT_SEED,
}
CLIENTS = {"new": _corpus.NewConnectionClient, "keep-alive": _corpus.KeepAliveClient}


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.at_start(), time.perf_counter()
    _corpus.configure_environment(data_dir, args.embedder)
    from agent_memory import container
    from agent_memory.local.server import LocalRuntime
    from agent_memory.settings import get_settings

    warnings.filterwarnings("ignore", message="No application metrics to publish")
    container.reset()
    if args.store == "opensearch":
        use_opensearch_store("writes")
    settings = get_settings()
    embedder, store = container.embedder(), container.store()

    pool = 20 * args.writes + 200
    memories = _corpus.generate_memories(args.background + pool, seed=args.seed)
    order = list(range(len(memories)))
    random.Random(args.seed).shuffle(order)
    background = [memories[i] for i in sorted(order[: args.background])]
    candidates = [memories[i] for i in order[args.background :]]
    loaded = None
    if background:
        print(f"loading {len(background):,} background memories with {embedder.model_id}", file=sys.stderr)
        loaded = _corpus.load_memories(store, embedder, background, TENANT, AGENT)
    writes = _corpus.distinct_writes(candidates, embedder, store, TENANT, AGENT, args.writes)

    _corpus.import_handlers()
    runtime = LocalRuntime(settings, host="127.0.0.1", port=0)
    _, key = runtime.keys.create(NewKey(TENANT, "pro"))
    runtime.start()
    client = CLIENTS[args.client](runtime.url, key)
    runs: list[dict[str, Any]] = []
    stray = io.StringIO()
    try:
        with contextlib.redirect_stdout(stray):  # see `_corpus.note_stray_output`
            for i, memory in enumerate(writes, 1):
                run = _corpus.write_then_find(client, AGENT, memory, args.poll_ms / 1000, args.timeout_s)
                if run["searchable_ms"] is not None:
                    run |= forget_then_gone(
                        client,
                        (runtime.url, key),
                        run["id"],
                        memory.content,
                        args.poll_ms / 1000,
                        args.timeout_s,
                    )
                runs.append(run)
                print(f"\r  {i}/{len(writes)} writes", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        client.close()
        _corpus.note_stray_output(stray.getvalue())
        runtime.stop()
        if hasattr(store, "close"):  # the SQLite store; an OpenSearch alias is left to its node
            store.close()

    found = [r["searchable_ms"] for r in runs if r["searchable_ms"] is not None]
    if not found:
        raise RuntimeError(f"no write became searchable within {args.timeout_s} s")
    gone = [r["gone_ms"] for r in runs if r.get("gone_ms") is not None]
    return {
        **_corpus.result_header("write_to_searchable", run_started, load_at_start),
        "params": {
            "writes": args.writes,
            "background_memories": args.background,
            "poll_ms": args.poll_ms,
            "timeout_s": args.timeout_s,
            "client": CLIENTS[args.client].name,
            "seed": args.seed,
            "embedder": embedder.model_id,
            "store": args.store,
        },
        "background_load": loaded,
        "post_ms": _corpus.summarize([r["post_ms"] for r in runs]),
        "write_to_searchable_ms": _corpus.summarize(found),
        "not_found_within_timeout": len(runs) - len(found),
        "searches_per_write": _corpus.summarize([len(r["polls"]) for r in runs]),
        "poll_search_ms": _corpus.summarize([p for r in runs for p in r["polls"]]),
        "forget_ms": _corpus.summarize([r["forget_ms"] for r in runs if "forget_ms" in r]),
        "forget_to_gone_ms": _corpus.summarize(gone) if gone else None,
        "not_gone_within_timeout": sum(1 for r in runs if "forget_ms" in r and r["gone_ms"] is None),
        "searches_per_forget": _corpus.summarize([r["gone_searches"] for r in runs if "gone_searches" in r]),
    }


def forget_then_gone(
    client: Any, api: tuple[str, str], record_id: str, content: str, poll_s: float, timeout_s: float
) -> dict[str, Any]:
    """DELETE the memory (``api``: the runtime's URL and key), then search for its text every
    ``poll_s`` until its id no longer comes back (or ``timeout_s`` passes): the DELETE's ms,
    forget -> gone ms (None: still found), and the searches it took."""
    base_url, key = api
    path = f"/v1/agents/{AGENT}/memories"
    request = urllib.request.Request(
        f"{base_url}{path}/{record_id}", headers={"Authorization": f"Bearer {key}"}, method="DELETE"
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"forget answered {exc.code}: {exc.read()[:300]!r}") from exc
    forgotten = time.perf_counter()
    if status != 200:
        raise RuntimeError(f"forget answered {status}")
    polls = 0
    while time.perf_counter() - started < timeout_s:
        polls += 1
        status, data = client.post(f"{path}/search", {"query": content, "max_results": 10})
        done = time.perf_counter()
        if status != 200:
            raise RuntimeError(f"search answered {status}: {data[:300]!r}")
        if all(r["id"] != record_id for r in json.loads(data)["results"]):
            return {
                "forget_ms": (forgotten - started) * 1000,
                "gone_ms": (done - started) * 1000,
                "gone_searches": polls,
            }
        time.sleep(poll_s)
    return {"forget_ms": (forgotten - started) * 1000, "gone_ms": None, "gone_searches": polls}


def report(result: dict[str, Any]) -> str:
    p = result["params"]
    polls = result["searches_per_write"]
    lines = [
        f"write -> searchable: {p['writes']} writes, {p['background_memories']:,} memories already stored, "
        f"{p['embedder']}, {p['client']} client, polling every {p['poll_ms']:g} ms, "
        f"store {p.get('store', 'sqlite')}",
        "",
        _corpus.table(
            [
                ("POST (202 accepted)", result["post_ms"]),
                ("write -> searchable", result["write_to_searchable_ms"]),
                ("one poll (a search)", result["poll_search_ms"]),
                ("DELETE (forget answered)", result["forget_ms"]),
                *([("forget -> gone from search", gone)] if (gone := result["forget_to_gone_ms"]) else []),
            ]
        ),
        "",
        f"searches per write until found: p50 {polls['p50']:g}, max {polls['max']:g}; "
        f"not found within {p['timeout_s']:g} s: {result['not_found_within_timeout']}",
        f"searches per forget until gone: max {result['searches_per_forget'].get('max', 0):g}; "
        f"still found after {p['timeout_s']:g} s: {result['not_gone_within_timeout']}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--writes", type=int, default=DEFAULTS["writes"], help="memories to write (default 50)"
    )
    parser.add_argument(
        "--background", type=int, default=DEFAULTS["background"], help="memories stored first (default 0)"
    )
    parser.add_argument("--poll-ms", type=float, default=DEFAULTS["poll_ms"], help="pause between searches")
    parser.add_argument("--timeout-s", type=float, default=10.0, help="give up on a write after this long")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default=DEFAULTS["embedder"])
    parser.add_argument("--client", choices=tuple(CLIENTS), default=DEFAULTS["client"])
    parser.add_argument(
        "--store",
        choices=("sqlite", "opensearch"),
        default=DEFAULTS["store"],
        help="opensearch: the OpenSearch store on OPENSEARCH_URL (`make opensearch-up`)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="corpus seed")
    parser.add_argument("--data-dir", type=Path, help="an empty or new directory (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.writes < 1 or args.background < 0 or args.poll_ms < 0 or args.timeout_s <= 0:
        parser.error("--writes >= 1, --background >= 0, --poll-ms >= 0 and --timeout-s > 0, please")

    with _corpus.fresh_data_dir(parser, args.data_dir) as data_dir:
        result = run(args, data_dir)
    print(report(result))
    values = {k: getattr(args, k) for k in DEFAULTS}
    name = _corpus.result_name("write_to_searchable", values, DEFAULTS)
    print(f"\nwritten to {_corpus.write_result(name, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
