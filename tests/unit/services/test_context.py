"""Context blocks: the most relevant memories, dated and grain-tagged, packed to a token budget."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import ContextRequest, ContextResponse, WriteRequest
from agent_memory.model.caller import Caller
from agent_memory.recall.context import ContextService, estimate_tokens


def _remember(world: World, content: str, days_ago: float = 0) -> str:
    occurred = world.clock.now() - timedelta(days=days_ago)
    request = WriteRequest.model_validate({"items": [{"content": content, "occurred_at": occurred}]})
    [accepted] = world.write.accept(Caller("acme"), "bot", request.to_new_memories())
    world.drain()
    return accepted


def _context(world: World, **body: object) -> ContextResponse:
    """As the context route answers: the request's query, the block as its response body."""
    query = ContextRequest.model_validate(body).to_query()
    return ContextResponse.of(ContextService(world.search).context("acme", "bot", query))


@pytest.mark.parametrize(
    ("text", "at_least"),
    [
        ("", 0),
        ("launch", 2),  # one word: 4/3 rounds up
        ("The launch moved to March 3.", 8),
        ("東京の会議は三月三日に移動した", 15),  # one token a character, at least
        ("🙂🙂🙂", 3),
    ],
)
def test_token_estimate_errs_high(text: str, at_least: int) -> None:
    # WHEN / THEN
    assert estimate_tokens(text) >= at_least


def test_context_holds_the_relevant_memories_dated_and_oldest_first(world: World) -> None:
    # GIVEN three memories about the launch and one unrelated
    old = _remember(world, "Alice proposed a launch in February.", days_ago=20)
    new = _remember(world, "Alice moved the launch to March 3.", days_ago=2)
    _remember(world, "The office plants need water on Fridays.", days_ago=1)

    # WHEN the agent asks for context about the launch
    block = _context(world, query="when is the launch?", token_budget=2000)

    # THEN the launch memories are in it, each line dated and tagged, oldest first
    lines = block.context.splitlines()
    ids = [item.id for item in block.items]
    assert ids.index(old) < ids.index(new)
    first = world.clock.now() - timedelta(days=20)
    assert f"[{first.date().isoformat()} · working] Alice proposed a launch in February." in lines
    assert len(lines) == len(block.items)
    assert block.tokens <= block.token_budget
    assert block.tokens == sum(i.tokens for i in block.items) + len(lines) - 1


def test_a_small_budget_drops_the_least_relevant_first(world: World) -> None:
    # GIVEN memories that all match, one far better than the rest
    best = _remember(world, "The launch date is March 3; Alice confirmed the launch date.")
    for i in range(30):
        _remember(world, f"Note {i}: a launch checklist item about slides and catering number {i}.")
    everything = _context(world, query="launch date", token_budget=20_000)

    # WHEN the budget holds only a few lines
    small = _context(world, query="launch date", token_budget=60)

    # THEN it stays within the budget, keeps the most relevant, and counts what it left out
    assert small.tokens <= 60
    assert best in {i.id for i in small.items}
    kept = {i.id for i in small.items}
    ranked = [i.id for i in sorted(everything.items, key=lambda i: -i.score)]
    assert kept == set(ranked[: len(kept)])  # a prefix of the relevance order, nothing skipped
    assert small.dropped == len(everything.items) - len(small.items) + everything.dropped


def test_the_line_that_does_not_fit_is_cut_at_a_word_with_an_ellipsis(world: World) -> None:
    # GIVEN
    long = " ".join(f"launch{i}" for i in range(200))
    _remember(world, long)

    # WHEN
    block = _context(world, query="launch1", token_budget=60)

    # THEN
    [item] = block.items
    assert block.context.endswith(" …")
    assert block.tokens <= 60
    assert item.tokens == estimate_tokens(block.context)


def test_no_memories_give_an_empty_block(world: World) -> None:
    # WHEN
    block = _context(world, query="anything at all")

    # THEN
    assert (block.context, block.items, block.tokens, block.dropped) == ("", [], 0, 0)


def test_a_blank_query_is_refused() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="blank"):
        ContextRequest.model_validate({"query": "   "})
    with pytest.raises(ValueError):
        ContextRequest.model_validate({"query": "x", "token_budget": 10})
