"""A search with an answer judge: it asks about the head's statements with the question and puts
the newer one of the pair it is sure of first, and a judge that fails, or a question about the
past, leaves the rules' order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.model.caller import Caller
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService

QUESTION = "How do I get to work?"
SISTER = "My sister lives in Leeds, near the station."
BUS = "I take bus 31 to work, about forty minutes each way."
HOSTING = "We're hosting my in-laws for the weekend."
BIKE = "Picked up the e-bike from the shop on Saturday, 25 minutes door to door this morning."


class WordJudge:
    """An answer judge sure of any pair whose newer statement says ``word``; every call kept."""

    model_id = "word"

    def __init__(self, word: str, fail: bool = False) -> None:
        self.word, self.fail = word, fail
        self.calls: list[tuple[str, list[tuple[str, str]]]] = []

    def answers(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append((question, list(pairs)))
        if self.fail:
            raise DependencyError("judge down")
        return [0.99 if self.word in newer else 0.01 for _, newer in pairs]


def _write(world: World) -> None:
    """Four statements of one person, months apart, each in a write of its own."""
    for content, days in ((SISTER, 300), (BUS, 200), (HOSTING, 100), (BIKE, 10)):
        item = {"content": content, "occurred_at": world.clock.now() - timedelta(days=days)}
        new = WriteRequest.model_validate({"items": [item]}).to_new_memories()
        world.write.accept(Caller("acme"), "bot", new)
    world.drain()


def _search(world: World, question: str, judge: WordJudge | None) -> list[str]:
    service = SearchService(world.store, world.embedder, world.clock, RankingWeights(), answer_judge=judge)
    query = SearchRequest(query=question).to_query()
    return [r.record.content for r in service.search("acme", "bot", query)]


def test_the_newer_statement_of_the_pair_the_judge_is_sure_of_comes_first(world: World) -> None:
    # GIVEN four statements of one person, and the order a search without a judge gives them
    _write(world)
    plain = _search(world, QUESTION, None)
    assert plain[0] != HOSTING
    # WHEN the same question is searched with a judge sure that the in-laws' visit is the answer
    judge = WordJudge("in-laws")
    found = _search(world, QUESTION, judge)
    # THEN that statement comes first, the older one of its surest pair right after it, and the
    # rest keep their order
    assert found[0] == HOSTING
    assert [c for c in found if c not in found[:2]] == [c for c in plain if c not in found[:2]]
    # AND the judge was asked once, with the question and the statements' own words, older first
    [(question, pairs)] = judge.calls
    assert question == QUESTION and (found[1], HOSTING) in pairs


def test_a_failing_judge_or_a_question_about_the_past_leaves_the_rules_order(world: World) -> None:
    # GIVEN the same statements, and the order a search without a judge gives
    _write(world)
    plain = _search(world, QUESTION, None)
    # WHEN the judge fails, THEN the order is the rules'
    assert _search(world, QUESTION, WordJudge("in-laws", fail=True)) == plain
    # WHEN the question is about the past, THEN the judge is not asked
    judge = WordJudge("in-laws")
    _search(world, "How did I get to work in March?", judge)
    assert judge.calls == []
