"""Writes with an ``Idempotency-Key``: the first answer replayed, never a second enqueue, 409 on
reuse with another request, and keys scoped so one tenant can never replay another's answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.services.conftest import World

from agent_memory.adapters.powertools_idempotency import PowertoolsIdempotency, SqliteIdempotencyLayer
from agent_memory.contract.v1 import WriteRequest
from agent_memory.domain.caller import Caller
from agent_memory.errors import DependencyError, IdempotencyKeyReusedError
from agent_memory.services.idempotency import IdempotentWriteService, fingerprint

ACME, GLOBEX = Caller("acme"), Caller("globex")


@pytest.fixture
def service(world: World, tmp_path: Path) -> IdempotentWriteService:
    return IdempotentWriteService(
        world.write, PowertoolsIdempotency(SqliteIdempotencyLayer(tmp_path / "idempotency.db"))
    )


def _request(content: str = "Alice moved the launch to March 3.", **fields: object) -> WriteRequest:
    return WriteRequest.model_validate({"items": [{"content": content, **fields}]})


def test_a_retry_without_occurred_at_gets_the_first_ids_and_queues_nothing(
    world: World, service: IdempotentWriteService
) -> None:
    # GIVEN a write that lets occurred_at default to now (so its ids depend on the time)
    first = service.accept(ACME, "bot", _request(), "k-1")
    world.clock.advance(seconds=30)

    # WHEN it is retried with the same key 30 s later
    retry = service.accept(ACME, "bot", _request(), "k-1")

    # THEN the retry gets the very same answer, marked as a replay, and one message was queued
    assert retry.response == first.response and (first.replayed, retry.replayed) == (False, True)
    assert len(world.queue.receive(10)) == 1
    # (without a key, the same retry would be a new write at a new time)
    plain = service.accept(ACME, "bot", _request())
    assert plain.response.accepted[0].id != first.response.accepted[0].id


def test_the_same_key_with_another_body_is_a_409_and_nothing_is_queued(
    world: World, service: IdempotentWriteService
) -> None:
    service.accept(ACME, "bot", _request(), "k-1")
    world.queue.ack(m.receipt_handle for m in world.queue.receive(10))

    with pytest.raises(IdempotencyKeyReusedError):
        service.accept(ACME, "bot", _request("Something else entirely."), "k-1")
    assert world.queue.receive(10) == []
    assert world.pending.count("acme", "bot") == 1  # only the first write's mark


def test_a_key_reused_for_another_agent_is_another_request(service: IdempotentWriteService) -> None:
    service.accept(ACME, "bot", _request(), "k-1")
    with pytest.raises(IdempotencyKeyReusedError):
        service.accept(ACME, "other-bot", _request(), "k-1")


def test_two_tenants_with_the_same_key_never_see_each_others_answer(
    world: World, service: IdempotentWriteService
) -> None:
    mine = service.accept(ACME, "bot", _request(), "shared-key")
    theirs = service.accept(GLOBEX, "bot", _request(), "shared-key")

    assert not theirs.replayed
    assert theirs.response.accepted[0].id != mine.response.accepted[0].id
    assert [m.group_id for m in world.queue.receive(10)] == ["acme:bot:working", "globex:bot:working"]


def test_whitespace_and_key_order_of_the_body_do_not_change_the_request() -> None:
    a = WriteRequest.model_validate_json('{"items": [{"content": "x", "tags": ["a"], "importance": 0.5}]}')
    b = WriteRequest.model_validate_json('{"items":[{"importance":0.5,"tags":["a"],"content":"x"}]}')
    assert fingerprint("bot", a) == fingerprint("bot", b)
    assert fingerprint("bot", a) != fingerprint("bot2", a)


def test_a_write_that_failed_to_queue_can_be_retried_with_the_same_key(
    world: World, service: IdempotentWriteService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the queue is down for the first attempt
    def down(messages: object) -> None:
        raise DependencyError("the write queue is unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(world.queue, "send", down)
        with pytest.raises(DependencyError):
            service.accept(ACME, "bot", _request(), "k-1")

    # WHEN the client retries with the same key, THEN it runs (nothing was promised) and is queued
    retry = service.accept(ACME, "bot", _request(), "k-1")
    assert not retry.replayed
    assert len(world.queue.receive(10)) == 1
