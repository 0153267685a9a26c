"""Remember faithfully, forget exactly: a stateful property test of the whole write → merge →
summarize → retention → forget life of one agent's memory, against a plain reference model.

The machine drives the real services on the embedded adapters (the write service, the local FIFO
queue and the real writer, the forget service, the summarize and dispatch services on the local
job queue, retention) on a clock it moves. Its model is only the list of writes that were
answered ``202`` and which of them a rule the model applied (forget, erase) or a rule the
service applied and named in the audit trail (retention) has removed. After every step:

1. every accepted write that no rule removed is readable by its id (or the alias it was merged
   under), live, and holds the write's text verbatim (as its content or in ``merged_from``);
2. no live record or summary holds the text of a forgotten write or an erased user's write
   (summaries made from one are hidden at once and re-made without it);
3. no record mixes two end users: the record a write is read from has that write's ``user_id``;
4. a retention run deletes only records that a summary still live after the run lists in its
   ``source_ids`` (yearly summaries go by their plan alone), and names each in the audit trail.

Writes come from two end users and nobody, in two conversations and none, as near-identical
sentences that differ in a number, an amount, a code or a weekday, on today, recent, late (into
periods already summarized) and old (history import) dates.

The same machine runs on the OpenSearch node ``OPENSEARCH_URL`` names (tests/opensearch_cluster.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from tests.fakes import FixedClock
from tests.strategies import examples
from tests.unit.services.cascade_world import CALLER, TENANT, Cascade, build
from tests.unit.services.conftest import World, make_world

from agent_memory.cascade.rules.periods import key_for_day
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.governance.retention import RetentionService
from agent_memory.governance.rules.plans import DEFAULT_PLANS
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import AuditAction, AuditQuery, ListQuery, MemoryStore
from agent_memory.supersession.rules.claims import claims

AGENT = "helper"
START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

#: Near-identical sentences: only the particulars differ, so their embeddings are close.
TEMPLATES: tuple[Callable[[int], str], ...] = (
    lambda n: f"Paid invoice {n} of ${n - 500} to Acme Corp.",
    lambda n: f"My phone number is 555-{n} and I live at {n % 7 + 10} Baker Street in Berlin.",
    lambda n: f"The vault code is {n}.",
    # facts whose value changes: a newer one supersedes an older one of the same end user
    lambda n: f"I moved to {('Berlin', 'Lisbon', 'Porto')[n % 3]} last month.",
    lambda n: f"My favourite drink is {('green tea', 'black coffee', 'chai')[n % 3]}.",
    lambda n: f"Team standup moved to {('Monday', 'Tuesday', 'Friday')[n % 3]} at 9.",
    lambda n: "We agreed to ship the release after the security review.",
    # long sentences with one particular: closer than any merge threshold by wording alone
    lambda n: (
        f"Paid invoice {n} to Acme Corp for the yearly cloud hosting, support and maintenance "
        "contract renewal, as agreed with the finance team and the operations lead last spring."
    ),
    lambda n: (
        f"The quarterly planning offsite with the whole product, design and engineering group is "
        f"booked at the lakeside venue near the old harbour on {('Monday', 'Tuesday', 'Friday')[n % 3]}."
    ),
)
NUMBERS = (1001, 1002, 1003)
USERS = (None, "u1", "u2")
CONVERSATIONS = (None, "c1", "c2")
#: today, recent, late into periods likely summarized, and history older than any working window
DAYS_AGO = (0, 0, 1, 3, 9, 45, 400)
PLANS = ("free", "starter", "pro", "unlimited")
WRITES = st.tuples(
    st.integers(0, len(TEMPLATES) - 1),
    st.sampled_from(NUMBERS),
    st.sampled_from(USERS),
    st.sampled_from(CONVERSATIONS),
    st.sampled_from(DAYS_AGO),
    st.sampled_from((0, 1, 5)),
)
SUMMARY_GRAINS = (Grain.DAILY, Grain.WEEKLY, Grain.MONTHLY, Grain.QUARTERLY, Grain.YEARLY)


@dataclass
class Accepted:
    """One write the service answered 202, as the model remembers it."""

    id: str
    text: str
    user: str | None
    removed_by: str | None = None


class OpenSearchWorld:
    """Swaps the world's store for an empty OpenSearch alias (refresh on write), when asked to:
    one alias for every example of the run, emptied after each (creating three k-NN indexes per
    example would cost more than the example)."""

    _shared: dict[tuple[int, str], Any] = {}

    def __init__(self) -> None:
        from tests.opensearch_cluster import cluster_client, cluster_url

        self.client = cluster_client(cluster_url())
        self.indexes: Any = None

    def store(self, dimension: int, model_id: str) -> MemoryStore:
        from tests.opensearch_cluster import Indexes

        from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore

        key = (dimension, model_id)
        if key not in self._shared:
            self._shared[key] = Indexes(self.client, dimension, model_id, prefix="stateful")
        self.indexes = self._shared[key]
        return OpenSearchStore(self.client, self.indexes.alias, dimension, model_id, refresh=True)

    def close(self) -> None:
        if self.indexes is not None:
            self.indexes.clear()


class KeepingAndForgetting(RuleBasedStateMachine):
    STORE = "sqlite"

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="keeping-"))
        self.clock = FixedClock(START)
        self.world: World = make_world(self.dir, self.clock)
        self.opensearch: OpenSearchWorld | None = None
        if self.STORE == "opensearch":
            self.opensearch = OpenSearchWorld()
            self._use_store(
                self.opensearch.store(self.world.embedder.dimension, self.world.embedder.model_id)
            )
        self.cascade: Cascade = build(self.world, self.dir)
        self.accepted: list[Accepted] = []
        self._occurred_at: dict[str, str] = {}
        self._conversations: dict[str, str | None] = {}

    def _use_store(self, store: MemoryStore) -> None:
        """Point every service of the world at ``store`` (they were built on SQLite)."""
        from agent_memory.governance.forget import ForgetService
        from agent_memory.recall.memories import MemoriesService
        from agent_memory.recall.rules.ranking import RankingWeights
        from agent_memory.recall.search import SearchService
        from agent_memory.writing.writer import WriterService

        w = self.world
        w.store = store  # type: ignore[assignment]
        w.writer = WriterService(store, w.embedder, w.pending, w.queue, w.clock, dedup_threshold=0.92)
        w.search = SearchService(store, w.embedder, w.clock, RankingWeights())
        w.memories = MemoriesService(store, w.pending, w.clock)
        w.forget = ForgetService(store, w.forget._jobs, w.clock)

    def teardown(self) -> None:
        if self.opensearch is not None:
            self.opensearch.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        discard_unpublished_metrics()

    # --- what the store holds -------------------------------------------------------------------

    @property
    def store(self) -> MemoryStore:
        return self.world.store

    def live_records(self) -> dict[str, MemoryRecord]:
        now = self.clock.now()
        records: dict[str, MemoryRecord] = {}
        cursor = None
        while True:
            page = self.store.list(ListQuery(TENANT, AGENT, now, limit=100, cursor=cursor))
            records.update((r.id, r) for r in page.records)
            cursor = page.next_cursor
            if cursor is None:
                return records

    def read(self, write_id: str) -> MemoryRecord | None:
        record = self.store.get(TENANT, AGENT, write_id)
        return record if record is not None and record.is_live(self.clock.now()) else None

    def kept(self) -> list[Accepted]:
        return [a for a in self.accepted if a.removed_by is None]

    def audited(self, record_id: str, action: str) -> bool:
        page = self.store.audit_events(AuditQuery(TENANT, AGENT, record_id=record_id, limit=100, cursor=None))
        return any(e.action == action for e in page.events)

    # --- rules ----------------------------------------------------------------------------------

    @initialize(history=st.lists(WRITES, min_size=2, max_size=8))
    def some_history(self, history: list[tuple[int, int, str | None, str | None, int, int]]) -> None:
        """Start from a few writes (the machine's other rules have something to act on)."""
        for args in history:
            self.write(*args)

    @rule(args=WRITES)
    def write_one(self, args: tuple[int, int, str | None, str | None, int, int]) -> None:
        self.write(*args)

    def write(
        self, template: int, number: int, user: str | None, conversation: str | None, days_ago: int, hour: int
    ) -> None:
        text = TEMPLATES[template](number)
        at = self.clock.now() - timedelta(days=days_ago, hours=hour)
        item: dict[str, Any] = {"content": text, "occurred_at": at.isoformat(), "importance": 0.5}
        if user:
            item["user_id"] = user
        if conversation:
            item["conversation_id"] = conversation
        self._accept(item)

    @precondition(lambda self: bool(self.accepted))
    @rule(pick=st.integers(0, 10**6))
    def write_again(self, pick: int) -> None:
        """The same write again (a client retry, or a write of something forgotten before)."""
        earlier = self.accepted[pick % len(self.accepted)]
        record_at = self._occurred(earlier)
        item: dict[str, Any] = {"content": earlier.text, "occurred_at": record_at, "importance": 0.5}
        if earlier.user:
            item["user_id"] = earlier.user
        conversation = self._conversations.get(earlier.id)
        if conversation:
            item["conversation_id"] = conversation
        self._accept(item)

    @precondition(lambda self: bool(self.kept()))
    @rule(pick=st.integers(0, 10**6))
    def forget(self, pick: int) -> None:
        self._tick()
        kept = self.kept()
        target = kept[pick % len(kept)]
        record = self.read(target.id)
        assert record is not None
        self.world.forget.forget(TENANT, AGENT, target.id, actor="key_test")
        for a in self.kept():
            held = self.read(a.id)
            if held is None or held.id == record.id:
                a.removed_by = "forget"

    @rule(user=st.sampled_from(("u1", "u2")))
    def erase_user(self, user: str) -> None:
        self._tick()
        self.world.forget.erase_user(TENANT, AGENT, user, actor="key_test")
        for a in self.kept():
            if a.user == user:
                a.removed_by = "erase"

    @rule(grain=st.sampled_from(SUMMARY_GRAINS), days_ago=st.sampled_from((1, 2, 8, 40, 100, 400)))
    def summarize(self, grain: Grain, days_ago: int) -> None:
        self._tick()
        key = key_for_day(grain, (self.clock.now() - timedelta(days=days_ago)).date())
        self.cascade.dispatch.dispatch_period(grain, key, "backfill")
        self.cascade.run()

    @rule()
    def run_jobs(self) -> None:
        """Work the job queue: re-makes after a forget, summaries retention asked for."""
        self._tick()
        self.cascade.run()

    @rule(plan=st.sampled_from(PLANS), quota=st.sampled_from((3, 10_000)))
    def retention(self, plan: str, quota: int) -> None:
        self._tick()
        before = self.live_records()
        service = RetentionService(
            self.store,
            _OnePlan(plan),
            self.clock,
            DEFAULT_PLANS,
            self.cascade.jobs,
            max_working=quota,
        )
        service.run()
        discard_unpublished_metrics()
        after = self.live_records()
        lister = {s: r.id for r in before.values() if r.grain is not Grain.WORKING for s in r.source_ids}
        for gone in set(before) - set(after):
            # held by a live summary's sources, up a chain of summaries that ends in one still live
            # (or in a yearly summary, which goes by its plan alone)
            node = before[gone]
            while node.id not in after and node.grain is not Grain.YEARLY:
                parent = lister.get(node.id)
                assert parent is not None, (
                    f"retention ({plan}, quota {quota}) deleted {before[gone].grain.value} {gone} "
                    f"({before[gone].content[:60]!r}, occurred {before[gone].occurred_at:%Y-%m-%d}): "
                    f"no live summary lists {node.grain.value} {node.id}"
                )
                node = before[parent]
            assert self.audited(gone, AuditAction.RETENTION), (
                f"retention deleted {gone} without an audit event"
            )
        for a in self.kept():
            if self.read(a.id) is None:
                a.removed_by = "retention"

    @rule(days=st.sampled_from((1, 2, 7, 30)))
    def clock_moves(self, days: int) -> None:
        self.clock.advance(days=days)

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def every_kept_write_is_readable_faithfully_and_unmixed(self) -> None:
        for a in self.kept():
            record = self.read(a.id)
            assert record is not None, f"accepted write {a.id} ({a.text!r}) is gone and no rule removed it"
            held = [record.content, *(m.content for m in getattr(record, "merged_from", []))]
            assert a.text in held, (
                f"write {a.id} ({a.text!r}) is read as {record.content!r}: its text is lost"
            )
            assert record.user_id == a.user, (
                f"write {a.id} of user {a.user} is held by record {record.id} of user {record.user_id}"
            )

    @invariant()
    def nothing_forgotten_or_erased_is_held(self) -> None:
        # a text some write holds that no forget or erasure removed (kept, or summarized and then
        # deleted by retention) may still be read in summaries
        allowed = {a.text for a in self.accepted if a.removed_by not in ("forget", "erase")}
        gone = {a.text for a in self.accepted if a.removed_by in ("forget", "erase")} - allowed
        if not gone:
            return
        for record in self.live_records().values():
            held = [record.content, *(m.content for m in getattr(record, "merged_from", []))]
            for text in gone:
                assert not any(text in h for h in held), (
                    f"{record.grain.value} {record.id} still holds {text!r}, which was forgotten or erased"
                )

    @invariant()
    def one_value_holds_per_user_and_supersession_never_crosses_users(self) -> None:
        live = {r.id: r for r in self.live_records().values() if r.grain is Grain.WORKING}
        holding: dict[tuple[str | None, str], set[str]] = {}
        for record in live.values():
            for other_id in (*record.supersedes, *([record.superseded_by] if record.superseded_by else [])):
                other = live.get(other_id)
                assert other is None or other.user_id == record.user_id, (
                    f"{record.id} of {record.user_id!r} is linked to {other_id} of another end user"
                )
            if record.superseded_by is None:
                for claim in claims(record.content):
                    holding.setdefault((record.user_id, claim.attribute), set()).add(claim.value)
        for (user, attribute), values in holding.items():
            assert len(values) <= 1, f"{user!r} has {sorted(values)} all current for {attribute}"

    # --- helpers --------------------------------------------------------------------------------

    def _accept(self, item: dict[str, Any]) -> None:
        self._tick()
        ids = self.world.write.accept(
            CALLER, AGENT, WriteRequest(items=[WriteItem.model_validate(item)]).to_new_memories()
        )
        self.world.drain()
        discard_unpublished_metrics()
        for record_id in ids:
            self._occurred_at[record_id] = item["occurred_at"]
            self._conversations[record_id] = item.get("conversation_id")
            # a write accepted again is expected back whatever happened to it before
            for a in self.accepted:
                if a.id == record_id:
                    a.removed_by = None
            self.accepted.append(Accepted(record_id, item["content"], item.get("user_id")))

    def _tick(self) -> None:
        """A real clock moves between two requests (the writer orders a forget and a write by time)."""
        self.clock.advance(milliseconds=1)

    def _occurred(self, a: Accepted) -> str:
        return self._occurred_at[a.id]


def test_a_summary_of_a_write_absorbed_later_goes_stale_when_the_absorbing_record_is_forgotten() -> None:
    """The machine's find, replayed: a write forgotten, purged by retention and written again is
    summarized under its id, then absorbed by a record written meanwhile; forgetting that record
    must reach the summary (it listed only the absorbed id, and the forget looked for its own)."""
    machine = KeepingAndForgetting()
    checks = (
        machine.every_kept_write_is_readable_faithfully_and_unmixed,
        machine.nothing_forgotten_or_erased_is_held,
    )
    steps: list[Callable[[], None]] = [
        lambda: machine.some_history(history=[(0, 1001, None, None, 0, 0)] * 8),
        *[lambda: machine.clock_moves(days=1)] * 6,
        lambda: machine.forget(pick=0),
        *[lambda: machine.clock_moves(days=1)] * 2,
        lambda: machine.write_again(pick=0),
        lambda: machine.retention(plan="free", quota=3),
        lambda: machine.clock_moves(days=1),
        lambda: machine.summarize(days_ago=1, grain=Grain.DAILY),
        lambda: machine.retention(plan="free", quota=3),
        *[lambda: machine.clock_moves(days=1)] * 5,
        lambda: machine.write_again(pick=1),
        lambda: machine.write_again(pick=0),
        lambda: machine.forget(pick=0),
    ]
    try:
        # WHEN each step runs, THEN every invariant holds after it
        for step in steps:
            step()
            for check in checks:
                check()
    finally:
        machine.teardown()


class _OnePlan:
    def __init__(self, plan: str) -> None:
        self.plan = plan

    def plan_of(self, tenant_id: str) -> str | None:
        return self.plan


KeepingAndForgetting.TestCase.settings = settings(
    max_examples=examples(60),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
test_keeping_and_forgetting_on_sqlite = KeepingAndForgetting.TestCase
