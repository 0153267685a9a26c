"""The importance scorer: one class of text at a time, each against the documented table."""

from __future__ import annotations

import time

import pytest

from agent_memory.model.records import MemoryKind
from agent_memory.writing.rules.importance import (
    CEILING,
    EXPLICIT,
    KIND_BASE,
    SMALL_TALK,
    is_question_only,
    is_small_talk,
    score_importance,
)

K = MemoryKind


@pytest.mark.parametrize(
    "text",
    [
        "Remember this: the door code is 4417.",
        "please remember that Bob is allergic to peanuts",
        "Don't forget the demo on Friday",
        "do not forget: invoices go to finance@example.com",
        "Note that the staging DB is shared with QA.",
        "For the record, I never approved that.",
        "Keep in mind that Dana prefers email.",
        "ok thanks, remember this one",
    ],
)
def test_an_explicit_request_to_remember_is_1(text: str) -> None:
    # GIVEN a turn that asks to be remembered, of the least important kind
    # WHEN it is scored, THEN it gets the top score, whatever else it says
    assert score_importance(text, K.CONVERSATION) == EXPLICIT == 1.0


@pytest.mark.parametrize(
    "text",
    ["Do you remember that day in Lisbon?", "I remember that song.", "We remember this place fondly."],
)
def test_recalling_is_not_a_request_to_remember(text: str) -> None:
    # WHEN / THEN
    assert score_importance(text, K.CONVERSATION) < 0.5


@pytest.mark.parametrize(
    "text",
    ["thanks!", "Thank you so much", "ok", "OK, got it 👍", "hi there", "Good morning everyone!", "lol",
     "sounds good", "cool, thx", "bye", "  "],
)  # fmt: skip
def test_small_talk_alone_is_low_whatever_its_kind(text: str) -> None:
    # WHEN / THEN
    assert is_small_talk(text)
    for kind in (K.CONVERSATION, K.NOTE, K.DECISION):
        assert score_importance(text, kind) == SMALL_TALK


def test_small_talk_with_substance_is_not_small_talk() -> None:
    # GIVEN a thank-you that carries a fact
    text = "Thanks! The invoice total is $1,200."
    # WHEN / THEN it is scored on its substance
    assert not is_small_talk(text)
    assert score_importance(text, K.CONVERSATION) > 0.3


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We decided to go with Postgres.", K.CONVERSATION),
        ("Alice and Bob agreed on the new pricing.", K.CONVERSATION),
        ("The migration must finish before the audit.", K.CONVERSATION),
        ("The deadline for the report is end of month.", K.CONVERSATION),
        ("The budget was approved by Dana.", K.CONVERSATION),
        ("Legal signed off on the contract.", K.CONVERSATION),
    ],
)
def test_decisions_obligations_and_approvals_rise_above_plain_talk(text: str, kind: MemoryKind) -> None:
    # GIVEN
    plain = score_importance("We talked about the weather and lunch options.", kind)
    # WHEN / THEN
    assert score_importance(text, kind) >= plain + 0.2


@pytest.mark.parametrize(
    "text",
    ["The contract is worth $40k.", "We need 3 seats for the workshop.", "Costs went up 12%.",
     "The invoice is EUR 300.", "It weighs 12 kg."],
)  # fmt: skip
def test_amounts_raise_importance(text: str) -> None:
    # WHEN / THEN
    assert score_importance(text, K.CONVERSATION) == pytest.approx(KIND_BASE[K.CONVERSATION] + 0.15)


@pytest.mark.parametrize(
    "text",
    ["The offsite is on March 3.", "Ship it by 2026-12-01.", "Let's talk on Friday.", "Call at 3pm.",
     "The review is tomorrow."],
)  # fmt: skip
def test_dates_raise_importance(text: str) -> None:
    # WHEN / THEN
    assert score_importance(text, K.CONVERSATION) == pytest.approx(KIND_BASE[K.CONVERSATION] + 0.1)


def test_words_that_only_look_like_dates_do_not_count() -> None:
    # WHEN / THEN
    assert score_importance("I sat in the sun with a book.", K.CONVERSATION) == KIND_BASE[K.CONVERSATION]


def test_the_kind_sets_the_base_decision_and_task_high_error_medium_conversation_low() -> None:
    # GIVEN
    text = "The cache layer in front of the catalogue service."
    # WHEN
    scores = {kind: score_importance(text, kind) for kind in (K.DECISION, K.TASK, K.ERROR, K.CONVERSATION)}
    # THEN
    assert scores[K.DECISION] > scores[K.TASK] > scores[K.ERROR] > scores[K.CONVERSATION]
    assert scores[K.DECISION] >= 0.7 and scores[K.CONVERSATION] <= 0.3


def test_a_question_only_turn_is_lower_unless_it_carries_a_decision() -> None:
    # WHEN / THEN
    assert is_question_only("What is the status? Any news?")
    assert not is_question_only("The build is green. Can we ship?")
    statement = score_importance("The status of the catalogue.", K.CONVERSATION)
    assert score_importance("What is the status of the catalogue?", K.CONVERSATION) == pytest.approx(
        statement - 0.1
    )
    # a question that records a decision keeps its weight
    assert score_importance("Did we agree to ship on Friday?", K.CONVERSATION) > statement


def test_everything_stacks_but_stays_below_an_explicit_request() -> None:
    # GIVEN
    text = "We decided and Dana approved: we will pay $40k by March 3."
    # WHEN / THEN
    assert score_importance(text, K.DECISION) == CEILING < EXPLICIT


def test_output_is_always_in_range_and_deterministic() -> None:
    # GIVEN
    texts = ["", "?", "a" * 16_384, "We must, we will, $5 on Friday!" * 100, "😀" * 50, "What?" * 10]
    # WHEN / THEN
    for text in texts:
        for kind in MemoryKind:
            first = score_importance(text, kind)
            assert 0.0 <= first <= 1.0
            assert score_importance(text, kind) == first


def test_it_is_fast_on_the_largest_content() -> None:
    # GIVEN the largest content a write accepts, full of near-matches
    text = ("approx 3 4 may we wi remember the 12 o " * 500)[:16_384]
    # WHEN it is scored 20 times, THEN no pattern backtracks: a call takes a few milliseconds,
    # even on a busy machine, and a catastrophic pattern seconds to hours. The bound is that of a
    # runaway, not a speed target (benchmarks/ measure speed), so a loaded machine passes.
    started = time.perf_counter()
    for _ in range(20):
        score_importance(text, MemoryKind.CONVERSATION)
    assert (time.perf_counter() - started) / 20 < 1.0
