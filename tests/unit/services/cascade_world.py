"""The cascade on the embedded adapters: the services `World` plus a job queue, the local
summarizer, the summarize and dispatch services, and a loop that runs queued jobs and writes
the way the local workers do (writes first: a refresh job waits for its child's write)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.unit.services.conftest import World

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.cascade.dispatch import DispatchService
from agent_memory.cascade.summarize import ChildNotStoredYetError, RunStats, SummarizeService
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import Job, ListQuery, Summarizer

TENANT = "acme"
AGENT = "helper"
CALLER = Caller(TENANT, key_id="key_test")


@dataclass
class Cascade:
    world: World
    jobs_queue: LocalFifoQueue
    jobs: LocalJobQueue
    summarizer: Summarizer
    summarize: SummarizeService
    dispatch: DispatchService
    timezone: str
    outcomes: Counter[str] = field(default_factory=Counter)
    runs: list[RunStats] = field(default_factory=list)

    @property
    def store(self) -> Any:
        return self.world.store

    def remember(self, *items: dict[str, Any], agent: str = AGENT) -> list[str]:
        """Write working memory through the API's write service and the writer."""
        response = self.world.write.accept(
            CALLER, agent, WriteRequest(items=[WriteItem.model_validate(i) for i in items]).to_new_memories()
        )
        self.world.drain()
        discard_unpublished_metrics()
        return response

    def queue(self, grain: Grain, key: str, agent: str = AGENT, **fields: Any) -> None:
        job = SummarizeJob(tenant_id=TENANT, agent_id=agent, grain=grain, time_key=key, **fields)
        self.jobs.send([Job.of(job)])

    def run(self, max_rounds: int = 10_000) -> Counter[str]:
        """Work both queues until they are empty; the outcomes of the jobs run this time."""
        done: Counter[str] = Counter()
        for _ in range(max_rounds):
            discard_unpublished_metrics()  # what each handler's flush does between invocations
            self.world.drain()
            batch = self.jobs_queue.receive(10)
            if not batch:
                if self.jobs_queue.depth() == 0:
                    self.outcomes.update(done)
                    return done
                continue
            for message in batch:
                job = SummarizeJob.model_validate_json(message.body)
                try:
                    stats = self.summarize.run(job)
                except ChildNotStoredYetError:
                    self.jobs_queue.nack([message.receipt_handle])
                    done["waited"] += 1
                    continue
                self.runs.append(stats)
                done[stats.outcome.value] += 1
                self.jobs_queue.ack([message.receipt_handle])
        raise AssertionError("the queues did not empty")

    def summary(self, grain: Grain, key: str, agent: str = AGENT) -> MemoryRecord | None:
        return self.store.get(TENANT, agent, summary_id(TENANT, agent, grain.value, key))

    def snapshot(self, now: datetime) -> list[MemoryRecord]:
        """Every live record of the agent, every field."""
        records: list[MemoryRecord] = []
        cursor = None
        while True:
            page = self.store.list(ListQuery(TENANT, AGENT, now, limit=100, cursor=cursor))
            records += page.records
            cursor = page.next_cursor
            if cursor is None:
                return records


def build(
    world: World, tmp_path: Path, timezone: str = "UTC", summarizer: Summarizer | None = None
) -> Cascade:
    jobs_queue = LocalFifoQueue(tmp_path / "jobs.db", max_receive_count=1000)
    jobs = LocalJobQueue(jobs_queue)
    chosen = summarizer or LocalExtractiveSummarizer(world.embedder)
    return Cascade(
        world=world,
        jobs_queue=jobs_queue,
        jobs=jobs,
        summarizer=chosen,
        summarize=SummarizeService(
            world.store, chosen, world.queue, jobs, world.clock, timezone, refresh_delay_s=0
        ),
        dispatch=DispatchService(world.store, jobs, world.clock, timezone, page_size=2),
        timezone=timezone,
    )
