"""The webhook delivery handler on the sample SQS event (change events from the bus's rule):
each POSTed, signed, to the webhook of its tenant; one that fails reported as a batch item
failure; a tenant without a webhook gets nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.payloads import load_event

from agent_memory import container
from agent_memory.adapters.http_webhooks import GuardedWebhookSender
from agent_memory.feed.rules.events import SIGNATURE_HEADER, verify_signature
from agent_memory.feed.rules.webhook_config import WebhookConfig
from agent_memory.handlers import webhook_delivery
from agent_memory.local.lambda_context import LocalContext

SECRET = "whsec_" + "s" * 40
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def posts(local_env: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bytes, Mapping[str, str]]]:
    """Acme's webhook, and what its endpoint receives (no socket: the sender is replaced)."""
    seen: list[tuple[str, bytes, Mapping[str, str]]] = []

    def post(self: Any, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        seen.append((url, body, headers))
        return 500 if b"user.erased" in body else 204

    monkeypatch.setattr(GuardedWebhookSender, "post", post)
    container.current().feed.webhook_store.put_webhook(
        WebhookConfig(
            tenant_id="acme",
            url="https://hooks.example.com/in",
            secret=SECRET,
            include_content=True,
            created_at=T0,
            updated_at=T0,
            updated_by="key_1",
        )
    )
    return seen


def test_each_event_of_the_batch_is_posted_signed_and_a_failed_one_reported(
    posts: list[tuple[str, bytes, Mapping[str, str]]],
) -> None:
    # GIVEN the sample batch: a memory created, then a user erased (which the endpoint refuses)
    event = load_event("sqs_webhook_deliveries.json")
    # WHEN
    answer = webhook_delivery.handler(event, LocalContext(function_name="webhook-delivery"))
    # THEN both were posted (at once: a standard queue's events are independent), signed; the
    # refused one is a batch item failure, to be retried
    posts.sort(key=lambda p: json.loads(p[1])["type"])
    assert [json.loads(body)["type"] for _, body, _ in posts] == ["memory.created", "user.erased"]
    for url, body, headers in posts:
        assert url == "https://hooks.example.com/in"
        verify_signature(SECRET, body, headers[SIGNATURE_HEADER])
    assert json.loads(posts[0][1])["content"]["content"] == "Alice moved the launch to March 3."
    assert answer == {"batchItemFailures": [{"itemIdentifier": event["Records"][1]["messageId"]}]}


def test_a_tenant_without_a_webhook_gets_nothing_and_nothing_fails(
    posts: list[tuple[str, bytes, Mapping[str, str]]],
) -> None:
    # GIVEN the sample batch, made another tenant's
    event = load_event("sqs_webhook_deliveries.json")
    for record in event["Records"]:
        wrapped = json.loads(record["body"])
        wrapped["detail"]["tenant_id"] = "globex"
        record["body"] = json.dumps(wrapped)
    # WHEN
    answer = webhook_delivery.handler(event, LocalContext())
    # THEN
    assert posts == [] and answer == {"batchItemFailures": []}
