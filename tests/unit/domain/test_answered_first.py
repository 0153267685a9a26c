"""A search asks the answer judge about the head's statements (`recall.rules.current_first`, *Answered
first*): which pairs it reads, what moves when it is sure, what never moves, and that the head
stays the same set whatever it answers (checked on examples and as a property)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import OTHER_TURNS, RECORDED_AT, said_hit

from agent_memory.model.queries import Found, Hit, SearchQuery
from agent_memory.ports import Candidate
from agent_memory.recall.rules.current_first import ANSWER_PAIRS, ANSWERED, HEAD, answered_first
from agent_memory.recall.rules.ranking import Asked, Candidates, ModelCalls, RankingWeights, rank

QUESTION = "How do I get to work?"
BUS = "I take bus 31 to work, it's about forty minutes each way."
BIKE = "Picked up the e-bike from the shop on Saturday. Rode in to the office this morning, 25 minutes."
OTHER = OTHER_TURNS


def _ranking() -> list[Found]:
    """The bus first (its words match the question), the e-bike third, turns about other things."""
    return [
        said_hit("bus", BUS, 0, 0.25),
        said_hit("d1", OTHER[0], 40, 0.1),
        said_hit("bike", BIKE, 200, 0.09),
        said_hit("d2", OTHER[1], 60, 0.07),
        said_hit("d3", OTHER[2], 90, 0.06),
        said_hit("d4", OTHER[3], 150, 0.05),
    ]


class _Judge:
    """The judge as a search calls it: a probability per (older, newer) pair of ids, 0.05 for a
    pair not named; every call kept."""

    def __init__(
        self, probabilities: dict[tuple[str, str], float] | None = None, fails: bool = False
    ) -> None:
        self.probabilities = probabilities or {}
        self.fails = fails
        self.asked: list[tuple[str, list[tuple[str, str]]]] = []

    def __call__(self, question: str, pairs: list[tuple[Hit, Hit]]) -> Sequence[float] | None:
        self.asked.append((question, [(a.id, b.id) for a, b in pairs]))
        if self.fails:
            return None
        return [self.probabilities.get((a.id, b.id), 0.05) for a, b in pairs]


def test_the_newer_statement_the_judge_finds_the_answer_comes_first_the_older_right_after_it_marked() -> None:
    # GIVEN the bus first, the e-bike third, and a judge sure the e-bike is the answer now
    ranked = _ranking()
    judge = _Judge({("bus", "bike"): 0.97})
    # WHEN the head is read with the question
    out = answered_first(ranked, QUESTION, judge)
    # THEN the e-bike comes first with the first place's score, the bus right after it, the rest
    # in their order
    assert [r.id for r in out] == ["bike", "bus", "d1", "d2", "d3", "d4"]
    assert out[0].score == 0.25
    # AND the bus is marked in the answer as ended the day the e-bike was said, by the e-bike
    bike, bus = out[0], out[1]
    assert isinstance(bike, Hit) and isinstance(bus, Hit)
    assert not bus.current
    assert bus.record.superseded_by == "bike" and bus.record.valid_to == bike.record.occurred_at
    assert bike.record.supersedes == ["bus"]
    # AND the judge was asked once, with the question and the head's pairs of statements
    assert [q for q, _ in judge.asked] == [QUESTION]


def test_a_pair_the_judge_is_not_sure_of_or_a_judge_that_failed_moves_nothing() -> None:
    # GIVEN the same ranking, a judge just under its bar and one that fails
    ranked = _ranking()
    for judge in (_Judge({("bus", "bike"): ANSWERED - 0.01}), _Judge({("bus", "bike"): 0.99}, fails=True)):
        # WHEN the head is read, THEN nothing moves and nothing is marked
        out = answered_first(ranked, QUESTION, judge)
        assert out == ranked


def test_only_pairs_of_one_holder_said_later_in_another_conversation_and_statements_are_read() -> None:
    # GIVEN, beside the bus, a later statement of another end user, one of the same conversation,
    # a question the same person asked later, and one said before the bus
    ranked: list[Found] = [
        said_hit("bus", BUS, 100, 0.25),
        said_hit("theirs", BIKE, 200, 0.2, user_id="someone-else"),
        said_hit("same", BIKE, 150, 0.15, conversation_id="c-bus"),
        said_hit("asked", "Can you recommend a bike lock?", 180, 0.1),
        said_hit("before", "I drive to work, the M6 is a nightmare.", 10, 0.09),
    ]
    judge = _Judge()
    # WHEN the head is read
    answered_first(ranked, QUESTION, judge)
    # THEN the only pairs read are those of an earlier and a later statement of one holder in two
    # conversations: "before" then "bus", and "before" then "same" (the bus's conversation is
    # not "before"'s)
    assert judge.asked == [(QUESTION, [("before", "bus"), ("before", "same")])]


def test_a_superseded_statement_or_one_below_the_head_is_never_read() -> None:
    # GIVEN the bus already marked superseded, and the e-bike just below the head, beside turns
    # that ask rather than state
    ranked = [
        r if r.id in ("bus", "bike") else said_hit(r.id, f"Can you remind me about {r.id}?", 30, r.score)
        for r in _ranking()
    ]
    bus = ranked[0]
    assert isinstance(bus, Hit)
    ranked[0] = Hit(record=bus.record, score=bus.score, similarity=bus.similarity, recency=1.0, current=False)
    below = [ranked[0], *ranked[3:], ranked[1], ranked[2]]
    assert below[HEAD].id == "bike"
    judge = _Judge({("bus", "bike"): 0.99})
    # WHEN the heads are read, THEN no pair is there to ask about, and nothing moves
    assert answered_first(ranked, QUESTION, judge) == ranked
    assert answered_first(below, QUESTION, judge) == below
    assert judge.asked == []


def test_at_most_answer_pairs_pairs_are_read_best_ranked_older_first() -> None:
    # GIVEN a head of five statements of one person, each later than the one before it
    ranked: list[Found] = [
        said_hit(f"s{i}", f"I work at shop number {i} on the high street.", 10 * i, 0.5 - i / 10)
        for i in range(5)
    ]
    judge = _Judge()
    # WHEN the head is read
    answered_first(ranked, QUESTION, judge)
    # THEN the judge reads `ANSWER_PAIRS` pairs, those of the first-ranked older statement first
    ((_, pairs),) = judge.asked
    assert len(pairs) == ANSWER_PAIRS
    assert pairs == [("s0", "s1"), ("s0", "s2"), ("s0", "s3"), ("s0", "s4")][:ANSWER_PAIRS]


def _rank(query: str, judge: _Judge) -> list[str]:
    """The ids `rank` puts the ranking's turns in, found by their scores as similarities."""
    found = [Candidate(record=h.record, similarity=h.score) for h in _ranking() if isinstance(h, Hit)]
    asked = Asked(SearchQuery(query=query), RECORDED_AT + timedelta(days=400))
    return [
        r.id for r in rank(Candidates(memories=found), asked, RankingWeights(), ModelCalls(answers=judge))
    ]


def test_a_search_asks_the_judge_only_about_the_present() -> None:
    # GIVEN a judge sure the e-bike is the answer now
    judge = _Judge({("bus", "bike"): 0.99})
    # WHEN a search asks in the past tense, THEN the judge is not asked
    _rank("How did I get to work?", judge)
    assert judge.asked == []
    # WHEN a search asks about the present, THEN it is, and the e-bike comes first
    assert _rank(QUESTION, judge)[:2] == ["bike", "bus"]
    assert len(judge.asked) == 1


@given(
    order=st.permutations(list(range(6))),
    sure=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=30, max_size=30),
)
def test_whatever_the_judge_answers_the_results_and_the_head_stay_the_same_sets(
    order: list[int], sure: list[float]
) -> None:
    # GIVEN any ranking of the six turns, all statements of one person, and any probabilities
    base = [said_hit(h.id, f"I work at place {i} now.", 30 * i, h.score) for i, h in enumerate(_ranking())]
    ranked: list[Found] = [base[i] for i in order]
    ids = [r.id for r in ranked]
    probabilities = {(a, b): sure[(6 * i + j) % 30] for i, a in enumerate(ids) for j, b in enumerate(ids)}
    # WHEN the head is read
    out = answered_first(ranked, QUESTION, _Judge(probabilities))
    # THEN the same results, the head the same set, the rest in place
    assert sorted(r.id for r in out) == sorted(ids)
    assert {r.id for r in out[:HEAD]} == set(ids[:HEAD])
    assert [r.id for r in out[HEAD:]] == ids[HEAD:]
    # AND when something moved, a later statement came first with the one it ended right after it
    if [r.id for r in out] != ids:
        first, second = out[0], out[1]
        assert isinstance(first, Hit) and isinstance(second, Hit)
        assert first.record.occurred_at > second.record.occurred_at
        assert not second.current and second.record.superseded_by == first.id
        assert probabilities[(second.id, first.id)] >= ANSWERED


def test_a_pair_whose_shapes_read_as_no_replacement_is_reordered_but_not_marked() -> None:
    # GIVEN a guitar first and a keyboard bought later third (by their shapes, a second
    # instrument), and a judge sure the keyboard is the answer now
    ranked = _ranking()
    ranked[0] = said_hit("bus", "I play the guitar in a band.", 0, 0.25)
    ranked[2] = said_hit("bike", "Bought a secondhand keyboard to mess around with.", 200, 0.09)
    # WHEN the head is read
    out = answered_first(ranked, "What do I play?", _Judge({("bus", "bike"): 0.97}))
    # THEN the keyboard comes first and the guitar right after it, still current: a mark, which
    # hides a fact, needs the shapes to agree with the judge
    assert [r.id for r in out][:2] == ["bike", "bus"]
    guitar = out[1]
    assert isinstance(guitar, Hit) and guitar.current and guitar.record.superseded_by is None


def test_a_newer_statement_first_already_stays_with_everything_else_in_place() -> None:
    # GIVEN the e-bike first already, two requests, then the bus, and a judge sure the e-bike is
    # the answer now
    base = {r.id: r for r in _ranking()}
    asked = [said_hit(f"q{i}", f"Can you remind me about thing {i}?", 30, 0.2 - i / 100) for i in (1, 2)]
    ranked: list[Found] = [base["bike"], *asked, base["bus"], base["d3"], base["d4"]]
    # WHEN the head is read
    out = answered_first(ranked, QUESTION, _Judge({("bus", "bike"): 0.97}))
    # THEN nothing moves: the bus is not lifted above the turns ranked before it
    assert [r.id for r in out] == [r.id for r in ranked]
    # AND it is marked where it stands, as the shapes agree with the judge
    bus = out[3]
    assert isinstance(bus, Hit) and not bus.current and bus.record.superseded_by == "bike"
