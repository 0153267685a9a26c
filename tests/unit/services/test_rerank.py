"""The optional reranker re-scores the head of a search's ranking, and a failing one is survived."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.model.caller import Caller
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService


class KeywordReranker:
    """A reranker that trusts one word: the fake of a cross-encoder, with state to assert on."""

    model_id = "keyword"

    def __init__(self, word: str, fail: bool = False) -> None:
        self.word, self.fail, self.calls = word, fail, []  # type: ignore[var-annotated]

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append((query, list(documents)))
        if self.fail:
            raise DependencyError("reranker down")
        return [1.0 if self.word in d else 0.1 for d in documents]


def _write(world: World, *contents: str) -> None:
    items = [{"content": c, "occurred_at": world.clock.now() - timedelta(days=1)} for c in contents]
    world.write.accept(Caller("acme"), "bot", WriteRequest.model_validate({"items": items}).to_new_memories())
    world.drain()


def _search(world: World, reranker: KeywordReranker, **body: object) -> list[str]:
    service = SearchService(world.store, world.embedder, world.clock, RankingWeights(), reranker=reranker)
    return [
        r.record.content for r in service.search("acme", "bot", SearchRequest.model_validate(body).to_query())
    ]


def test_the_reranker_reorders_the_head_by_its_own_relevance(world: World) -> None:
    # GIVEN
    _write(world, "launch launch launch plans", "the launch date is March 3", "launch party snacks")
    reranker = KeywordReranker("March")

    # WHEN
    found = _search(world, reranker, query="launch", max_results=3)

    # THEN
    assert found[0] == "the launch date is March 3"
    [(query, docs)] = reranker.calls
    assert query == "launch" and len(docs) == 3 and all(d.startswith("[") for d in docs)  # dated text


def test_a_failing_reranker_leaves_the_first_ranking(world: World) -> None:
    # GIVEN
    _write(world, "launch launch launch plans", "the launch date is March 3")
    plain = SearchService(world.store, world.embedder, world.clock, RankingWeights())
    first = [r.record.content for r in plain.search("acme", "bot", SearchRequest(query="launch").to_query())]

    # WHEN / THEN
    assert _search(world, KeywordReranker("March", fail=True), query="launch") == first


def test_min_score_applies_to_the_reranked_scores(world: World) -> None:
    # GIVEN
    _write(world, "launch launch launch plans", "the launch date is March 3")

    # WHEN
    found = _search(world, KeywordReranker("March"), query="launch", min_score=0.5)

    # THEN
    assert found == ["the launch date is March 3"]


def test_no_query_no_rerank(world: World) -> None:
    # GIVEN
    _write(world, "a", "b")
    reranker = KeywordReranker("a")
    # WHEN
    _search(world, reranker)
    # THEN
    assert reranker.calls == []
