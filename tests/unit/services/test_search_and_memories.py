"""Search ranking, windows and filters; get, list, forget and stats."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.errors import NotFoundError
from agent_memory.model.caller import Caller


def _remember(world: World, content: str, days_ago: float = 0, **fields: object) -> str:
    occurred = world.clock.now() - timedelta(days=days_ago)
    request = WriteRequest.model_validate(
        {"items": [{"content": content, "occurred_at": occurred, **fields}]}
    )
    [accepted] = world.write.accept(Caller("acme"), "bot", request.to_new_memories())
    world.drain()
    return accepted


def _search(world: World, **body: object) -> list[str]:
    return [
        r.record.content
        for r in world.search.search("acme", "bot", SearchRequest.model_validate(body).to_query())
    ]


def test_query_ranks_the_matching_memory_first_with_a_date_prefix(world: World) -> None:
    # GIVEN
    _remember(world, "Alice moved the product launch to March 3.", days_ago=2)
    _remember(world, "The office coffee machine is broken again.", days_ago=1)
    response = world.search.search(
        "acme", "bot", SearchRequest(query="when is the product launch?").to_query()
    )
    top = response[0]
    # WHEN / THEN
    assert top.record.content == "Alice moved the product launch to March 3."
    assert top.text == f"[{(world.clock.now() - timedelta(days=2)).date().isoformat()}] {top.record.content}"
    assert top.similarity is not None and top.similarity > response[1].similarity  # type: ignore[operator]
    assert 0 < top.recency < 1


def test_window_is_measured_in_days_before_as_of(world: World) -> None:
    # GIVEN
    _remember(world, "launch plan draft one", days_ago=40)
    _remember(world, "launch plan draft two", days_ago=10)
    _remember(world, "launch plan draft three", days_ago=1)
    # WHEN / THEN
    assert _search(world, query="launch plan", min_days_ago=5, max_days_ago=30) == ["launch plan draft two"]
    as_of = (world.clock.now() - timedelta(days=30)).isoformat()
    assert _search(world, query="launch plan", as_of=as_of, max_days_ago=15) == ["launch plan draft one"]


def test_no_query_returns_newest_first(world: World) -> None:
    # WHEN
    for i, days in enumerate([5, 1, 3]):
        _remember(world, f"note number {i}", days_ago=days)
    # THEN
    assert _search(world) == ["note number 1", "note number 2", "note number 0"]


def test_recency_breaks_ties_between_equally_relevant_memories(world: World) -> None:
    # GIVEN
    _remember(world, "the deploy key rotates monthly", days_ago=200)
    _remember(world, "the deploy key rotates weekly", days_ago=1)
    # WHEN / THEN
    assert _search(world, query="deploy key rotates")[0] == "the deploy key rotates weekly"


def test_filters_by_kind_tag_and_user(world: World) -> None:
    # GIVEN
    _remember(world, "We decided to use Postgres.", kind="decision", tags=["db"], user_id="u-1")
    _remember(world, "Postgres upgrade failed.", kind="error", tags=["ops"], user_id="u-2")
    # WHEN / THEN
    assert _search(world, query="postgres", kinds=["decision"]) == ["We decided to use Postgres."]
    assert _search(world, query="postgres", tags=["ops"]) == ["Postgres upgrade failed."]
    assert _search(world, query="postgres", user_id="u-2") == ["Postgres upgrade failed."]


def test_min_score_and_max_results(world: World) -> None:
    # WHEN
    for i in range(5):
        _remember(world, f"standup notes for sprint {i}")
    # THEN
    assert len(_search(world, query="standup notes", max_results=3)) == 3
    assert _search(world, query="standup notes", min_score=0.99) == []


def test_expired_memory_is_never_returned(world: World) -> None:
    # GIVEN
    _remember(world, "temporary door code is 4711", ttl_days=1)
    # WHEN / THEN
    assert _search(world, query="door code") == ["temporary door code is 4711"]
    world.clock.advance(days=2)
    assert _search(world, query="door code") == []


def test_search_counts_access(world: World) -> None:
    # GIVEN
    record_id = _remember(world, "Alice prefers morning meetings.")
    _search(world, query="Alice meetings")
    record = world.store.get("acme", "bot", record_id)
    # WHEN / THEN
    assert record is not None and record.access_count == 1 and record.last_accessed_at == world.clock.now()


def test_get_list_forget_and_stats(world: World) -> None:
    # GIVEN
    a = _remember(world, "first memory about apples", days_ago=2)
    b = _remember(world, "second memory about bananas", days_ago=1)
    # WHEN / THEN
    assert world.memories.get("acme", "bot", a).content == "first memory about apples"
    page = world.memories.list("acme", "bot", None, limit=1, cursor=None)
    assert [m.id for m in page.records] == [b] and page.next_cursor
    rest = world.memories.list("acme", "bot", None, limit=1, cursor=page.next_cursor)
    assert [m.id for m in rest.records] == [a]

    world.forget.forget("acme", "bot", a, actor="key_a")
    with pytest.raises(NotFoundError):
        world.memories.get("acme", "bot", a)
    with pytest.raises(NotFoundError):
        world.forget.forget("acme", "bot", a, actor="key_a")
    assert "first memory about apples" not in _search(world, query="apples")
    stats = world.memories.stats("acme", "bot")
    assert stats.records == {"working": 1, "daily": 0, "weekly": 0, "monthly": 0, "quarterly": 0, "yearly": 0}
    assert stats.pending_writes == 0


def test_another_tenant_cannot_get_or_forget(world: World) -> None:
    # GIVEN
    record_id = _remember(world, "acme's secret roadmap")
    # WHEN / THEN
    with pytest.raises(NotFoundError):
        world.memories.get("globex", "bot", record_id)
    with pytest.raises(NotFoundError):
        world.forget.forget("globex", "bot", record_id, actor="key_g")
    assert world.memories.get("acme", "bot", record_id).content == "acme's secret roadmap"
