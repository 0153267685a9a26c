"""The writer handler on SQS FIFO batches from `events/`: partial failures, poison, order."""

from __future__ import annotations

import json

import pytest
from tests.payloads import load_event

from agent_memory import container
from agent_memory.handlers import writer
from agent_memory.local.lambda_context import LocalContext


def test_batch_is_stored_across_groups(local_env: object) -> None:
    # WHEN
    response = writer.handler(load_event("sqs_write_batch.json"), LocalContext())
    # THEN
    assert response == {"batchItemFailures": []}
    store, now = container.store(), container.clock().now()
    assert store.stats("acme", "support-bot", now).records == {"working": 2}
    assert store.stats("acme", "ops-bot", now).records == {"working": 1}


def test_redelivered_batch_is_idempotent(local_env: object) -> None:
    # GIVEN
    event = load_event("sqs_write_batch.json")
    # WHEN
    writer.handler(event, LocalContext())
    # THEN
    assert writer.handler(event, LocalContext()) == {"batchItemFailures": []}
    assert container.store().stats("acme", "support-bot", container.clock().now()).records == {"working": 2}


def test_poison_message_goes_to_the_dlq_and_does_not_block_its_group(local_env: object) -> None:
    # WHEN
    response = writer.handler(load_event("sqs_poison_batch.json"), LocalContext())
    # THEN
    assert response == {"batchItemFailures": []}
    [letter] = container.dead_letters().dead_letters()  # type: ignore[attr-defined]
    assert "invalid write command" in letter.reason and letter.group_id == "acme:support-bot:working"
    # the later message of the same group was stored
    assert container.store().stats("acme", "support-bot", container.clock().now()).records == {"working": 1}


def test_store_failure_fails_the_rest_of_the_group_only(
    local_env: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN
    event = load_event("sqs_write_batch.json")
    service = container.writer_service()
    original = service.apply
    first_id = json.loads(event["Records"][0]["body"])["record"]["id"]

    # WHEN
    def failing_apply(command, vector=None):  # type: ignore[no-untyped-def]
        if command.record.id == first_id:
            raise ConnectionError("store unavailable")
        return original(command, vector)

    # THEN
    monkeypatch.setattr(service, "apply", failing_apply)
    response = writer.handler(event, LocalContext())
    failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
    # the failing record and the later one of its group are retried; the other group landed
    assert failed == {event["Records"][0]["messageId"], event["Records"][1]["messageId"]}
    assert container.store().stats("acme", "ops-bot", container.clock().now()).records == {"working": 1}


def test_a_write_whose_tenant_key_the_provider_refuses_is_dead_lettered_saying_so(
    local_env: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tenant whose own embedding provider refuses its key
    from tests.fakes import refusing_spaces

    service = container.writer_service()
    monkeypatch.setattr(service._embedders, "for_tenant", lambda tenant: refusing_spaces())
    # WHEN its writes reach the writer
    response = writer.handler(load_event("sqs_write_batch.json"), LocalContext())
    # THEN none is retried in vain: each is dead-lettered with the reason, nothing stored, and the
    # refusal is in the tenant's settings history
    assert response == {"batchItemFailures": []}
    letters = container.dead_letters().dead_letters()  # type: ignore[attr-defined]
    assert len(letters) == 3 and all(letter.reason.startswith("provider_key_rejected") for letter in letters)
    assert container.store().stats("acme", "support-bot", container.clock().now()).records == {}
    from agent_memory.ports import AuditQuery
    from agent_memory.tenancy.settings import SETTINGS_RECORD, TENANT_AUDIT_AGENT

    events = container.store().audit_events(AuditQuery("acme", TENANT_AUDIT_AGENT, SETTINGS_RECORD)).events
    assert [str(e.action) for e in events][:1] == ["provider_key_rejected"]
