"""What the writer asks of OpenSearch for each stored turn, and what each kind of request costs.

    OPENSEARCH_URL=... python benchmarks/opensearch_writes.py [--turns 100] [--embedder hashing|minilm]
                                                              [--refresh per-write|none]

Storing LoCoMo through the HTTP API took longer on the OpenSearch store than on SQLite (README,
"Performance"). The writer's own work is the same on both stores; what differs is the store's
requests. So, in this process, on a fresh alias of the node ``OPENSEARCH_URL`` names
(`_opensearch.use_opensearch_store`): the first ``--turns`` turns of LoCoMo's first conversation
(one ``conversation_id`` per session, with their speakers) are accepted by the `WriteService` into
the local queue, then the local worker's `QueueWorker` hands them to the writer handler
`local.worker.WRITE_BATCH` messages at a time, as `agent-memory serve` does. Every request the
OpenSearch client sends is counted and timed by kind (``POST _bulk``, ``POST _search``...), the
writes that carry ``refresh`` apart; the node's refresh statistics for the alias are read at the end.

``--refresh none`` stores with no forced refresh (the store's ``refresh=False``): not a mode the
product offers (the next turn's near-duplicate check and write-time supersession search for the
turns before it, which then may not be searchable yet), only the measure of what the forced
refreshes cost. The hashing embedder is the default so that the model's time does not hide the
store's. Figures go to ``benchmarks/results/opensearch_writes[-...].json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _corpus

DEFAULT_DATA = Path("/work/shared/data/locomo10.json")
DEFAULTS: dict[str, Any] = {"turns": 100, "embedder": "hashing", "refresh": "per-write"}
TENANT, AGENT = "bench", "bench-writes"


def locomo_turns(path: Path, n: int) -> list[dict[str, Any]]:
    """The first ``n`` turns of the first conversation, as write items (speaker, session)."""
    conversation = json.loads(path.read_text())[0]["conversation"]
    sessions = sorted(
        (k for k in conversation if k.startswith("session_") and not k.endswith("date_time")),
        key=lambda k: int(k.split("_")[1]),
    )
    items = [
        {"content": t["text"], "speaker": t["speaker"], "conversation_id": s}
        for s in sessions
        for t in conversation[s]
    ]
    return items[:n]


class RequestTally:
    """Wraps the client's transport: counts and times every request by kind."""

    def __init__(self, client: Any) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.seconds: collections.Counter[str] = collections.Counter()
        send = client.transport.perform_request

        def tallied(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            params = kwargs.get("params") or {}
            last = url.split("?", maxsplit=1)[0].rstrip("/").split("/")[-1]
            kind = f"{method} {last if last.startswith('_') else '<doc>'}"
            if params.get("refresh") in ("true", True, "wait_for"):
                kind += f" refresh={params['refresh']}"
            started = time.perf_counter()
            try:
                return send(method, url, *args, **kwargs)
            finally:
                self.counts[kind] += 1
                self.seconds[kind] += time.perf_counter() - started

        client.transport.perform_request = tallied

    def clear(self) -> None:
        self.counts.clear()
        self.seconds.clear()


def run(args: argparse.Namespace) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="opensearch-writes-"))
    _corpus.configure_environment(data_dir, args.embedder)
    from _opensearch import use_opensearch_store

    alias = use_opensearch_store("writes")
    from agent_memory import container
    from agent_memory.contract.v1 import WriteItem, WriteRequest
    from agent_memory.local.worker import QueueWorker
    from agent_memory.model.caller import Caller
    from agent_memory.observability import discard_unpublished_metrics

    runtime = container.current()
    if args.refresh == "none":
        runtime.store._refresh = None  # the measure of the forced refreshes only (docstring)
    tally = RequestTally(runtime.opensearch_client)
    turns = locomo_turns(args.data, args.turns)
    for item in turns:
        request = WriteRequest(items=[WriteItem.model_validate(item)])
        runtime.write_service.accept(Caller(TENANT, key_id="bench"), AGENT, request.to_new_memories())
        discard_unpublished_metrics()  # Powertools prints its metrics at 100 values otherwise
    worker = QueueWorker(runtime.local_queue, poll_s=0)  # the writer handler, as `serve` runs it
    tally.clear()
    started = time.perf_counter()
    while worker.drain_once():
        pass
    wall = time.perf_counter() - started
    refresh = runtime.opensearch_client.indices.stats(index=alias, metric="refresh")
    n = len(turns)
    return {
        "turns": n,
        "wall_s": round(wall, 1),
        "turns_per_s": round(n / wall, 2),
        "requests_per_turn": round(sum(tally.counts.values()) / n, 2),
        "by_kind": {
            kind: {
                "per_turn": round(count / n, 2),
                "seconds": round(tally.seconds[kind], 1),
                "ms_each": round(1000 * tally.seconds[kind] / count, 1),
                "share_of_wall": round(tally.seconds[kind] / wall, 3),
            }
            for kind, count in tally.counts.most_common()
        },
        "node_refresh": refresh["_all"]["primaries"]["refresh"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument(
        "--turns", type=int, default=DEFAULTS["turns"], help="turns of the first conversation"
    )
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default=DEFAULTS["embedder"])
    parser.add_argument("--refresh", choices=("per-write", "none"), default=DEFAULTS["refresh"])
    args = parser.parse_args()
    load, started = _corpus.at_start(), time.perf_counter()
    figures = run(args)
    payload = {
        **_corpus.result_header("opensearch_writes", started, load),
        "parameters": {k: getattr(args, k) for k in DEFAULTS},
        **figures,
    }
    path = _corpus.write_result(_corpus.result_name("opensearch_writes", vars(args), DEFAULTS), payload)
    print(
        f"{figures['turns']} turns in {figures['wall_s']} s ({figures['turns_per_s']}/s), "
        f"{figures['requests_per_turn']} requests a turn; load at start {load}"
    )
    for kind, row in figures["by_kind"].items():
        print(
            f"  {kind:32} {row['per_turn']:5.2f}/turn {row['ms_each']:7.1f} ms each "
            f"{100 * row['share_of_wall']:5.1f}% of the time"
        )
    print(f"node refresh: {figures['node_refresh']}")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
