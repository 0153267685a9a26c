"""How a candidate's evidence becomes its relevance (*Scoring* in `recall.rules.ranking`): the
word match counts as far as the meaning agrees."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import RECORDED_AT, memory_record

from agent_memory.model.queries import SearchQuery
from agent_memory.ports import Candidate
from agent_memory.recall.rules.ranking import (
    MEANING,
    NO_MEANING,
    UNAGREED,
    Asked,
    Candidates,
    RankingWeights,
    agreement,
    rank,
    relevance,
)

COSINES = st.floats(-1.0, 1.0)


def test_a_turn_sharing_one_word_and_no_meaning_does_not_outrank_the_statement_asked_about() -> None:
    # GIVEN what the store found for "Where do I work out?": last week's small talk shares the
    # word "work" (the best lexical hit: 1.0) and none of its meaning, and the statement asked
    # about, months older, shares its meaning and no word
    said = RECORDED_AT
    asked = said + timedelta(days=200)
    gym = memory_record("gym", "I'm at the McFit in Bergheim, the only gym open at 11pm.", at=said)
    talk = memory_record(
        "talk", "Can you explain how compound interest works with an example?", at=asked - timedelta(days=7)
    )
    found = Candidates([Candidate(gym, similarity=0.25), Candidate(talk, similarity=-0.04, lexical=1.0)])

    # WHEN it is ranked
    ranked = rank(found, Asked(SearchQuery(query="Where do I work out?"), asked), RankingWeights())

    # THEN the statement comes first: the word match of a turn so far from the question counts
    # for little
    assert [h.id for h in ranked] == ["gym", "talk"]


def test_the_words_count_in_full_when_the_meaning_agrees_or_no_vector_was_searched() -> None:
    # WHEN / THEN
    assert agreement(None) == 1.0
    assert agreement(MEANING) == agreement(0.9) == 1.0
    assert agreement(NO_MEANING) == agreement(-0.2) == UNAGREED
    assert agreement((NO_MEANING + MEANING) / 2) == pytest.approx((1.0 + UNAGREED) / 2)
    assert relevance(0.5, 1.0, 0.4) == pytest.approx(0.6 * 0.5 + 0.4)
    assert relevance(None, 1.0, 0.4) == pytest.approx(0.4)  # a search without vectors


@given(COSINES, COSINES, st.floats(0.0, 1.0))
def test_agreement_grows_with_the_cosine_and_a_word_match_never_lowers_relevance(
    a: float, b: float, lexical: float
) -> None:
    # WHEN / THEN
    low, high = sorted((a, b))
    assert 0.0 < agreement(low) <= agreement(high) <= 1.0
    assert relevance(a, lexical, 0.4) >= relevance(a, None, 0.4)
