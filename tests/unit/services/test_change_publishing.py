"""Every change the services make is published once, as it is made: a memory stored, merged,
superseded (and that undone), feedback counted, a restore, a forget, an erasure, a summary
stored. A message delivered again publishes the same event again (same id); a feed that fails
never fails the change."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from tests.fakes import FailingFeed, FixedClock, RecordingFeed
from tests.unit.services.conftest import World, make_world

from agent_memory.contract.v1 import WriteRequest
from agent_memory.experience.feedback import FeedbackApplier, FeedbackService
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.feed.rules.events import ChangeType
from agent_memory.governance.forget import ForgetService
from agent_memory.governance.history import HistoryService
from agent_memory.model.caller import Caller
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import Grain
from agent_memory.model.ids import content_hash
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.writing.writer import WriterService

ACME = Caller("acme", key_id="key_a")
BERLIN = "I live in Berlin, in a flat near Tempelhof."
LISBON = "I moved to Lisbon last week, my new flat is in Alfama."


@dataclass
class Feed:
    world: World
    feed: RecordingFeed
    forget: ForgetService
    feedback: FeedbackService
    applier: FeedbackApplier
    history: HistoryService

    def write(self, content: str, **fields: object) -> str:
        item = {"content": content, **fields}
        [rid] = self.world.write.accept(
            ACME, "bot", WriteRequest.model_validate({"items": [item]}).to_new_memories()
        )
        return rid

    def drain(self) -> None:
        w = self.world
        while batch := w.queue.receive(10):
            for p in w.writer.prepare([m.body for m in batch]):
                if p.feedback is not None:
                    self.applier.apply(p.feedback)
                else:
                    assert p.command is not None, p.poison_reason
                    w.writer.apply(p.command, p.vector)
            w.queue.ack(m.receipt_handle for m in batch)

    def types(self) -> list[str]:
        return [e.type.value for e in self.feed.events]


def _with_feed(world: World, feed: object) -> Feed:
    clock = world.clock
    world.writer = WriterService(world.store, world.embedder, world.pending, world.queue, clock, feed=feed)  # type: ignore[arg-type]
    jobs = world.forget._jobs  # the forget's re-make jobs go where the world's do
    return Feed(
        world=world,
        feed=feed,  # type: ignore[arg-type]
        forget=ForgetService(world.store, jobs, clock, feed=feed),  # type: ignore[arg-type]
        feedback=FeedbackService(world.store, world.queue, world.pending, clock),
        applier=FeedbackApplier(world.store, world.pending, clock, feed=feed),  # type: ignore[arg-type]
        history=HistoryService(world.store, world.queue, world.pending, clock, feed=feed),  # type: ignore[arg-type]
    )


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Feed:
    return _with_feed(make_world(tmp_path, clock), RecordingFeed())


def _stored_at(lab: Feed, content: str, days_ago: int, clock: FixedClock) -> str:
    """``content`` written as of ``days_ago`` days before now, and stored."""
    record_id = lab.write(content, occurred_at=(clock.now() - timedelta(days=days_ago)).isoformat())
    lab.drain()
    return record_id


def test_a_stored_write_is_one_created_event_with_its_words(lab: Feed) -> None:
    # GIVEN
    rid = lab.write("Alice moved the launch to March 3.", user_id="u-7", tags=["launch"])
    # WHEN
    lab.drain()
    # THEN
    [event] = lab.feed.events
    assert (event.type, event.data["memory_id"], event.data["user_id"]) == (
        ChangeType.MEMORY_CREATED,
        rid,
        "u-7",
    )
    assert event.content == {"content": "Alice moved the launch to March 3.", "tags": ["launch"]}


def test_a_write_delivered_again_publishes_the_same_event_again(lab: Feed) -> None:
    # GIVEN a stored write, and its message delivered once more (a redelivery after a crash)
    lab.write("The launch is on March 3.", occurred_at="2026-11-20T10:00:00Z")
    lab.drain()
    lab.write("The launch is on March 3.", occurred_at="2026-11-20T10:00:00Z")
    # WHEN
    lab.drain()
    # THEN the writer found it stored and published its event again, under the same id
    first, again = lab.feed.events
    assert first.id == again.id and first.type == ChangeType.MEMORY_CREATED


def test_a_merged_write_is_one_updated_event_of_the_memory_it_joined(lab: Feed, clock: FixedClock) -> None:
    # GIVEN a memory, and the same words again in the same conversation a minute later
    first = lab.write("Ship the billing fix on Friday.", conversation_id="c1", user_id="u1")
    lab.drain()
    clock.advance(minutes=1)
    # WHEN
    second = lab.write("Ship the billing fix on Friday.", conversation_id="c1", user_id="u1")
    lab.drain()
    # THEN
    created, merged = lab.feed.events
    assert created.type == ChangeType.MEMORY_CREATED
    assert (merged.type, merged.data["memory_id"], merged.data["change"]) == (
        ChangeType.MEMORY_UPDATED,
        first,
        "merged",
    )
    assert (
        merged.data["absorbed"] == second and merged.content["content"] == "Ship the billing fix on Friday."
    )


def test_a_merged_write_delivered_again_publishes_the_merge_again(lab: Feed, clock: FixedClock) -> None:
    # GIVEN a write merged into an earlier one
    lab.write("Ship the billing fix on Friday.", conversation_id="c1", user_id="u1")
    lab.drain()
    clock.advance(minutes=1)
    at = clock.now().isoformat()
    lab.write("Ship the billing fix on Friday.", conversation_id="c1", user_id="u1", occurred_at=at)
    lab.drain()
    # WHEN its message comes again (found by its alias)
    lab.write("Ship the billing fix on Friday.", conversation_id="c1", user_id="u1", occurred_at=at)
    lab.drain()
    # THEN the merge's event again, same id
    _, merged, again = lab.feed.events
    assert merged.data["change"] == "merged" and again.id == merged.id


def test_a_supersession_is_the_new_memory_created_and_the_old_one_updated(
    lab: Feed, clock: FixedClock
) -> None:
    # GIVEN Berlin
    berlin = _stored_at(lab, BERLIN, 200, clock)
    # WHEN Lisbon supersedes it
    lisbon = _stored_at(lab, LISBON, 100, clock)
    # THEN
    assert lab.types() == ["memory.created", "memory.updated", "memory.created"]
    updated, created = lab.feed.events[1:]
    assert (updated.data["memory_id"], updated.data["change"], updated.data["by"]) == (
        berlin,
        "superseded",
        lisbon,
    )
    assert created.data["memory_id"] == lisbon and created.data["supersedes"] == [berlin]


def test_forgetting_is_one_forgotten_event_and_the_supersession_it_undoes_an_update(
    lab: Feed, clock: FixedClock
) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _stored_at(lab, BERLIN, 200, clock)
    lisbon = _stored_at(lab, LISBON, 100, clock)
    lab.feed.events.clear()
    # WHEN Lisbon is forgotten
    lab.forget.forget("acme", "bot", lisbon, actor="key_a")
    # THEN Berlin holds again (an update) and Lisbon is forgotten, with no words in either
    assert sorted(lab.types()) == ["memory.forgotten", "memory.updated"]
    [forgotten] = lab.feed.of_type(ChangeType.MEMORY_FORGOTTEN)
    [undone] = lab.feed.of_type(ChangeType.MEMORY_UPDATED)
    assert (forgotten.data["memory_id"], forgotten.data["actor"], forgotten.content) == (
        lisbon,
        "key_a",
        None,
    )
    assert (undone.data["memory_id"], undone.data["change"]) == (berlin, "supersession_undone")


def test_an_erasure_is_one_event_naming_every_memory_it_took_and_none_when_it_took_nothing(lab: Feed) -> None:
    # GIVEN two memories of one end user and one of another
    mine = [lab.write("I prefer tea.", user_id="u1"), lab.write("My dog is called Rex.", user_id="u1")]
    lab.write("I prefer coffee.", user_id="u2")
    lab.drain()
    lab.feed.events.clear()
    # WHEN u1 is erased, then erased again
    lab.forget.erase_user("acme", "bot", "u1", actor="key_a")
    lab.forget.erase_user("acme", "bot", "u1", actor="key_a")
    # THEN one event, for the erasure that changed something
    [event] = lab.feed.events
    assert (event.type, event.data["user_id"]) == (ChangeType.USER_ERASED, "u1")
    assert sorted(event.data["memory_ids"]) == sorted(mine)


def test_feedback_counted_is_one_update_and_a_redelivery_the_same_event(lab: Feed) -> None:
    # GIVEN an experience, and a feedback on it delivered twice
    rid = lab.write("The login handler builds SQL from raw input.", kind="failure", run_id="r1")
    lab.drain()
    lab.feed.events.clear()
    lab.feedback.accept(ACME, "bot", rid, FeedbackOutcome.CONFIRMED, note="seen again in run 2")
    [message] = lab.world.queue.receive(1)
    [prepared] = lab.world.writer.prepare([message.body])
    assert prepared.feedback is not None
    # WHEN
    lab.applier.apply(prepared.feedback)
    lab.applier.apply(prepared.feedback)
    # THEN
    first, again = lab.feed.events
    assert first.id == again.id
    assert (first.data["change"], first.data["outcome"], first.content) == (
        "feedback",
        "confirmed",
        {"note": "seen again in run 2"},
    )
    assert "seen again" not in str(first.data)


def test_a_restore_is_one_update_of_the_memory_and_one_of_the_memory_on_the_other_side(
    lab: Feed, clock: FixedClock
) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _stored_at(lab, BERLIN, 200, clock)
    lisbon = _stored_at(lab, LISBON, 100, clock)
    lab.feed.events.clear()
    # WHEN an admin restores Berlin's first version
    lab.history.restore("acme", "bot", berlin, 1, actor="admin-key")
    # THEN
    changes = {(e.data["memory_id"], e.data["change"]) for e in lab.feed.events}
    assert changes == {(berlin, "restored"), (lisbon, "supersession_undone")}


def test_a_summary_stored_by_the_writer_is_one_summary_made_event(lab: Feed, clock: FixedClock) -> None:
    # GIVEN a daily summary's write, as the summarize worker queues it
    now = clock.now()
    summary = MemoryRecord(
        id="sum_aaaaaaaaaaaaaaaa",
        tenant_id="acme",
        agent_id="bot",
        grain=Grain.DAILY,
        time_key="2026-11-21",
        kind=MemoryKind.SUMMARY,
        content="[2026-11-21] The launch moved to March 3.",
        content_hash=content_hash("[2026-11-21] The launch moved to March 3."),
        source_ids=["mem_bbbbbbbbbbbbbbbb"],
        metadata={"input_hash": "h1"},
        created_at=now,
        updated_at=now,
        occurred_at=now - timedelta(days=1),
    )
    # WHEN it is stored, and its message delivered again
    for _ in range(2):
        lab.world.writer.apply(WriteCommand(op="upsert", record=summary))
    # THEN
    first, again = lab.feed.events
    assert first.type == ChangeType.SUMMARY_MADE and first.id == again.id
    assert (first.data["summary_id"], first.data["time_key"], first.data["source_ids"]) == (
        summary.id,
        "2026-11-21",
        ["mem_bbbbbbbbbbbbbbbb"],
    )


def test_a_failing_feed_never_fails_the_change(tmp_path: Path, clock: FixedClock) -> None:
    # GIVEN services whose feed raises on every publish
    feed = FailingFeed()
    lab = _with_feed(make_world(tmp_path, clock), feed)
    rid = lab.write("The launch is on March 3.")
    # WHEN the write is stored and then forgotten
    lab.drain()
    result = lab.forget.forget("acme", "bot", rid, actor="key_a")
    # THEN both happened; the feed was asked each time
    assert result.forgotten == [rid]
    stored = lab.world.store.get("acme", "bot", rid)
    assert stored is not None and stored.deleted_at is not None
    assert feed.calls == 2
