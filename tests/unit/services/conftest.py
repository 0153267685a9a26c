"""Services run on the embedded adapters in a temp dir: real state to assert on, no mocks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.fakes import FixedClock

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.governance.forget import ForgetService
from agent_memory.recall.memories import MemoriesService
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.writing.write import WriteService
from agent_memory.writing.writer import WriterService


@dataclass
class World:
    clock: FixedClock
    queue: LocalFifoQueue
    pending: LocalPendingWrites
    store: SqliteMemoryStore
    embedder: HashingEmbedder
    write: WriteService
    writer: WriterService
    search: SearchService
    memories: MemoriesService
    forget: ForgetService

    def drain(self) -> list[str]:
        """Feed every queued message to the writer, as the worker would; returns the outcomes."""
        outcomes: list[str] = []
        while batch := self.queue.receive(10):
            prepared = self.writer.prepare([m.body for m in batch])
            for p in prepared:
                assert p.command is not None, p.poison_reason
                outcomes.append(self.writer.apply(p.command, p.vector).value)
            self.queue.ack(m.receipt_handle for m in batch)
        return outcomes


def make_world(tmp_path: Path, clock: FixedClock) -> World:
    """Every service on the embedded adapters in ``tmp_path`` (also for wider-scoped fixtures).

    The forget service queues its re-make jobs on ``jobs.db``, the file the cascade's job queue
    (`cascade_world.build`) works.
    """
    embedder = HashingEmbedder(384)
    store = SqliteMemoryStore(tmp_path / "memory.db", dimension=384, model_id=embedder.model_id)
    queue = LocalFifoQueue(tmp_path / "queue.db")
    pending = LocalPendingWrites(tmp_path / "queue.db")
    jobs = LocalJobQueue(LocalFifoQueue(tmp_path / "jobs.db", max_receive_count=1000))
    return World(
        clock=clock,
        queue=queue,
        pending=pending,
        store=store,
        embedder=embedder,
        write=WriteService(queue, pending, clock),
        writer=WriterService(store, embedder, pending, queue, clock, dedup_threshold=0.92),
        search=SearchService(store, embedder, clock, RankingWeights()),
        memories=MemoriesService(store, pending, clock),
        forget=ForgetService(store, jobs, clock),
    )


@pytest.fixture
def world(tmp_path: Path, clock: FixedClock) -> World:
    return make_world(tmp_path, clock)
