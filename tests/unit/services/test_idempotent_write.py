"""Writes with an ``Idempotency-Key``: the first answer replayed, never a second enqueue, 409 on
reuse with another request, and keys scoped so one tenant can never replay another's answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.services.conftest import World

from agent_memory.adapters.powertools_idempotency import PowertoolsIdempotency, SqliteIdempotencyLayer
from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import DependencyError, IdempotencyKeyReusedError
from agent_memory.model.caller import Caller
from agent_memory.writing.idempotent_write import Accepted, IdempotentWriteService

ACME, GLOBEX = Caller("acme"), Caller("globex")


@pytest.fixture
def service(world: World, tmp_path: Path) -> IdempotentWriteService:
    return IdempotentWriteService(
        world.write, PowertoolsIdempotency(SqliteIdempotencyLayer(tmp_path / "idempotency.db"))
    )


def _send(
    service: IdempotentWriteService, caller: Caller, agent: str, request: WriteRequest, key: str | None = None
) -> Accepted:
    """What the write route does: the request's items, the key, and what the request asked."""
    return service.accept(caller, agent, request.to_new_memories(), key, request.fingerprint(agent))


def _request(content: str = "Alice moved the launch to March 3.", **fields: object) -> WriteRequest:
    return WriteRequest.model_validate({"items": [{"content": content, **fields}]})


def test_a_retry_without_occurred_at_gets_the_first_ids_and_queues_nothing(
    world: World, service: IdempotentWriteService
) -> None:
    # GIVEN a write that lets occurred_at default to now (so its ids depend on the time)
    first = _send(service, ACME, "bot", _request(), "k-1")
    world.clock.advance(seconds=30)

    # WHEN it is retried with the same key 30 s later
    retry = _send(service, ACME, "bot", _request(), "k-1")

    # THEN the retry gets the very same answer, marked as a replay, and one message was queued
    assert retry.ids == first.ids and (first.replayed, retry.replayed) == (False, True)
    assert len(world.queue.receive(10)) == 1
    # (without a key, the same retry would be a new write at a new time)
    plain = _send(service, ACME, "bot", _request())
    assert plain.ids[0] != first.ids[0]


def test_the_same_key_with_another_body_is_a_409_and_nothing_is_queued(
    world: World, service: IdempotentWriteService
) -> None:
    # GIVEN
    _send(service, ACME, "bot", _request(), "k-1")
    world.queue.ack(m.receipt_handle for m in world.queue.receive(10))

    # WHEN / THEN
    with pytest.raises(IdempotencyKeyReusedError):
        _send(service, ACME, "bot", _request("Something else entirely."), "k-1")
    assert world.queue.receive(10) == []
    assert world.pending.count("acme", "bot") == 1  # only the first write's mark


def test_a_key_reused_for_another_agent_is_another_request(service: IdempotentWriteService) -> None:
    # GIVEN
    _send(service, ACME, "bot", _request(), "k-1")
    # WHEN / THEN
    with pytest.raises(IdempotencyKeyReusedError):
        _send(service, ACME, "other-bot", _request(), "k-1")


def test_two_tenants_with_the_same_key_never_see_each_others_answer(
    world: World, service: IdempotentWriteService
) -> None:
    # GIVEN
    mine = _send(service, ACME, "bot", _request(), "shared-key")
    theirs = _send(service, GLOBEX, "bot", _request(), "shared-key")

    # WHEN / THEN
    assert not theirs.replayed
    assert theirs.ids[0] != mine.ids[0]
    assert [m.group_id for m in world.queue.receive(10)] == ["acme:bot:working", "globex:bot:working"]


def test_whitespace_and_key_order_of_the_body_do_not_change_the_request() -> None:
    # GIVEN
    a = WriteRequest.model_validate_json('{"items": [{"content": "x", "tags": ["a"], "importance": 0.5}]}')
    b = WriteRequest.model_validate_json('{"items":[{"importance":0.5,"tags":["a"],"content":"x"}]}')
    # WHEN / THEN
    assert a.fingerprint("bot") == b.fingerprint("bot")
    assert a.fingerprint("bot") != a.fingerprint("bot2")


def test_a_write_that_failed_to_queue_can_be_retried_with_the_same_key(
    world: World, service: IdempotentWriteService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the queue is down for the first attempt
    def down(messages: object) -> None:
        raise DependencyError("the write queue is unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(world.queue, "send", down)
        with pytest.raises(DependencyError):
            _send(service, ACME, "bot", _request(), "k-1")

    # WHEN the client retries with the same key, THEN it runs (nothing was promised) and is queued
    retry = _send(service, ACME, "bot", _request(), "k-1")
    assert not retry.replayed
    assert len(world.queue.receive(10)) == 1
