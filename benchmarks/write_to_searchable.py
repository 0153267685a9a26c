"""How long after a write a memory can be found: POST, then search until it comes back.

    python benchmarks/write_to_searchable.py [--writes 50] [--background 0] [--poll-ms 5]
                                             [--embedder minilm|hashing] [--client new|keep-alive]

A write is accepted with 202 once it is queued; the queue worker then embeds it, checks it against
its nearest neighbour (dedup-on-write) and stores it. What a client cares about is the sum: how
long until a search finds what it just wrote. So, against a `LocalRuntime` started in this process
(its real worker thread, the configured embedder), for each of ``--writes`` memories:

1. ``POST /v1/agents/{agent}/memories`` with one item (timed: the POST latency);
2. search for its text every ``--poll-ms`` until the id the POST returned comes back (timed from
   just before the POST: the write->searchable latency).

The memories are chosen so that none is a near duplicate of another (or of the ``--background``
memories loaded first): a merged write keeps the older record's id, and the new id would never be
found. The poll's own round trip (a search: embedding the query included) bounds the resolution;
its latency is reported alongside. Figures go to ``benchmarks/results/write_to_searchable[-...].json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _corpus
from agent_memory.domain.keys import NewKey

TENANT = "bench"
AGENT = "bench-writer"
DEFAULTS: dict[str, Any] = {
    "writes": 50,
    "background": 0,
    "poll_ms": 5.0,
    "embedder": "minilm",
    "client": "new",
    "seed": _corpus.DEFAULT_SEED,
}
CLIENTS = {"new": _corpus.NewConnectionClient, "keep-alive": _corpus.KeepAliveClient}


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.load_average(), time.perf_counter()
    _corpus.configure_environment(data_dir, args.embedder)
    from agent_memory import container
    from agent_memory.local.server import LocalRuntime
    from agent_memory.settings import get_settings

    warnings.filterwarnings("ignore", message="No application metrics to publish")
    container.reset()
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
                runs.append(
                    _corpus.write_then_find(client, AGENT, memory, args.poll_ms / 1000, args.timeout_s)
                )
                print(f"\r  {i}/{len(writes)} writes", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        client.close()
        _corpus.note_stray_output(stray.getvalue())
        runtime.stop()
        store.close()  # type: ignore[attr-defined]

    found = [r["searchable_ms"] for r in runs if r["searchable_ms"] is not None]
    if not found:
        raise RuntimeError(f"no write became searchable within {args.timeout_s} s")
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
        },
        "background_load": loaded,
        "post_ms": _corpus.summarize([r["post_ms"] for r in runs]),
        "write_to_searchable_ms": _corpus.summarize(found),
        "not_found_within_timeout": len(runs) - len(found),
        "searches_per_write": _corpus.summarize([len(r["polls"]) for r in runs]),
        "poll_search_ms": _corpus.summarize([p for r in runs for p in r["polls"]]),
    }


def report(result: dict[str, Any]) -> str:
    p = result["params"]
    polls = result["searches_per_write"]
    lines = [
        f"write -> searchable: {p['writes']} writes, {p['background_memories']:,} memories already stored, "
        f"{p['embedder']}, {p['client']} client, polling every {p['poll_ms']:g} ms",
        "",
        _corpus.table(
            [
                ("POST (202 accepted)", result["post_ms"]),
                ("write -> searchable", result["write_to_searchable_ms"]),
                ("one poll (a search)", result["poll_search_ms"]),
            ]
        ),
        "",
        f"searches per write until found: p50 {polls['p50']:g}, max {polls['max']:g}; "
        f"not found within {p['timeout_s']:g} s: {result['not_found_within_timeout']}",
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
