"""Hostile queue messages against the writer, and hostile text through the whole write path.

The writer reads what the SQS FIFO queue hands it. A body it cannot parse is poison: it must be
flagged for the dead-letter queue with a reason (never raise, never take its neighbours down).
And whatever the API accepts must come out of the queue and into the store exactly as sent.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from tests.unit.domain.test_fuzz_parsers import HOSTILE_PIECES, hostile
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import WriteRequest
from agent_memory.model.caller import Caller
from agent_memory.model.commands import WriteCommand
from agent_memory.model.records import MemoryRecord

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

VALID_RECORD: dict[str, Any] = {
    "id": "mem_skoaqt6qjcwegul6x5iywf3nzg",
    "tenant_id": "acme",
    "agent_id": "support-bot",
    "content": "Alice moved the launch to March 3.",
    "topic": "launch date",
    "topic_raw": "launch date",
    "tags": ["launch"],
    "content_hash": "daacada0584121ab49c830a50280fe3be6e579f394386232a43cda9ec1564e81",
    "created_at": "2026-11-20T14:05:00Z",
    "updated_at": "2026-11-20T14:05:00Z",
    "occurred_at": "2026-11-20T14:03:00Z",
}
VALID_BODY = json.dumps({"v": 1, "op": "remember", "record": VALID_RECORD})

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10), hostile()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
)
record_fields = st.sampled_from([*MemoryRecord.model_fields, "unknown_field"])


@st.composite
def mutated_commands(draw: st.DrawFn) -> str:
    """A valid command with one field dropped, retyped, added, or an owner id made hostile."""
    command: dict[str, Any] = {"v": 1, "op": "remember", "record": dict(VALID_RECORD)}
    how = draw(st.sampled_from(["drop", "retype", "hostile_owner", "envelope"]))
    field = draw(record_fields)
    if how == "drop":
        command["record"].pop(field, None)
    elif how == "retype":
        command["record"][field] = draw(json_values)
    elif how == "hostile_owner":
        owner = draw(st.sampled_from(["tenant_id", "agent_id", "user_id", "id"]))
        command["record"][owner] = draw(
            st.one_of(hostile(max_pieces=4), st.sampled_from(["../acme", "a:b", ""]))
        )
    else:
        command[draw(st.sampled_from(["v", "op", "record", "extra"]))] = draw(json_values)
    return json.dumps(command, ensure_ascii=draw(st.booleans()))


bodies = st.one_of(
    mutated_commands(),
    st.text(max_size=40),
    hostile(),
    st.just(VALID_BODY),
    st.integers(1, len(VALID_BODY) - 1).map(lambda n: VALID_BODY[:n]),  # truncated in transit
    st.just(VALID_BODY + "\x00"),
    st.just("[" * 5000 + "]" * 5000),  # nested past any recursion limit
    st.just(
        '{"v": 1, "op": "remember", "record": ' + json.dumps({**VALID_RECORD, "content": "x" * 40_000}) + "}"
    ),
)


@FUZZ
@given(batch=st.lists(bodies, min_size=1, max_size=6))
def test_every_body_is_a_command_or_poison_with_a_reason_never_an_error(
    world: World, batch: list[str]
) -> None:
    # WHEN the writer prepares a batch of arbitrary bodies
    prepared = world.writer.prepare(batch)

    # THEN each body gives exactly one result, in order, either a command or a reason to dead-letter
    assert len(prepared) == len(batch)
    for body, result in zip(batch, prepared, strict=True):
        assert (result.command is None) != (result.poison_reason is None)
        if result.command is None:
            reason = result.poison_reason or ""
            assert reason.startswith("invalid write command")
            # a reason is for a person: short, and never the (possibly huge) body itself
            assert len(reason) < 2_000
            assert len(body) < 100 or body not in reason
        else:
            # a body that parses is the command it says, with an embedding for it
            assert result.command == WriteCommand.model_validate_json(body)
            assert result.vector is not None and len(result.vector.search) == world.embedder.dimension


@FUZZ
@given(batch=st.lists(st.one_of(bodies, st.just(VALID_BODY)), min_size=1, max_size=6))
def test_poison_never_stops_the_valid_commands_of_its_batch(world: World, batch: list[str]) -> None:
    # GIVEN
    prepared = world.writer.prepare(batch)
    # WHEN / THEN
    for body, result in zip(batch, prepared, strict=True):
        if body == VALID_BODY:
            assert result.command is not None and result.command.record.id == VALID_RECORD["id"]


# --- hostile text, accepted by the API, stored verbatim ---------------------------------------------

hostile_tags = st.lists(
    st.one_of(
        st.sampled_from([p for p in HOSTILE_PIECES if p.strip() and p.isprintable()]),
        st.text(min_size=1, max_size=8),
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=hostile(surrogates=False, max_pieces=12),
    topic=st.one_of(st.none(), hostile(surrogates=False, max_pieces=6)),
    tags=hostile_tags,
    metadata=st.dictionaries(
        hostile(surrogates=False, max_pieces=2),
        st.one_of(st.none(), hostile(surrogates=False, max_pieces=3)),
        max_size=3,
    ),
    source_url=st.one_of(st.none(), hostile(surrogates=False, max_pieces=4)),
)
@example(
    content="a\x00b",
    topic="\u202eevil",
    tags=["') OR 1=1 --"],
    metadata={"\x00": "\u0301"},
    source_url="../x",
)
def test_whatever_the_api_accepts_is_queued_parsed_and_stored_verbatim(
    world: World,
    content: str,
    topic: str | None,
    tags: list[str],
    metadata: dict[str, Any],
    source_url: str | None,
) -> None:
    # GIVEN a write full of hostile text, as the API would validate it from the JSON it received
    item: dict[str, Any] = {"content": content, "tags": tags, "metadata": metadata}
    if topic is not None:
        item["topic"] = topic
    if source_url is not None:
        item["source"] = {"url": source_url}
    wire = json.loads(json.dumps({"items": [item]}))
    try:
        request = WriteRequest.model_validate(wire)
    except ValueError:
        event("refused by the API")
        return  # refused at the door (blank content, a tag with a control character...)
    agent = f"a-{uuid.uuid4().hex[:12]}"

    # WHEN it is accepted, queued, received by the writer and stored
    [accepted] = world.write.accept(Caller("acme"), agent, request.to_new_memories())
    [message] = world.queue.receive(10)
    [prepared] = world.writer.prepare([message.body])
    assert prepared.command is not None, prepared.poison_reason
    world.writer.apply(prepared.command, prepared.vector)
    world.queue.ack([message.receipt_handle])

    # THEN the stored record says exactly what was sent
    stored = world.store.get("acme", agent, accepted)
    assert stored is not None
    sent = request.items[0]  # type: ignore[index]
    assert stored.content == sent.content == content
    assert stored.topic_raw == sent.topic  # a topic is trimmed, as tags and speaker are
    assert stored.tags == list(dict.fromkeys(sent.tags))
    assert stored.metadata == metadata
    assert (stored.source.url if stored.source else None) == source_url
    assert world.pending.count("acme", agent) == 0
    event("stored")
