"""One search's ranking as a whole (`recall.rules.ranking.rank`): the steps applied in their order
on what the stores found; each step's own rules are checked in the files named after it."""

from __future__ import annotations

from datetime import timedelta

from tests.payloads import RECORDED_AT, memory_record

from agent_memory.model.queries import Hit, SearchQuery
from agent_memory.ports import Candidate
from agent_memory.recall.rules.ranking import Asked, Candidates, RankingWeights, rank


def test_a_superseded_memory_that_scored_higher_comes_right_after_its_successor() -> None:
    # GIVEN what the store found for "where do I live?": the old statement matches it best, an
    # unrelated memory next, and the statement that superseded the old one least
    moved = RECORDED_AT + timedelta(days=1)
    old = memory_record("old", "I live in Berlin.", superseded_by="new", valid_to=moved)
    new = memory_record("new", "Finally unpacked the last boxes in our flat in Lisbon.", at=moved)
    other = memory_record("other", "The launch moved to March 3.", at=moved)
    found = Candidates([Candidate(old, similarity=0.9), Candidate(other, 0.5), Candidate(new, 0.3)])

    # WHEN it is ranked
    ranked = rank(
        found, Asked(SearchQuery(query="where do I live?"), moved + timedelta(days=1)), RankingWeights()
    )

    # THEN the successor takes the old one's place and the old one follows it, marked as past,
    # though both the old one and the unrelated memory outscored the successor on their own
    assert [h.id for h in ranked] == ["new", "old", "other"]
    assert isinstance(ranked[1], Hit)
    assert not ranked[1].current
    assert ranked[0].score >= ranked[1].score
