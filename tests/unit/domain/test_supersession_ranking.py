"""The newer of two statements about one thing first, at search time, for a question about the
present (`recall.rules.current_first`, *Newer first*): which later statement moves before the first result,
which never does, and that only the head is reordered (checked on examples and as a property)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import OTHER_TURNS, RECORDED_AT, said_hit

from agent_memory.model.queries import Found, Hit
from agent_memory.recall.rules.current_first import (
    ASKED,
    HEAD,
    NEAR,
    STANDS_OUT,
    asks_about_now,
    compared,
    newer_first,
)

OLD = "I'm on the night shift at the warehouse."
NEW = "Being on days again is amazing, I actually see daylight."
OTHER = OTHER_TURNS


def _cosine(pairs: dict[frozenset[str], float]) -> Callable[[Hit, Hit], float]:
    """Own-vector cosines by pair of ids; any pair not named is far apart (0.05)."""
    return lambda a, b: pairs.get(frozenset({a.id, b.id}), 0.05)


def _ranking() -> list[Found]:
    """The old statement first (it matches the question's words), the new one third."""
    return [
        said_hit("old", OLD, 0, 0.53),
        said_hit("d1", OTHER[0], 40, 0.09),
        said_hit("new", NEW, 120, 0.08),
        said_hit("d2", OTHER[1], 60, 0.07),
        said_hit("d3", OTHER[2], 90, 0.06),
        said_hit("d4", OTHER[3], 150, 0.05),
    ]


def _apply(ranked: list[Found], pairs: dict[frozenset[str], float]) -> list[str]:
    return [r.id for r in newer_first(ranked, compared(ranked), _cosine(pairs))]


def test_the_later_statement_nearest_the_first_result_comes_first_and_the_old_one_right_after() -> None:
    # GIVEN "night shift" first and "on days again" third, near each other by their own words
    ranked = _ranking()
    # WHEN reordered
    out = newer_first(ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.3}))
    # THEN the new statement comes first with the first place's score, the old one right after,
    # and nothing else moves
    assert [r.id for r in out] == ["new", "old", "d1", "d2", "d3", "d4"]
    assert out[0].score == 0.53


def test_the_old_statement_it_replaces_is_marked_with_the_day_it_stopped_holding() -> None:
    # GIVEN "night shift" first and "on days again" third, near each other by their own words
    ranked = _ranking()
    new = ranked[2]
    assert isinstance(new, Hit)
    # WHEN reordered
    out = newer_first(ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.3}))
    # THEN the old statement is no longer current, ended when the new one was said, by it
    lifted, ended = out[0], out[1]
    assert isinstance(lifted, Hit) and isinstance(ended, Hit)
    assert not ended.current
    assert ended.record.valid_to == new.record.occurred_at
    assert ended.record.superseded_by == "new"
    # AND the new one says what it replaced, and holds
    assert lifted.current and lifted.record.supersedes == ["old"]
    assert lifted.record.valid_from == new.record.occurred_at
    # AND what did not move is not marked, and the ranking handed in is not changed (nothing stored)
    assert all(isinstance(r, Hit) and r.current and r.record.superseded_by is None for r in out[2:])
    assert all(isinstance(r, Hit) and r.current and r.record.superseded_by is None for r in ranked)


def test_an_old_statement_a_stored_link_ends_later_keeps_that_link() -> None:
    # GIVEN the old statement already superseded, by a memory said after the search's as_of
    ranked = _ranking()
    after = RECORDED_AT + timedelta(days=400)
    ranked[0] = said_hit("old", OLD, 0, 0.53, superseded_by="later", valid_to=after, valid_from=RECORDED_AT)
    # WHEN reordered
    out = newer_first(ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.3}))
    # THEN the new one still comes first, and the old one's stored link is what it shows
    assert [r.id for r in out[:2]] == ["new", "old"]
    ended = out[1]
    assert isinstance(ended, Hit)
    assert ended.record.superseded_by == "later" and ended.record.valid_to == after


@pytest.mark.parametrize(
    ("why", "pairs"),
    [
        ("not near", {frozenset({"old", "new"}): NEAR - 0.01}),
        (
            "another statement is as near",
            {frozenset({"old", "new"}): 0.4, frozenset({"old", "d2"}): 0.4 - STANDS_OUT + 0.01},
        ),
    ],
)
def test_a_later_statement_that_is_not_near_or_does_not_stand_out_stays_where_it_is(
    why: str, pairs: dict[frozenset[str], float]
) -> None:
    # GIVEN the ranking, WHEN the new statement is {why}, THEN nothing moves
    assert _apply(_ranking(), pairs) == [r.id for r in _ranking()], why


@pytest.mark.parametrize(
    ("why", "new"),
    [
        ("says earlier", said_hit("new", NEW, -10, 0.08)),
        ("adds rather than replaces", said_hit("new", "We also started a second shift on days.", 120, 0.08)),
        ("is another speaker's", said_hit("new", NEW, 120, 0.08, speaker="Ben")),
        ("is in the same conversation", said_hit("new", NEW, 120, 0.08, conversation_id="c-old")),
        ("is a question", said_hit("new", "Should I ask to go back on days?", 120, 0.08)),
    ],
)
def test_a_later_statement_that_cannot_replace_the_first_one_stays_where_it_is(why: str, new: Hit) -> None:
    # GIVEN the ranking with the new statement changed so that it {why}
    ranked = _ranking()
    ranked[2] = new
    # WHEN reordered with the two as near as can be, THEN nothing moves
    assert _apply(ranked, {frozenset({"old", "new"}): 0.9}) == [r.id for r in ranked], why


#: An update that names the old person again and says no word of ending the shape test knows:
#: read as a restatement, so no replacement by its shape.
OWEN_OLD = "My best mate Owen lives with his girlfriend in Bath."
OWEN_NEW = "Owen's back at his mum's after the split, poor guy."


def _owen() -> list[Found]:
    return [
        said_hit("old", OWEN_OLD, 0, 0.58),
        said_hit("new", OWEN_NEW, 200, 0.47),
        said_hit("d1", OTHER[0], 40, 0.09),
        said_hit("d2", OTHER[1], 60, 0.07),
    ]


def _asked(cosines: dict[str, float]) -> Callable[[Hit], float]:
    """The question's cosine with each statement by id; any not named is far from it (0.0)."""
    return lambda h: cosines.get(h.id, 0.0)


def test_a_later_statement_about_what_is_asked_comes_first_unmarked_when_no_replacement_by_shape() -> None:
    # GIVEN "Owen lives with his girlfriend in Bath" first and "Owen's back at his mum's" second,
    # near each other by their own words, the later one about what is asked ("Where's Owen living?")
    ranked = _owen()
    pairs = {frozenset({"old", "new"}): 0.58}
    # WHEN reordered with the question's cosines
    out = newer_first(ranked, compared(ranked), _cosine(pairs), _asked({"old": 0.7, "new": 0.61}))
    # THEN the later statement comes first with the first place's score, the older one right after
    assert [r.id for r in out] == ["new", "old", "d1", "d2"]
    assert out[0].score == 0.58
    # AND nothing is marked: the shape does not read as a replacement, so the order is a guess and
    # the older statement stays current in the answer
    assert all(isinstance(r, Hit) and r.current and r.record.superseded_by is None for r in out)
    assert isinstance(out[0], Hit) and not out[0].record.supersedes


@pytest.mark.parametrize(
    ("why", "asked"),
    [
        ("is not about what is asked", _asked({"old": 0.7, "new": ASKED - 0.01})),
        # chosen on halves A-D: at 0.12 a later note of small talk still came first there
        ("is only loosely about what is asked", _asked({"old": 0.7, "new": 0.12})),
        ("cannot be compared with the question", None),
    ],
)
def test_a_later_statement_whose_shape_is_no_replacement_stays_when_it(
    why: str, asked: Callable[[Hit], float] | None
) -> None:
    # GIVEN the Owen ranking, the two near each other
    ranked = _owen()
    # WHEN the later statement {why}, THEN nothing moves
    out = newer_first(ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.58}), asked)
    assert [r.id for r in out] == [r.id for r in ranked], why


def test_a_lone_later_statement_that_is_no_replacement_by_shape_stays_with_nothing_to_stand_out_from() -> (
    None
):
    # GIVEN the first result and one later note of the same speaker, no other statement beside
    # them: the service's own example, an unrelated later note near the first by a hashing model
    ranked: list[Found] = [
        said_hit("old", "Alice moved the product launch to March 3.", 0, 0.58),
        said_hit("new", "The office coffee machine is broken again.", 1, 0.3),
    ]
    # WHEN reordered with the two near each other and the later one about what is asked
    out = newer_first(
        ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.34}), _asked({"new": 0.47})
    )
    # THEN nothing moves: "nearest" among one is no evidence that they are about one thing
    assert [r.id for r in out] == ["old", "new"]
    # AND with one more statement of the speaker to stand out from, the same pair would move
    ranked.append(said_hit("d1", OTHER[0], 2, 0.1))
    out = newer_first(
        ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.34}), _asked({"new": 0.47})
    )
    assert [r.id for r in out] == ["new", "old", "d1"]


def test_a_later_statement_of_another_subject_stays_however_near_and_asked() -> None:
    # GIVEN "My manager is Ingrid" first and "My skip-level is Paolo" second (another subject)
    ranked: list[Found] = [
        said_hit("old", "My manager is Ingrid.", 0, 0.6),
        said_hit("new", "My skip-level is Paolo, he signs off on every budget.", 200, 0.4),
        said_hit("d1", OTHER[0], 40, 0.09),
    ]
    # WHEN reordered with the two as near as can be and both about what is asked, THEN nothing moves
    near = _cosine({frozenset({"old", "new"}): 0.9})
    out = newer_first(ranked, compared(ranked), near, _asked({"new": 0.9}))
    assert [r.id for r in out] == ["old", "new", "d1"]


def test_nothing_is_compared_when_the_first_result_is_not_a_statement() -> None:
    # GIVEN a request first ("can you remind me..."): it states nothing a later turn replaces
    ranked = _ranking()
    ranked[0] = said_hit("old", "Can you remind me which shift I'm on?", 0, 0.53)
    # WHEN asked what to embed, THEN nothing (the search makes no model call)
    assert compared(ranked) == []


def test_a_statement_below_the_head_never_moves() -> None:
    # GIVEN the new statement just below the head
    ranked: list[Found] = [said_hit("old", OLD, 0, 0.53)]
    ranked += [said_hit(f"d{i}", OTHER[i], 10 + i, 0.1 - i / 100) for i in range(HEAD - 1)]
    ranked.append(said_hit("new", NEW, 120, 0.01))
    # WHEN reordered with the two as near as can be, THEN nothing moves
    assert _apply(ranked, {frozenset({"old", "new"}): 0.9}) == [r.id for r in ranked]


@pytest.mark.parametrize(
    ("query", "names_a_time", "now"),
    [
        ("Which shift am I on?", False, True),
        ("Where do I live these days?", False, True),
        ("Which shift was I on?", False, False),
        ("Where did I live before the move?", False, False),
        ("Which shift am I on in March?", True, False),
        (None, False, False),
    ],
)
def test_a_question_asks_about_the_present_unless_it_names_a_time_or_asks_in_the_past(
    query: str | None, names_a_time: bool, now: bool
) -> None:
    assert asks_about_now(query, names_a_time) is now


@given(
    order=st.permutations(list(range(6))),
    near=st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=6, max_size=6),
)
def test_reordering_keeps_every_result_and_the_head_as_a_set(order: list[int], near: list[float]) -> None:
    # GIVEN any ranking of the six turns and any cosines with the first result
    base = _ranking()
    ranked = [base[i] for i in order]
    first = ranked[0].id
    pairs = {frozenset({first, r.id}): near[i] for i, r in enumerate(ranked) if r.id != first}
    # WHEN reordered
    out = newer_first(ranked, compared(ranked), _cosine(pairs))
    # THEN the same results, the head the same set, the rest in place, and at most one result
    # moved: to the first place, ahead of the old first
    assert sorted(r.id for r in out) == sorted(r.id for r in ranked)
    assert {r.id for r in out[:HEAD]} == {r.id for r in ranked[:HEAD]}
    assert [r.id for r in out[HEAD:]] == [r.id for r in ranked[HEAD:]]
    if [r.id for r in out] != [r.id for r in ranked]:
        moved, was_first = out[0], ranked[0]
        assert isinstance(moved, Hit) and isinstance(was_first, Hit)
        assert out[1].id == first
        assert moved.record.occurred_at > was_first.record.occurred_at
        assert [r.id for r in out[1:]] == [r.id for r in ranked if r.id != out[0].id]
    # AND the old first is marked as replaced by the moved one exactly when one moved
    marks = {r.id: r.record.superseded_by for r in out if isinstance(r, Hit) and not r.current}
    assert marks == ({first: out[0].id} if out[0].id != first else {})


def test_a_lone_later_statement_stays_even_when_its_shape_reads_as_a_replacement() -> None:
    # GIVEN the first result and one later note of the same speaker whose shape reads as a change
    # ("cleaned out" ends something), no other statement of the speaker beside them
    ranked: list[Found] = [
        said_hit("old", "I live in Buckie, on the Moray coast.", 0, 0.47),
        said_hit("new", "I cleaned out the garage, found my old skateboard from school.", 150, 0.2),
    ]
    # WHEN reordered with the two near each other by a small model's cosine
    out = newer_first(
        ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.29}), _asked({"new": 0.19})
    )
    # THEN nothing moves and nothing is marked: "nearest" among one is no evidence of one attribute
    assert [(r.id, r.current) for r in out if isinstance(r, Hit)] == [("old", True), ("new", True)]


@pytest.mark.parametrize(
    "later",
    ["Might go back on days next year if they let me.", "Back when I was on days I never saw the kids."],
)
def test_a_later_wish_or_story_of_the_past_stays_however_near_and_asked(later: str) -> None:
    # GIVEN the ranking with the later statement a wish or a story of the past: not what holds now
    ranked = _ranking()
    ranked[2] = said_hit("new", later, 120, 0.08)
    # WHEN reordered with the two as near as can be and the later one about what is asked
    out = newer_first(
        ranked, compared(ranked), _cosine({frozenset({"old", "new"}): 0.9}), _asked({"new": 0.9})
    )
    # THEN nothing moves
    assert [r.id for r in out] == [r.id for r in ranked]
