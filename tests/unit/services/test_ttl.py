"""Default lifetimes by kind on write, and expiry that search honours the moment it comes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.governance.rules.plans import default_ttl_days
from agent_memory.model.caller import Caller
from agent_memory.model.records import MemoryRecord
from agent_memory.writing.write import WriteService

ACME = Caller("acme", key_id="key_a")


@pytest.fixture
def ttl_world(world: World) -> World:
    """The world, its write service giving kinds their default lifetimes (as the container does)."""
    world.write = WriteService(world.queue, world.pending, world.clock, default_ttl_days=default_ttl_days)
    return world


def _stored(world: World, content: str, **fields: object) -> MemoryRecord:
    request = WriteRequest.model_validate({"items": [{"content": content, **fields}]})
    [accepted] = world.write.accept(ACME, "bot", request.to_new_memories())
    world.drain()
    record = world.store.get("acme", "bot", accepted)
    assert record is not None
    return record


def _search(world: World, query: str) -> list[str]:
    request = SearchRequest(query=query)
    return [r.record.content for r in world.search.search("acme", "bot", request.to_query())]


@pytest.mark.parametrize(
    ("fields", "days"),
    [
        ({"role": "user"}, 7),  # a turn with a role and no kind is routine conversation
        ({"kind": "conversation"}, 7),
        ({"kind": "task"}, 30),
        ({"kind": "decision"}, 90),
        ({"kind": "error"}, 14),
    ],
)
def test_a_write_without_ttl_gets_its_kinds_default_lifetime(
    ttl_world: World, fields: dict[str, object], days: int
) -> None:
    # GIVEN
    record = _stored(ttl_world, "We agreed to ship the beta on Friday.", **fields)
    # WHEN / THEN
    assert record.expires_at == ttl_world.clock.now() + timedelta(days=days)


@pytest.mark.parametrize("kind", ["note", "fact", "preference"])
def test_remember_this_kinds_never_expire_by_default(ttl_world: World, kind: str) -> None:
    # WHEN / THEN
    assert _stored(ttl_world, "Alice prefers tea over coffee.", kind=kind).expires_at is None


def test_an_explicit_ttl_wins_over_the_default(ttl_world: World) -> None:
    # GIVEN
    longer = _stored(ttl_world, "Keep the incident timeline for the review.", role="user", ttl_days=30)
    shorter = _stored(ttl_world, "We chose Postgres for the ledger.", kind="decision", ttl_days=2)
    # WHEN / THEN
    assert longer.expires_at == ttl_world.clock.now() + timedelta(days=30)
    assert shorter.expires_at == ttl_world.clock.now() + timedelta(days=2)


def test_without_defaults_a_write_without_ttl_never_expires(world: World) -> None:
    # WHEN / THEN
    assert _stored(world, "Just chatting about the weather.", role="user").expires_at is None


def test_search_drops_an_expired_memory_the_moment_it_expires(ttl_world: World) -> None:
    # GIVEN a conversation turn (7 days by default) and a fact (no expiry)
    turn = _stored(ttl_world, "The temporary door code is 4711.", role="user")
    _stored(ttl_world, "The permanent door code policy is in the handbook.", kind="fact")
    assert turn.expires_at is not None

    # WHEN the clock stands a microsecond before expiry THEN the turn is still found
    ttl_world.clock.advance(seconds=(turn.expires_at - ttl_world.clock.now()).total_seconds() - 1e-6)
    assert "The temporary door code is 4711." in _search(ttl_world, "door code")

    # WHEN it reaches expires_at, with no cleanup run in between, THEN it is gone, and stays gone
    ttl_world.clock.advance(microseconds=1)
    assert ttl_world.clock.now() == turn.expires_at
    assert _search(ttl_world, "door code") == ["The permanent door code policy is in the handbook."]
    ttl_world.clock.advance(days=1)
    assert _search(ttl_world, "door code") == ["The permanent door code policy is in the handbook."]
