"""Turns are embedded and indexed in their setting: speaker, day and the turns before them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.model.caller import Caller
from agent_memory.writing.rules.contextual import context_parts, context_text, self_text, vector_texts
from agent_memory.writing.writer import WriterService

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _turns(
    world: World, turns: list[tuple[str, str]], conversation: str = "c-1", start: int = 0
) -> list[str]:
    items: list[dict[str, Any]] = [
        {
            "content": text,
            "role": "user",
            "speaker": speaker,
            "occurred_at": DAY + timedelta(seconds=start + i),
            "conversation_id": conversation,
            "kind": "note",
        }
        for i, (speaker, text) in enumerate(turns)
    ]
    accepted = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate({"items": items}).to_new_memories()
    )
    world.drain()
    return accepted


def test_a_turn_is_stored_with_the_turns_before_it_as_its_context(world: World) -> None:
    # GIVEN three turns of one conversation, written in one request
    ids = _turns(
        world,
        [
            ("Caroline", "I went to a support group yesterday."),
            ("Melanie", "How was it?"),
            ("Caroline", "Powerful!"),
        ],
    )

    # WHEN / THEN the first has no context; later ones carry the earlier turns, labelled, then their own
    first, _, third = (world.store.get("acme", "bot", i) for i in ids)
    assert first is not None and first.context is None
    assert third is not None
    assert (
        third.context
        == "Caroline: I went to a support group yesterday.\nMelanie: How was it?\nCaroline: Powerful!"
    )
    assert third.speaker == "Caroline"


def test_context_reaches_turns_stored_by_earlier_batches_and_stays_in_its_conversation(world: World) -> None:
    # GIVEN
    _turns(world, [("Ann", "We moved the launch."), ("Bob", "To when?")])
    _turns(world, [("Zed", "Unrelated chatter.")], conversation="c-2")

    # WHEN
    [later] = _turns(world, [("Ann", "March 3.")], start=10)
    record = world.store.get("acme", "bot", later)

    # THEN
    assert record is not None
    assert record.context == "Ann: We moved the launch.\nBob: To when?\nAnn: March 3."


def test_the_vector_is_composed_from_the_turns_words_its_setting_and_the_turn_before(world: World) -> None:
    # GIVEN two turns of one exchange
    [_, second] = _turns(world, [("Ann", "We moved the launch."), ("Bob", "To March 3, I hope.")])
    # WHEN the second is read back
    record = world.store.get("acme", "bot", second)
    # THEN
    assert record is not None and record.context is not None

    # its vector is made of three texts, each embedded on its own: the words, who and when, the turn before
    assert vector_texts(record) == ["To March 3, I hope.", "Bob on 08 May 2023", "We moved the launch."]
    own, setting, before = (v / np.linalg.norm(v) for v in world.embedder.embed(vector_texts(record)))
    mine = (setting + own) / np.linalg.norm(setting + own)
    turns = (before + mine) / np.linalg.norm(before + mine)
    expected = (mine + turns) / np.linalg.norm(mine + turns)
    [stored] = world.writer.vectors([record])

    np.testing.assert_allclose(stored, expected, atol=1e-6)
    assert self_text(record) == "Bob on 08 May 2023: To March 3, I hope."


def test_a_contexts_parts_are_the_earlier_turns_words_even_when_cut_or_unlabelled() -> None:
    # GIVEN / WHEN / THEN
    assert context_parts(None) == []
    assert context_parts("Ann: We moved it: to March.\nBob: Fine.") == ["We moved it: to March."]
    assert context_parts("… launch moved.\nno label here\nBob: Fine.") == ["launch moved.", "no label here"]


def test_the_earlier_turns_words_read_back_whole_when_an_unlabelled_turn_or_a_label_holds_a_colon(
    world: World,
) -> None:
    # GIVEN a turn with no speaker or role whose words hold ": ", and a speaker whose name does
    items: list[dict[str, Any]] = [
        {"content": "Note to self: book the venue.", "conversation_id": "c-1"},
        {"content": "Done: booked it.", "speaker": "Ops: night shift", "conversation_id": "c-1"},
        {"content": "Thanks.", "speaker": "Ann", "conversation_id": "c-1"},
    ]
    for i, item in enumerate(items):
        item.update(occurred_at=DAY + timedelta(seconds=i), kind="note")
    ids = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate({"items": items}).to_new_memories()
    )
    world.drain()
    last = world.store.get("acme", "bot", ids[-1])
    assert last is not None

    # WHEN the last turn's context is read back into the words its vector is composed from
    parts = context_parts(last.context)

    # THEN each earlier turn is its own words, as it was embedded when written (no second text)
    assert parts == ["Note to self: book the venue.", "Done: booked it."]
    assert set(parts) <= {t for i in ids[:2] for t in vector_texts(world.store.get("acme", "bot", i))}  # type: ignore[arg-type]


def test_without_context_turns_each_turn_is_embedded_alone(world: World) -> None:
    # GIVEN
    world.writer = WriterService(
        world.store, world.embedder, world.pending, world.queue, world.clock, context_turns=0
    )
    ids = _turns(world, [("Ann", "We moved the launch."), ("Bob", "To when?")])

    # WHEN / THEN
    assert [world.store.get("acme", "bot", i).context for i in ids] == [None, None]  # type: ignore[union-attr]


def test_two_turns_of_one_exchange_are_not_merged_as_duplicates(world: World) -> None:
    # GIVEN turns whose context vectors overlap (each holds the other's words) but that say different things
    ids = _turns(world, [("Ann", "The launch moved to March."), ("Bob", "Great, thanks Ann.")])

    # WHEN / THEN both are stored as themselves
    assert all(world.store.get("acme", "bot", i) is not None for i in ids)
    assert world.store.stats("acme", "bot", world.clock.now()).records["working"] == 2


def test_a_turn_is_found_by_words_of_the_turn_before_it_and_by_its_speaker(world: World) -> None:
    # GIVEN an answer that makes sense only after its question
    ids = _turns(
        world, [("Melanie", "Where did you go camping?"), ("Caroline", "By the lake, near the pines.")]
    )

    # WHEN searching with the question's words and the speaker's name (no date window)
    hits = world.search.search(
        "acme",
        "bot",
        SearchRequest.model_validate(
            {"query": "Caroline camping", "ranking": {"lexical_weight": 1}}
        ).to_query(),
    )

    # THEN the answer is found too, though it says neither word itself
    assert ids[1] in [h.id for h in hits]
    assert (
        next(h for h in hits if h.id == ids[1]).text == "[2023-05-08] Caroline: By the lake, near the pines."
    )


def test_context_is_cut_from_the_front_to_its_limit() -> None:
    # GIVEN
    from agent_memory.model.limits import MAX_CONTEXT_CHARS
    from agent_memory.model.records import MemoryRecord

    def rec(i: int, text: str) -> MemoryRecord:
        return MemoryRecord(
            id=f"mem_{i}", tenant_id="t", agent_id="a", content=text, speaker="S", content_hash="h",
            created_at=DAY, updated_at=DAY, occurred_at=DAY + timedelta(seconds=i),
        )  # fmt: skip

    # WHEN
    previous = [rec(i, "word " * 400) for i in range(5)]
    text = context_text(rec(9, "the last words"), previous)

    # THEN
    assert text is not None and len(text) <= MAX_CONTEXT_CHARS
    assert text.endswith("S: the last words")
