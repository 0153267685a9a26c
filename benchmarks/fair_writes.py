"""Fairness of the local write path between tenants: a small tenant's write-to-stored time, alone
and while another tenant's bulk writes fill the queue.

    python benchmarks/fair_writes.py [--bulk 3000] [--small 20] [--gap-ms 50]
                                     [--embedder hashing|minilm]

What it does, and why that way:

1. A fresh local store, write queue and pending marks in a temporary directory, the real
   `WriteService` (what ``POST .../memories`` runs) and the real `WriterService` fed by one worker
   thread that takes batches of `WRITE_BATCH` (100) from `LocalFifoQueue`, as the local runtime's
   worker does.
2. **Alone**: the small tenant sends ``--small`` single writes, ``--gap-ms`` apart; each one's
   time from the accept call to the writer having stored it (the worker notes when it applied a
   message) is recorded.
3. **Behind a bulk load**: the bulk tenant first sends ``--bulk`` writes (requests of 100 items,
   so they are all queued before the small tenant's first write), then the small tenant writes
   as in 2.

The bound: the queue hands out batches round-robin across tenants (`local_queue._FAIR_BATCH`), so
a small write waits for at most the batch in progress and is in the next one: its time behind a
bulk load is about two batches' writer time, whatever the bulk load's size. Before that rule the
queue took the oldest messages first and a small write waited for the whole bulk load ahead of
it. Figures are printed and written to ``benchmarks/results/fair_writes[-...].json``.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _corpus
from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.local.worker import WRITE_BATCH
from agent_memory.model.caller import Caller
from agent_memory.observability import discard_unpublished_metrics, logger
from agent_memory.ports import Clock, Embedder
from agent_memory.writing.write import WriteService
from agent_memory.writing.writer import WriterService

DEFAULTS: dict[str, Any] = {"bulk": 3000, "small": 20, "gap_ms": 50, "embedder": "hashing"}
BULK, SMALL = Caller("bulk-tenant", key_id="key_bulk"), Caller("small-tenant", key_id="key_small")
AGENT = "bench-agent"
REQUEST_ITEMS = 100


class WallClock:
    def now(self) -> Any:
        from datetime import UTC, datetime

        return datetime.now(UTC)


class Worker(threading.Thread):
    """The local writer: batches of `WRITE_BATCH` from the queue into the writer, noting when
    each id is stored."""

    def __init__(self, queue: LocalFifoQueue, writer: WriterService) -> None:
        super().__init__(daemon=True)
        self.queue, self.writer = queue, writer
        self.stored: dict[str, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            batch = self.queue.receive(WRITE_BATCH, wait_s=0.05)
            if not batch:
                continue
            for prepared in self.writer.prepare([m.body for m in batch]):
                if prepared.command is not None:
                    self.writer.apply(prepared.command, prepared.vector)
                    self.stored[prepared.command.record.id] = time.perf_counter()
            self.queue.ack(m.receipt_handle for m in batch)
            discard_unpublished_metrics()  # what the writer handler's flush does per batch


def embedder_of(name: str) -> Embedder:
    if name == "minilm":
        from agent_memory.adapters.embedders.minilm import MiniLmEmbedder

        return MiniLmEmbedder()
    return HashingEmbedder(384)


def items(texts: list[str]) -> list[Any]:
    return WriteRequest(items=[WriteItem(content=t) for t in texts]).to_new_memories()


def small_writes(write: WriteService, worker: Worker, n: int, gap_s: float, tag: str) -> list[float]:
    """``n`` single writes of the small tenant, ``gap_s`` apart; each one's ms to stored."""
    sent: dict[str, float] = {}
    for i in range(n):
        note = f"Small tenant note {tag} {i}: ticket OPS-{1000 + i}."
        [memory_id] = write.accept(SMALL, AGENT, items([note]))
        sent[memory_id] = time.perf_counter()
        time.sleep(gap_s)
    deadline = time.monotonic() + 600
    while not all(m in worker.stored for m in sent) and time.monotonic() < deadline:
        time.sleep(0.01)
    return [(worker.stored[m] - at) * 1000 for m, at in sent.items() if m in worker.stored]


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fair-writes-") as tmp:
        data = Path(tmp)
        clock: Clock = WallClock()
        embedder = embedder_of(args.embedder)
        store = SqliteMemoryStore(
            data / "memory.db", dimension=embedder.dimension, model_id=embedder.model_id
        )
        queue = LocalFifoQueue(data / "queue.db")
        pending = LocalPendingWrites(data / "queue.db")
        write = WriteService(queue, pending, clock)
        worker = Worker(queue, WriterService(store, embedder, pending, queue, clock))
        worker.start()
        alone = small_writes(write, worker, args.small, args.gap_ms / 1000, "alone")
        memories = _corpus.generate_memories(args.bulk)
        started = time.perf_counter()
        for start in range(0, len(memories), REQUEST_ITEMS):
            chunk = memories[start : start + REQUEST_ITEMS]
            write.accept(BULK, AGENT, items([m.content for m in chunk]))
            discard_unpublished_metrics()
        queued_s = time.perf_counter() - started
        behind = small_writes(write, worker, args.small, args.gap_ms / 1000, "behind")
        while queue.depth() and time.perf_counter() - started < 900:
            time.sleep(0.05)
        drained_s = time.perf_counter() - started
        worker.stop.set()
        worker.join()
    return {
        "small_alone_ms": _corpus.summarize(alone),
        "small_behind_bulk_ms": _corpus.summarize(behind),
        "bulk_queued_s": round(queued_s, 2),
        "bulk_drained_s": round(drained_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bulk", type=int, default=DEFAULTS["bulk"])
    parser.add_argument("--small", type=int, default=DEFAULTS["small"])
    parser.add_argument("--gap-ms", dest="gap_ms", type=int, default=DEFAULTS["gap_ms"])
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default=DEFAULTS["embedder"])
    args = parser.parse_args()
    logger.setLevel("WARNING")  # a log line per write would time the terminal
    load, begun = _corpus.at_start(), time.perf_counter()
    figures = run(args)
    print(
        _corpus.table(
            [
                ("small tenant, alone", figures["small_alone_ms"]),
                (f"small tenant, behind {args.bulk} bulk writes", figures["small_behind_bulk_ms"]),
            ]
        )
    )
    print(
        f"bulk writes queued in {figures['bulk_queued_s']} s, all stored after {figures['bulk_drained_s']} s"
    )
    values = vars(args)
    payload = {**_corpus.result_header("fair_writes", begun, load), "parameters": values, **figures}
    print(_corpus.write_result(_corpus.result_name("fair_writes", values, DEFAULTS), payload))


if __name__ == "__main__":
    main()
