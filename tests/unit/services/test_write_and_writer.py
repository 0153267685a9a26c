"""The hot path without HTTP: accept -> FIFO -> writer -> store."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.model.caller import Caller
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditQuery, QueueMessage
from agent_memory.writing.writer import WriterService

ACME = Caller("acme", key_id="key_a")


def _write(world: World, *contents: str, agent: str = "bot", **fields: object) -> list[str]:
    request = WriteRequest.model_validate({"items": [{"content": c, **fields} for c in contents]})
    return world.write.accept(ACME, agent, request.to_new_memories())


def test_accepted_write_is_queued_on_the_agents_working_group_and_counted_pending(world: World) -> None:
    # GIVEN two memories for one agent
    ids = _write(world, "Alice moved the launch to March 3.", "Bob owns the checklist.")
    # WHEN / THEN both wait in the queue, on the tenant:agent:working group, and count as pending
    batch = world.queue.receive(10)
    assert [m.group_id for m in batch] == ["acme:bot:working"] * 2
    assert [WriteCommand.model_validate_json(m.body).record.id for m in batch] == ids
    assert world.pending.count("acme", "bot") == 2
    assert world.pending.count("acme", "other") == 0


def test_retrying_the_same_write_yields_the_same_id_and_one_record(world: World) -> None:
    # GIVEN
    item = {"occurred_at": "2026-11-20T14:03:00Z"}
    first = _write(world, "Alice moved the launch to March 3.", **item)
    world.clock.advance(seconds=1)
    # WHEN
    again = _write(world, "Alice moved the launch to March 3.", **item)
    # THEN
    assert first == again
    # each acceptance is its own message (the queue drops none); the writer stores one record
    assert world.drain() == ["inserted", "replayed"]
    assert world.memories.stats("acme", "bot").records["working"] == 1


def test_a_write_accepted_again_after_a_forget_is_stored_again(world: World) -> None:
    # GIVEN a write, stored, then forgotten
    item = {"occurred_at": "2026-11-20T14:03:00Z"}
    [record_id] = _write(world, "The vault code is 4417.", **item)
    world.drain()
    world.forget.forget("acme", "bot", record_id, actor="test")
    # WHEN the same write is accepted again a minute later (inside the queue's dedup window)
    world.clock.advance(minutes=1)
    assert _write(world, "The vault code is 4417.", **item) == [record_id]
    # THEN it is stored again, not dropped as a duplicate message
    assert world.drain() == ["inserted"]
    record = world.store.get("acme", "bot", record_id)
    assert record is not None and record.deleted_at is None


def test_two_acceptances_within_one_clock_tick_are_two_messages(world: World) -> None:
    # GIVEN a write stored and forgotten, then accepted again at the very same instant
    item = {"occurred_at": "2026-11-20T14:03:00Z"}
    [record_id] = _write(world, "The vault code is 4417.", **item)
    world.drain()
    world.forget.forget("acme", "bot", record_id, actor="test")
    _write(world, "The vault code is 4417.", **item)
    # WHEN / THEN the queue holds the second acceptance: nothing decides by the clock that it is a repeat
    assert len(world.queue.receive(10)) == 1


def test_a_forgotten_write_accepted_again_is_its_own_record_not_an_alias_behind_its_tombstone(
    world: World,
) -> None:
    # GIVEN a write and a near duplicate later that day merged into it, then both forgotten
    [first] = _write(
        world, "We agreed to ship the release after the security review.", occurred_at="2026-11-20T09:00:00Z"
    )
    [second] = _write(
        world, "We agreed to ship the release after the security review.", occurred_at="2026-11-20T10:00:00Z"
    )
    assert world.drain() == ["inserted", "merged"]
    world.forget.forget("acme", "bot", first, actor="test")
    # WHEN the later one is written again (stored as its own record), then the first one
    world.clock.advance(minutes=1)
    _write(
        world, "We agreed to ship the release after the security review.", occurred_at="2026-11-20T10:00:00Z"
    )
    world.clock.advance(minutes=1)
    _write(
        world, "We agreed to ship the release after the security review.", occurred_at="2026-11-20T09:00:00Z"
    )
    assert world.drain() == ["inserted", "inserted"]
    # THEN both ids read live records: the first is not merged away under the id its tombstone holds
    for record_id in (first, second):
        record = world.store.get("acme", "bot", record_id)
        assert record is not None and record.id == record_id and record.deleted_at is None


def test_writer_stores_records_and_clears_pending(world: World) -> None:
    # GIVEN
    ids = _write(world, "Alice moved the launch to March 3.", ttl_days=30, tags=["launch", "launch"])
    # WHEN / THEN
    assert world.drain() == ["inserted"]
    record = world.store.get("acme", "bot", ids[0])
    assert record is not None and record.grain is Grain.WORKING
    assert record.tags == ["launch"]  # duplicates collapsed on accept
    assert record.expires_at == world.clock.now() + timedelta(days=30)
    assert world.pending.count("acme", "bot") == 0


def test_near_duplicate_is_merged_into_the_existing_record(world: World) -> None:
    # GIVEN
    first = _write(world, "The quarterly planning meeting with the design team moved to Thursday afternoon.")
    world.drain()
    world.clock.advance(hours=1)
    second = _write(
        world,
        "The quarterly planning meeting with the design team moved to Thursday afternoon!!",
        importance=0.9,
        tags=["planning"],
    )
    # WHEN / THEN
    assert world.drain() == ["merged"]
    merged = world.store.get("acme", "bot", second[0])  # the alias resolves
    assert merged is not None and merged.id == first[0]
    assert merged.content.endswith("!!")
    assert merged.importance == 0.9 and merged.tags == ["planning"]
    assert merged.access_count == 1 and merged.updated_at == world.clock.now()
    assert world.memories.stats("acme", "bot").records["working"] == 1


def test_unrelated_write_is_not_merged(world: World) -> None:
    # GIVEN
    _write(world, "The quarterly planning meeting moved to Thursday afternoon.")
    # WHEN
    _write(world, "Invoice 4411 for 1,200 EUR was approved by Dana.")
    # THEN
    assert world.drain() == ["inserted", "inserted"]


def test_a_merge_keeps_every_write_verbatim_both_times_and_is_audited(world: World) -> None:
    # GIVEN
    text = "The quarterly planning meeting with the design team moved to Thursday afternoon."
    [first] = _write(world, text)
    world.drain()
    world.clock.advance(hours=1)
    [second] = _write(world, text + "!!")
    # WHEN / THEN
    assert world.drain() == ["merged"]
    merged = world.store.get("acme", "bot", first)
    assert merged is not None
    assert [(m.id, m.content) for m in merged.merged_from] == [(first, text), (second, text + "!!")]
    assert merged.last_seen_at == world.clock.now() and merged.occurred_at < merged.last_seen_at
    [event] = world.store.audit_events(AuditQuery("acme", "bot", record_id=first)).events
    assert (event.action, event.detail["absorbed"]) == ("merged", second)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Paid invoice 1001 of $500 to Acme Corp.", "Paid invoice 1002 of $500 to Acme Corp."),
        ("The vault code is 7731.", "The vault code is 7732."),
        ("Call me on 555-1234 please.", "Call me on 555-9876 please."),
        ("Send the report to ana@example.com today.", "Send the report to bob@example.com today."),
        ("Hannah signed the lease for the flat.", "Maria signed the lease for the flat."),
        ("The deadline moved to March.", "The deadline moved to April."),
        ("See https://example.com/a for the spec.", "See https://example.com/b for the spec."),
    ],
)
def test_texts_that_differ_in_a_particular_are_never_merged(world: World, older: str, newer: str) -> None:
    # GIVEN a writer whose cosine threshold would merge them all: the particulars alone decide
    world.writer = WriterService(
        world.store, world.embedder, world.pending, world.queue, world.clock, dedup_threshold=0.5
    )
    # WHEN the older text is stored, then the newer one five minutes later
    _write(world, older)
    world.drain()
    world.clock.advance(minutes=5)
    _write(world, newer)
    # THEN the newer one is inserted as a record of its own
    assert world.drain() == ["inserted"]
    assert world.memories.stats("acme", "bot").records["working"] == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"user_id": "u1"}, {"user_id": "u2"}),
        ({"user_id": "u1"}, {}),
        ({"conversation_id": "c1"}, {"conversation_id": "c2"}),
        ({"occurred_at": "2026-11-10T10:00:00Z"}, {"occurred_at": "2026-11-20T10:00:00Z"}),
        ({"role": "user"}, {"role": "assistant"}),
    ],
)
def test_the_same_words_of_two_users_conversations_days_or_speakers_stay_apart(
    world: World, first: dict[str, str], second: dict[str, str]
) -> None:
    # GIVEN
    text = "My phone number is on the fridge and I live near the old station."
    a = _write(world, text, **first)
    world.drain()
    b = _write(world, text, **second)
    # WHEN / THEN
    assert world.drain() == ["inserted"]
    for ids, fields in ((a, first), (b, second)):
        record = world.store.get("acme", "bot", ids[0])
        assert record is not None and record.id == ids[0] and record.merged_from == []
        assert record.user_id == fields.get("user_id")


def test_replayed_message_is_confirmed_not_stored_twice(world: World) -> None:
    # GIVEN
    _write(world, "Alice moved the launch to March 3.")
    body = world.queue.receive(1)[0].body
    command = WriteCommand.model_validate_json(body)
    # WHEN / THEN
    assert world.writer.apply(command).value == "inserted"
    assert world.writer.apply(command).value == "replayed"
    assert world.memories.stats("acme", "bot").records["working"] == 1


def test_poison_body_is_flagged_for_the_dead_letter_queue_with_a_reason(world: World) -> None:
    # WHEN
    prepared = world.writer.prepare(['{"v": 1, "record": {"id": "x"}}', "not json"])
    # THEN
    assert [p.command for p in prepared] == [None, None]
    assert all(p.poison_reason and "invalid write command" in p.poison_reason for p in prepared)
    world.writer.dead_letter(
        QueueMessage("acme:bot:working", "d1", "not json"), prepared[1].poison_reason or ""
    )
    [letter] = world.queue.dead_letters()
    assert letter.body == "not json" and "invalid write command" in letter.reason


def test_batch_embedding_failure_falls_back_to_one_record_at_a_time(world: World) -> None:
    # GIVEN
    _write(world, "Alice moved the launch to March 3.")
    body = world.queue.receive(1)[0].body

    # WHEN
    class Flaky:
        model_id, dimension = world.embedder.model_id, world.embedder.dimension
        calls = 0

        def embed(self, texts):  # type: ignore[no-untyped-def]
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise RuntimeError("batch failed")
            return world.embedder.embed(texts)

    # THEN
    writer = WriterService(world.store, Flaky(), world.pending, world.queue, world.clock)
    [prepared] = writer.prepare([body])
    assert prepared.command is not None and prepared.vector is None
    assert writer.apply(prepared.command, prepared.vector).value == "inserted"


def test_queue_failure_rolls_back_pending_and_surfaces_as_dependency_error(world: World) -> None:
    # GIVEN
    class DownQueue:
        def send(self, messages: object) -> None:
            raise DependencyError("queue unavailable")

    world.write._queue = DownQueue()  # type: ignore[assignment]
    # WHEN / THEN
    with pytest.raises(DependencyError):
        _write(world, "Alice moved the launch to March 3.")
    assert world.pending.count("acme", "bot") == 0


def test_conversation_form_shares_conversation_and_user(world: World) -> None:
    # GIVEN
    request = WriteRequest.model_validate(
        {
            "conversation_id": "c-42",
            "user_id": "u-7",
            "messages": [
                {"role": "user", "content": "Ship on March 3?"},
                {"role": "assistant", "content": "Yes."},
            ],
        }
    )
    world.write.accept(ACME, "bot", request.to_new_memories())
    # WHEN
    records = [WriteCommand.model_validate_json(m.body).record for m in world.queue.receive(10)]
    # THEN
    assert {(r.conversation_id, r.user_id, r.kind.value) for r in records} == {
        ("c-42", "u-7", "conversation")
    }
    assert [r.role for r in records] == ["user", "assistant"]
    assert json.loads(records[0].model_dump_json())["tenant_id"] == "acme"
