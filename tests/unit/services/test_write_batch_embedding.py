"""The writer embeds a receive's texts in one model call, each distinct text once: a turn's own
words (asked again by the near-duplicate check), its setting and the earlier turns' words all go
in the batch's call, and what is asked again comes from the memo."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from tests.fakes import FixedClock
from tests.unit.services.cascade_world import AGENT, CALLER
from tests.unit.services.conftest import World, make_world

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import Matrix
from agent_memory.writing.memo_embedder import MemoEmbedder
from agent_memory.writing.write_vectors import PIPELINE_TEXTS
from agent_memory.writing.writer import Prepared, WriterService

AT = datetime(2026, 11, 20, 9, tzinfo=UTC)


class CountingEmbedder(HashingEmbedder):
    """The hashing model, counting its calls and every text it was given."""

    def __init__(self) -> None:
        super().__init__(384)
        self.calls = 0
        self.texts: Counter[str] = Counter()

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        self.texts.update(texts)
        return super().embed(texts)


def _world(tmp_path: Path, clock: FixedClock) -> tuple[World, CountingEmbedder]:
    world = make_world(tmp_path, clock)
    model = CountingEmbedder()
    world.writer = WriterService(world.store, model, world.pending, world.queue, clock)
    return world, model


def _conversation(world: World, turns: list[str], start: int = 0) -> None:
    messages = [
        {
            "role": "user",
            "content": text,
            "speaker": "Ana",
            "occurred_at": (AT + timedelta(minutes=start + i)).isoformat(),
        }
        for i, text in enumerate(turns)
    ]
    request = WriteRequest.model_validate({"conversation_id": "c-1", "messages": messages})
    world.write.accept(CALLER, AGENT, request.to_new_memories())


def test_a_receive_of_turns_is_embedded_in_one_call_each_text_once(tmp_path: Path, clock: FixedClock) -> None:
    # GIVEN a conversation whose turns repeat one another (near duplicates are checked by their words)
    world, model = _world(tmp_path, clock)
    _conversation(
        world,
        [
            "Sounds good to me.",
            "Sounds good to me!",
            "We moved the launch to March 3.",
            "We moved the launch to March 3!",
            "Sounds good to me.",
        ],
    )

    # WHEN the writer stores the whole receive
    outcomes = world.drain()

    # THEN every write was handled, with one model call and no text embedded twice
    assert len(outcomes) == 5 and "merged" in outcomes
    assert model.calls == 1
    assert max(model.texts.values()) == 1


def test_a_turns_words_are_embedded_once_for_itself_and_for_the_turns_after_it(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a writer whose model counts the texts it is given
    world, model = _world(tmp_path, clock)

    # WHEN four turns of one speaker on one day are stored, in two receives (each turn's context
    # holds the two before it)
    _conversation(world, ["We moved the launch.", "To when?"])
    world.drain()
    _conversation(world, ["March 3, if the tests pass.", "Great, thanks."], start=2)
    world.drain()

    # THEN each turn's words and the speaker's day went to the model once, and nothing else did
    # (not the turn in its setting, not its context)
    assert model.texts == Counter(
        [
            "We moved the launch.",
            "To when?",
            "March 3, if the tests pass.",
            "Great, thanks.",
            "Ana on 20 November 2026",
        ]
    )
    assert model.calls == 2


def test_the_memo_embeds_only_what_it_has_not_seen_and_answers_in_order() -> None:
    # GIVEN a memo over a counting model that has seen two texts
    model = CountingEmbedder()
    memo = MemoEmbedder(model, kept=3)
    memo.prefetch(["a", "b", "a"])

    # WHEN it is asked for a seen text, a new one and the seen again
    vectors = memo.embed(["b", "c", "b"])

    # THEN only the new one went to the model, and each row is that text's vector
    assert model.texts == Counter({"a": 1, "b": 1, "c": 1}) and model.calls == 2
    assert (vectors[0] == HashingEmbedder(384).embed(["b"])[0]).all()
    assert (vectors[0] == vectors[2]).all()
    # AND it keeps only the most recently used three ("a" goes first)
    memo.embed(["d"])
    memo.embed(["a"])
    assert model.texts["a"] == 2


def _turns(count: int) -> list[str]:
    """``count`` turns that share no words, so each is a text of its own."""
    return [f"Turn {i}: the {i}th item of the inventory is crate {i * 7}." for i in range(count)]


#: Turns in a receive embedded in two parts (one request of at most 100 messages).
LARGE_RECEIVE = 2 * PIPELINE_TEXTS + 4
#: Turns in a receive embedded in one part.
SMALL_RECEIVE = PIPELINE_TEXTS // 2


def _prepared_receive(world: World, count: int) -> list[Prepared]:
    _conversation(world, _turns(count))
    batch = world.queue.receive(count)
    assert len(batch) == count
    return world.writer.prepare([m.body for m in batch])


def _stored(world: World, prepared: Prepared) -> str:
    assert prepared.command is not None
    outcome = world.writer.apply(prepared.command, prepared.vector).value
    discard_unpublished_metrics()  # a large receive is more than the metrics buffer holds
    return outcome


def _assert_as_if_embedded_at_once(world: World, prepared: list[Prepared]) -> None:
    """Each prepared write's vectors are those its records embedded in one call would get."""
    records = [p.command.record for p in prepared if p.command is not None]
    for p, whole in zip(prepared, world.writer.embeddings(records), strict=True):
        assert p.vector is not None
        np.testing.assert_allclose(p.vector.search, whole.search, atol=1e-6)


def test_a_large_receive_is_embedded_in_parts_while_its_first_writes_are_stored(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a model whose second call waits until the receive's first turn is stored
    world, model = _world(tmp_path, clock)
    stored_first: list[bool] = []
    first_id: list[str] = []
    real_embed = model.embed

    def embed(texts: Sequence[str]) -> Matrix:
        if model.calls == 1:
            deadline = time.monotonic() + 10
            while not first_id and time.monotonic() < deadline:
                time.sleep(0.01)
            stored_first.append(world.store.get(CALLER.tenant_id, AGENT, first_id[0]) is not None)
        return real_embed(texts)

    model.embed = embed  # type: ignore[method-assign]

    # WHEN a receive of two parts (a new text a turn, and one more) is prepared and stored in order
    prepared = _prepared_receive(world, LARGE_RECEIVE)
    outcomes = []
    for p in prepared:
        outcomes.append(_stored(world, p))
        first_id[:] = first_id or [p.command.record.id]  # type: ignore[union-attr]

    # THEN it was embedded in parts of at least half of PIPELINE_TEXTS, each text once, and the
    # first turn was stored while a later part was still to be embedded
    assert outcomes == ["inserted"] * LARGE_RECEIVE
    assert 2 <= model.calls <= sum(model.texts.values()) // (PIPELINE_TEXTS // 2)
    assert max(model.texts.values()) == 1
    assert stored_first == [True]
    # AND each write's vectors are those of the whole batch embedded at once
    _assert_as_if_embedded_at_once(world, prepared)


def test_a_part_that_fails_to_embed_leaves_its_writes_to_be_embedded_one_by_one(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a model that fails the second part of a large receive
    world, model = _world(tmp_path, clock)
    real_embed = model.embed

    def embed(texts: Sequence[str]) -> Matrix:
        if model.calls == 1 and len(texts) > 2:
            model.calls += 1
            raise DependencyError("the model is overloaded")
        return real_embed(texts)

    model.embed = embed  # type: ignore[method-assign]

    # WHEN a receive of two parts is prepared and stored
    prepared = _prepared_receive(world, LARGE_RECEIVE)

    # THEN the first part's writes came embedded, the failed part's are embedded by the writer one
    # at a time, and every turn is stored
    assert prepared[0].vector is not None
    assert any(p.vector is None for p in prepared)
    outcomes = [_stored(world, p) for p in prepared]
    assert outcomes == ["inserted"] * LARGE_RECEIVE


def test_the_next_receive_s_texts_are_embedded_while_this_one_is_stored(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN two receives of turns queued, and a model that notes the thread each text came on
    world, model = _world(tmp_path, clock)
    _conversation(world, _turns(2 * SMALL_RECEIVE))
    threads: dict[str, str] = {}
    real_embed = model.embed

    def embed(texts: Sequence[str]) -> Matrix:
        threads.update(dict.fromkeys(texts, threading.current_thread().name))
        return real_embed(texts)

    model.embed = embed  # type: ignore[method-assign]

    # WHEN the writer is told what comes next as each receive is prepared, then stores it
    outcomes, prepared = [], []
    while batch := world.queue.receive(SMALL_RECEIVE):
        world.writer.expect(world.queue.peek(SMALL_RECEIVE))
        prepared += world.writer.prepare([m.body for m in batch])
        outcomes += [_stored(world, p) for p in prepared[-len(batch) :]]
        world.queue.ack(m.receipt_handle for m in batch)

    # THEN every turn is stored, each text was embedded once, and the second receive's words
    # were embedded ahead, on the embedding thread, not by the writer when it came
    assert outcomes == ["inserted"] * 2 * SMALL_RECEIVE
    assert max(model.texts.values()) == 1
    second = [p.command.record.content for p in prepared[SMALL_RECEIVE:] if p.command is not None]
    assert {threads[text] for text in second} == {"writer-embedding_0"}
    # AND each write's vectors are those of the whole run embedded at once
    _assert_as_if_embedded_at_once(world, prepared)


def test_a_look_ahead_that_fails_leaves_the_next_receive_to_embed_its_own_texts(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN a model that fails whatever is asked of it on the embedding thread
    world, model = _world(tmp_path, clock)
    _conversation(world, _turns(2 * SMALL_RECEIVE))
    real_embed = model.embed

    def embed(texts: Sequence[str]) -> Matrix:
        if threading.current_thread().name.startswith("writer-embedding"):
            raise DependencyError("the model is overloaded")
        return real_embed(texts)

    model.embed = embed  # type: ignore[method-assign]

    # WHEN each receive is prepared with the next one expected (and a poison body among them)
    outcomes = []
    while batch := world.queue.receive(SMALL_RECEIVE):
        world.writer.expect([*world.queue.peek(SMALL_RECEIVE), "not a command"])
        outcomes += [_stored(world, p) for p in world.writer.prepare([m.body for m in batch])]
        world.queue.ack(m.receipt_handle for m in batch)

    # THEN every turn is still embedded and stored
    assert outcomes == ["inserted"] * 2 * SMALL_RECEIVE
