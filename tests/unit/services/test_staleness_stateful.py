"""Forgets racing re-makes never hide a day for good: a stateful property test of one agent's
week, against a plain reference model (which memories are live, which summaries were forgotten
on purpose).

The machine drives the real write, forget and summarize services and the real writer on the
embedded adapters. A re-make job is run in two steps that other rules may come between: the job
runs (it reads the stale summary and its children and queues its version), later the writer
stores what was queued. A job may also run with a clock that lags the forgets' clock by a few
milliseconds (it took its ``now`` before a forget that it then reads), the interleaving that left
days without a summary when staleness was read in the order events were appended.

After any interleaving and a final drain (the queued jobs and writes, then the schedule of every
day and of the week, as the scheduler would fire them):

1. every day with a live memory has a visible daily summary, unless that summary was forgotten
   on purpose; the week has a visible summary when one of its days does;
2. no visible summary names (``source_ids``) or quotes a forgotten memory;
3. the audit trail agrees: a visible summary's newest event (by event time) among ``stale``,
   ``forget``, ``remade`` and ``emptied`` is ``remade`` or ``emptied`` (made anew after it was
   deleted), or it has none; a hidden one's is not ``remade``.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from tests.fakes import FixedClock
from tests.payloads import FACTS
from tests.strategies import examples
from tests.unit.services.cascade_world import AGENT, CALLER, TENANT, Cascade, build
from tests.unit.services.conftest import World, make_world

from agent_memory.cascade.summarize import ChildNotStoredYetError, SummarizeService
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import AuditAction, AuditQuery, Job

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
#: Three days of ISO week 2026-W46, all ended at ``START``.
DAYS = (date(2026, 11, 9), date(2026, 11, 10), date(2026, 11, 11))
WEEK = "2026-W46"
#: The events that say whether a summary is hidden (``emptied``: deleted, maybe made anew later).
MARKS = (AuditAction.STALE, AuditAction.FORGET, AuditAction.REMADE, AuditAction.EMPTIED)


class LaggingClock:
    """The clock a re-make job read when it started: ``lag`` behind the world's clock."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.lag = timedelta(0)

    def now(self) -> datetime:
        return self.clock.now() - self.lag


@dataclass
class Model:
    """What the machine did: live memories by day, forgotten ones, summaries forgotten on purpose."""

    live: dict[str, tuple[date, str]] = field(default_factory=dict)
    forgotten: dict[str, str] = field(default_factory=dict)
    forgotten_summaries: set[str] = field(default_factory=set)
    unused: list[str] = field(default_factory=lambda: list(FACTS))


class ForgetsRacingRemakes(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="staleness-"))
        self.clock = FixedClock(START)
        self.world: World = make_world(self.dir, self.clock)
        self.world.queue.max_receive_count = 10_000  # a week held back is delivered again
        self.cascade: Cascade = build(self.world, self.dir)
        self.job_clock = LaggingClock(self.clock)
        self.summarize = SummarizeService(
            self.world.store,
            self.cascade.summarizer,
            self.world.queue,
            self.cascade.jobs,
            self.job_clock,
            refresh_delay_s=0,
        )
        self.model = Model()
        self._week = summary_id(TENANT, AGENT, Grain.WEEKLY.value, WEEK)

    def teardown(self) -> None:
        try:
            self.drain()
            self.check()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            discard_unpublished_metrics()

    def _tick(self) -> None:
        self.clock.advance(milliseconds=7)

    # --- rules ----------------------------------------------------------------------------------

    @precondition(lambda self: bool(self.model.unused))
    @rule(day=st.sampled_from(DAYS), hour=st.integers(0, 23))
    def write(self, day: date, hour: int) -> None:
        """A memory of ``day`` is accepted and stored (the writer also stores any queued re-make)."""
        self._tick()
        text = self.model.unused.pop(0)
        at = datetime(day.year, day.month, day.day, hour, tzinfo=UTC)
        item = WriteItem.model_validate({"content": text, "occurred_at": at.isoformat()})
        request = WriteRequest(items=[item])
        [memory_id] = self.world.write.accept(CALLER, AGENT, request.to_new_memories())
        self.store_writes()
        self.model.live[memory_id] = (day, text)

    @precondition(lambda self: bool(self.model.live))
    @rule(pick=st.integers(0, 10**6))
    def forget(self, pick: int) -> None:
        self._tick()
        memory_id = sorted(self.model.live)[pick % len(self.model.live)]
        self.world.forget.forget(TENANT, AGENT, memory_id, actor="key_test")
        self.model.forgotten[memory_id] = self.model.live.pop(memory_id)[1]

    @rule(day=st.sampled_from(DAYS))
    def forget_a_daily_summary(self, day: date) -> None:
        """An agent forgets its summary of ``day`` on purpose: it is never re-made."""
        self._tick()
        sid = summary_id(TENANT, AGENT, Grain.DAILY.value, day.isoformat())
        if self._visible(sid) is not None:
            self.world.forget.forget(TENANT, AGENT, sid, actor="key_test")
            self.model.forgotten_summaries.add(sid)

    @rule(day=st.sampled_from(DAYS))
    def schedule_day(self, day: date) -> None:
        """The day's schedule fires and its summary is made (with the jobs queued before it)."""
        self._queue(Grain.DAILY, day.isoformat())
        self._tick()
        self.cascade.run()

    @rule()
    def schedule_week(self) -> None:
        self._queue(Grain.WEEKLY, WEEK)
        self._tick()
        self.cascade.run()

    @rule(lag_ms=st.sampled_from((0, 3, 10, 30)))
    def run_one_job(self, lag_ms: int) -> None:
        """The oldest queued job (a forget's re-make, or a refresh) runs with a ``now`` taken
        ``lag_ms`` before this instant; its version waits in the write queue until `store_writes`."""
        self._tick()
        self.job_clock.lag = timedelta(milliseconds=lag_ms)
        try:
            batch = self.cascade.jobs_queue.receive(1)
            for message in batch:
                try:
                    self.summarize.run(SummarizeJob.model_validate_json(message.body))
                except ChildNotStoredYetError:
                    self.cascade.jobs_queue.nack([message.receipt_handle])
                    continue
                self.cascade.jobs_queue.ack([message.receipt_handle])
        finally:
            self.job_clock.lag = timedelta(0)
            discard_unpublished_metrics()

    @rule()
    def store_writes(self) -> None:
        """The writer stores everything queued (memories and summary versions)."""
        self._tick()
        self.world.drain()
        discard_unpublished_metrics()

    @rule()
    def store_days_before_the_week(self) -> None:
        """The writer stores the queued day versions and memories, the week's later: days and
        weeks are different message groups, which SQS FIFO delivers in either order."""
        self._tick()
        batch = self.world.queue.receive(10)
        prepared = self.world.writer.prepare([m.body for m in batch])
        later = []
        for message, p in zip(batch, prepared, strict=True):
            assert p.command is not None, p.poison_reason
            if p.command.record.grain is Grain.WEEKLY:
                later.append(message.receipt_handle)
                continue
            self.world.writer.apply(p.command, p.vector)
            self.world.queue.ack([message.receipt_handle])
        self.world.queue.nack(later)
        discard_unpublished_metrics()

    # --- the final drain and its checks ---------------------------------------------------------

    @rule()
    def drain_and_check(self) -> None:
        self.drain()
        self.check()

    def drain(self) -> None:
        self._tick()
        self.cascade.run()
        for day in DAYS:
            self._queue(Grain.DAILY, day.isoformat())
        self._queue(Grain.WEEKLY, WEEK)
        self._tick()
        self.cascade.run()
        discard_unpublished_metrics()

    def check(self) -> None:
        days_with_summary = False
        for day in DAYS:
            sid = summary_id(TENANT, AGENT, Grain.DAILY.value, day.isoformat())
            visible = self._visible(sid)
            live_that_day = [m for m, (d, _) in self.model.live.items() if d == day]
            if sid not in self.model.forgotten_summaries:
                assert (visible is not None) == bool(live_that_day), (
                    f"{day}: {len(live_that_day)} live memories, summary visible: {visible is not None}"
                )
            days_with_summary |= visible is not None
            self._check_summary(sid, visible)
        week = self._week
        visible_week = self._visible(week)
        if days_with_summary:
            assert visible_week is not None, f"{WEEK}: a day has a summary, the week has none"
        self._check_summary(week, visible_week)

    @invariant()
    def no_visible_summary_holds_a_forgotten_memory(self) -> None:
        """Between any two steps, not only after the drain: a forget hides at once."""
        for sid in [*(summary_id(TENANT, AGENT, Grain.DAILY.value, d.isoformat()) for d in DAYS), self._week]:
            self._check_words(sid, self._visible(sid))

    def _check_words(self, sid: str, visible: MemoryRecord | None) -> None:
        if visible is not None:
            named = set(visible.source_ids) & set(self.model.forgotten)
            assert not named, f"{sid} is made from forgotten {sorted(named)}"
            quoted = [t for t in self.model.forgotten.values() if t in visible.content]
            assert not quoted, f"{sid} quotes forgotten {quoted}"

    def _check_summary(self, sid: str, visible: MemoryRecord | None) -> None:
        self._check_words(sid, visible)
        events = self.world.store.audit_events(AuditQuery(TENANT, AGENT, record_id=sid, limit=1000)).events
        # newest appended first: max keeps the first of equals, the one appended later
        marks = [e for e in events if e.action in MARKS]
        newest = max(marks, key=lambda e: e.at, default=None)
        if visible is not None:  # re-made, or made anew after it was emptied (or never hidden)
            assert newest is None or newest.action in (AuditAction.REMADE, AuditAction.EMPTIED), (
                f"{sid} is visible, yet its newest event is {newest.action} at {newest.at}"
            )
        elif newest is not None and self.world.store.get(TENANT, AGENT, sid) is not None:
            assert newest.action != AuditAction.REMADE, f"{sid} is hidden, yet its trail says remade"

    def _visible(self, sid: str) -> MemoryRecord | None:
        record = self.world.store.get(TENANT, AGENT, sid)
        return record if record is not None and record.is_live(self.clock.now()) else None

    def _queue(self, grain: Grain, key: str) -> None:
        job = SummarizeJob(tenant_id=TENANT, agent_id=AGENT, grain=grain, time_key=key)
        self.cascade.jobs.send([Job.of(job)])


ForgetsRacingRemakes.TestCase.settings = settings(
    max_examples=examples(30),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
test_forgets_racing_remakes_never_hide_a_day = ForgetsRacingRemakes.TestCase


def test_a_day_emptied_by_a_lagging_job_and_made_anew_reads_as_made_anew() -> None:
    """Found by the machine: the re-make job's clock lagged the forget's, so its ``emptied``
    event was dated before the ``stale`` mark it answered, and the day made anew later read as
    still stale in its trail."""
    # GIVEN a day summarized, its one memory forgotten, and the re-make run by a lagging job
    machine = ForgetsRacingRemakes()
    machine.write(day=DAYS[0], hour=0)
    machine.drain_and_check()
    machine.forget(pick=0)
    machine.run_one_job(lag_ms=10)
    # WHEN a new memory of that day is written and the day made anew
    machine.write(day=DAYS[0], hour=0)
    # THEN the final checks hold: the day is visible and its trail's newest mark is not "stale"
    machine.teardown()
