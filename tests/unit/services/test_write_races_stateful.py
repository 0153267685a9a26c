"""A forget that lands between the writer's read and its put never brings forgotten words back: a
stateful property test of writes, forgets and re-made summaries against a plain reference model
(which memories are queued, live and forgotten).

The writer runs on a store that can be told to let a forget in right before its next put, the
interleaving a second writer (a redelivered message) or a slow writer meets:

* a memory being stored is stored by a duplicate delivery and forgotten before this put;
* a summary version being stored over a summary made from a memory sees that memory forgotten
  (and the summary hidden) before this put.

The forget service runs on a store that lets a day's re-make run between a forget's stale marks
and its delete (the re-make reads the memory still live); and a day's refresh can be queued
holding a memory that is forgotten before its put, over a summary made without it (the forget
has nothing of it to mark).

After every step: no forgotten memory reads back live, and no live summary lists a forgotten
memory or quotes it. After the queues drain (the writes, then the re-makes the forgets and the
writer queued), still none does; after a final re-make of every day, every remembered memory is
live and the summaries are whole again (the cascade heals what the forgets hid).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from tests.fakes import FixedClock
from tests.payloads import FACTS
from tests.strategies import examples
from tests.unit.services.cascade_world import AGENT, CALLER, TENANT, Cascade, build
from tests.unit.services.conftest import World, make_world

from agent_memory.cascade.summarize import ChildNotStoredYetError
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.governance.forget import ForgetService
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryKind
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import AuditEvent, StoredRecord
from agent_memory.writing.writer import WriterService

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DAYS = (date(2026, 11, 9), date(2026, 11, 10))

Race = Callable[[StoredRecord], None]


class RacingStore:
    """The store as the writer sees it: ``race`` (once armed) runs right before the next put."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.race: Race | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _run_race(self, item: StoredRecord) -> None:
        race, self.race = self.race, None
        if race is not None:
            race(item)

    def put(self, items: Sequence[StoredRecord]) -> None:
        for item in items:
            self._run_race(item)
        self._store.put(items)

    def put_if(self, item: StoredRecord, read: Any, events: Sequence[AuditEvent] = ()) -> bool:
        self._run_race(item)
        return bool(self._store.put_if(item, read, events))


class DeletingStore:
    """The store as the forget service sees it: ``before_delete`` (once armed) runs right
    before its next soft delete, after the forget's stale marks."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.before_delete: Callable[[str], None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        hook, self.before_delete = self.before_delete, None
        if hook is not None:
            hook(record_id)
        return bool(self._store.soft_delete(tenant_id, agent_id, record_id, event))


@dataclass
class Model:
    """What the machine did: memories accepted and not stored yet, stored (and not forgotten),
    and forgotten ones."""

    queued: dict[str, str] = field(default_factory=dict)
    live: dict[str, str] = field(default_factory=dict)
    forgotten: dict[str, str] = field(default_factory=dict)
    unused: list[str] = field(default_factory=lambda: list(FACTS))
    raced: int = 0


class WritesRacingForgets(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="write-races-"))
        self.clock = FixedClock(START)
        self.world: World = make_world(self.dir, self.clock)
        self.racing = RacingStore(self.world.store)
        self.cascade: Cascade = build(self.world, self.dir)
        self.world.writer = WriterService(
            self.racing,
            self.world.embedder,
            self.world.pending,
            self.world.queue,
            self.clock,
            dedup_threshold=0.92,
            jobs=self.cascade.jobs,
        )
        self.deleting = DeletingStore(self.world.store)
        self.world.forget = ForgetService(self.deleting, self.cascade.jobs, self.clock)
        self.model = Model()

    def teardown(self) -> None:
        try:
            self.racing.race = None
            self.deleting.before_delete = None
            self._tick()
            self.cascade.run()  # the writes, then the re-makes the forgets and the writer queued
            self.every_step()
            for day in DAYS:
                self.cascade.queue(Grain.DAILY, day.isoformat())
            self.cascade.run()
            self.model.live.update(self.model.queued)
            self.every_step()
            for memory_id, text in self.model.live.items():
                record = self.world.store.get(TENANT, AGENT, memory_id)
                assert record is not None and record.is_live(self.clock.now()), f"{memory_id} lost"
                assert text in record.content
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            discard_unpublished_metrics()

    def _tick(self) -> None:
        self.clock.advance(milliseconds=7)

    def _forget(self, memory_id: str) -> None:
        self.world.forget.forget(TENANT, AGENT, memory_id, actor="key_test")
        text = self.model.live.pop(memory_id, None) or self.model.queued.pop(memory_id)
        self.model.forgotten[memory_id] = text

    # --- rules ----------------------------------------------------------------------------------

    @precondition(lambda self: bool(self.model.unused))
    @rule(day=st.sampled_from(DAYS), hour=st.integers(0, 23))
    def write(self, day: date, hour: int) -> None:
        """A memory of ``day`` is accepted (queued; stored by a later step)."""
        self._tick()
        text = self.model.unused.pop(0)
        at = datetime(day.year, day.month, day.day, hour, tzinfo=UTC)
        request = WriteRequest(
            items=[WriteItem.model_validate({"content": text, "occurred_at": at.isoformat()})]
        )
        [memory_id] = self.world.write.accept(CALLER, AGENT, request.to_new_memories())
        self.model.queued[memory_id] = text

    @precondition(lambda self: bool(self.model.live))
    @rule(pick=st.integers(0, 10**6))
    def forget(self, pick: int) -> None:
        self._tick()
        memory_id = sorted(self.model.live)[pick % len(self.model.live)]
        self._forget(memory_id)

    @precondition(lambda self: bool(self.model.live))
    @rule(pick=st.integers(0, 10**6), store_first=st.booleans())
    def forget_around_a_remake(self, pick: int, store_first: bool) -> None:
        """A memory is forgotten, and its day's re-make runs between the forget's stale marks and
        its delete (it reads the memory still live); with ``store_first`` its version is stored
        before the delete, else it waits in the write queue."""
        self._tick()
        memory_id = sorted(self.model.live)[pick % len(self.model.live)]
        record = self.world.store.get(TENANT, AGENT, memory_id)
        assert record is not None

        def remake(_: str) -> None:
            self.remake_day(record.occurred_at.date())
            if store_first:
                self.world.drain()
            self.model.raced += 1

        self.deleting.before_delete = remake
        self._forget(memory_id)
        self.deleting.before_delete = None

    @precondition(lambda self: bool(self.model.unused))
    @rule(day=st.sampled_from(DAYS), hour=st.integers(0, 23))
    def forget_before_a_queued_refresh(self, day: date, hour: int) -> None:
        """The day's summary is made and stored, a memory of that day is written and stored, the
        day's refresh (holding it) is queued, and the memory is forgotten before that put: the
        stored summary was made without it, so the forget has nothing to mark."""
        self.remake_day(day)
        self.store_writes(race=False)
        self.write(day, hour)
        [memory_id] = self.model.queued
        self.store_writes(race=False)
        self.remake_day(day)
        self._tick()
        self._forget(memory_id)

    @rule(day=st.sampled_from(DAYS))
    def remake_day(self, day: date) -> None:
        """The day's summary job runs; its version waits in the write queue."""
        self._tick()
        self.cascade.queue(Grain.DAILY, day.isoformat())
        while batch := self.cascade.jobs_queue.receive(10):
            for n, message in enumerate(batch):
                try:
                    self.cascade.summarize.run(SummarizeJob.model_validate_json(message.body))
                except ChildNotStoredYetError:  # the job waits for its child's write; so does the
                    # rest of the batch (left in flight, it would hold back its groups' jobs)
                    self.cascade.jobs_queue.nack([m.receipt_handle for m in batch[n:]])
                    return
                self.cascade.jobs_queue.ack([message.receipt_handle])
        discard_unpublished_metrics()

    @rule(race=st.booleans())
    def store_writes(self, race: bool) -> None:
        """The writer stores what is queued; with ``race``, a forget lands right before its
        first put (of a memory stored meanwhile by a duplicate delivery, or of a memory the
        stored summary being re-made holds)."""
        self._tick()
        if race:
            self.racing.race = self._race
        self.world.drain()
        self.racing.race = None
        self.model.live.update(self.model.queued)
        self.model.queued.clear()
        discard_unpublished_metrics()

    def _race(self, item: StoredRecord) -> None:
        record = item.record
        self._tick()
        if record.grain is Grain.WORKING:
            if record.id not in self.model.queued:
                return
            stored = self.world.store.get(TENANT, AGENT, record.id)
            if stored is None:
                self.world.store.put([item])  # the duplicate delivery that won
            self._forget(record.id)
        else:
            stored = self.world.store.get(TENANT, AGENT, record.id)
            held = [] if stored is None else [i for i in record.source_ids if i in stored.source_ids]
            if not any(i in self.model.live for i in held):
                return
            self._forget(next(i for i in held if i in self.model.live))
        self.model.raced += 1

    # --- what holds after every step ------------------------------------------------------------

    @invariant()
    def every_step(self) -> None:
        now = self.clock.now()
        for memory_id in self.model.forgotten:
            record = self.world.store.get(TENANT, AGENT, memory_id)
            assert record is None or not record.is_live(now), f"forgotten {memory_id} is live again"
        summaries = [r for r in self.cascade.snapshot(now) if r.kind is MemoryKind.SUMMARY]
        for memory_id, text in self.model.forgotten.items():
            for summary in summaries:
                assert memory_id not in summary.source_ids, f"{summary.id} shows forgotten {memory_id}"
                assert text not in summary.content, f"{summary.id} quotes forgotten {memory_id}"


WritesRacingForgets.TestCase.settings = settings(
    max_examples=examples(30),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
test_a_forget_racing_a_put_never_brings_words_back = WritesRacingForgets.TestCase


def test_a_write_merging_into_a_memory_forgotten_before_the_put_brings_nothing_back(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a stored memory, and the same words written again the same day (a near duplicate)
    world = make_world(tmp_path, clock)
    racing = RacingStore(world.store)
    writer = WriterService(racing, world.embedder, world.pending, world.queue, clock)
    text, at = FACTS[0], datetime(2026, 11, 9, 9, tzinfo=UTC)
    first = WriteItem.model_validate({"content": text, "occurred_at": at.isoformat()})
    [kept] = world.write.accept(CALLER, AGENT, WriteRequest(items=[first]).to_new_memories())
    world.drain()
    clock.advance(minutes=5)
    again = WriteItem.model_validate({"content": text, "occurred_at": at.replace(hour=10).isoformat()})
    [merging] = world.write.accept(CALLER, AGENT, WriteRequest(items=[again]).to_new_memories())

    def forget_it(item: StoredRecord) -> None:
        world.forget.forget(TENANT, AGENT, kept, actor="key_test")

    racing.race = forget_it

    # WHEN the writer merges it, and the memory it merges into is forgotten right before the put
    [message] = world.queue.receive(10)
    [prepared] = writer.prepare([message.body])
    assert prepared.command is not None
    outcome = writer.apply(prepared.command, prepared.vector)

    # THEN the write gives way to the forget (merged, then forgotten): nothing of it is live
    assert outcome.value == "superseded"
    for memory_id in (kept, merging):
        record = world.store.get(TENANT, AGENT, memory_id)
        assert record is not None and not record.is_live(clock.now()) and text not in record.content


def test_a_week_made_from_a_day_emptied_by_forgets_never_quotes_the_forgotten_memory() -> None:
    """The seven steps the machine shrank a failure to (it met them only in some runs of several
    test files together, the texts it draws depending on what ran before). The week is made
    from 10 November's summary, which holds one memory; the memory is forgotten (the day is
    marked stale) before the week's version is stored, and the day's re-make, finding nothing
    live, deletes the day. The writer looked for its sources' hiding among stored records only,
    so the week was stored quoting the forgotten memory; a source stored no more now counts
    when its trail shows it hidden since the version was made."""
    # GIVEN the machine, and the steps it shrank a failure to
    machine = WritesRacingForgets()
    steps: list[tuple[str, dict[str, Any]]] = [
        ("forget_before_a_queued_refresh", {"day": DAYS[1], "hour": 0}),
        ("write", {"day": DAYS[1], "hour": 0}),
        ("forget_before_a_queued_refresh", {"day": DAYS[0], "hour": 0}),
        ("forget_before_a_queued_refresh", {"day": DAYS[0], "hour": 0}),
        ("remake_day", {"day": DAYS[0]}),
        ("forget", {"pick": 0}),
        ("forget_before_a_queued_refresh", {"day": DAYS[0], "hour": 0}),
    ]
    # WHEN they run, and the queues drain; THEN no summary quotes a forgotten memory
    for name, arguments in steps:
        getattr(machine, name)(**arguments)
        machine.every_step()
    machine.teardown()
