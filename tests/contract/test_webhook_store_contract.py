"""One contract for webhook stores, run on every adapter: SQLite (local) and DynamoDB (moto).

One webhook per tenant, replaced whole, removed once; what is read back is what was put, the
secret and the event types included; tenants never see each other's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.feed.rules.events import ChangeType
from agent_memory.feed.rules.webhook_config import WebhookConfig
from agent_memory.ports.change_feed import WebhookStore

TABLE = "agent-memory-webhooks"
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _config(tenant: str = "acme", **fields: Any) -> WebhookConfig:
    base: dict[str, Any] = {
        "tenant_id": tenant,
        "url": f"https://{tenant}.example.com/in",
        "secret": "whsec_" + tenant * 8,
        "created_at": T0,
        "updated_at": T0,
        "updated_by": "key_1",
    }
    return WebhookConfig(**{**base, **fields})


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WebhookStore]:
    if request.param == "sqlite":
        from agent_memory.adapters.sqlite.sqlite_webhooks import SqliteWebhookStore

        local = SqliteWebhookStore(tmp_path / "webhooks.db")
        yield local
        local.close()
        return
    from agent_memory.adapters.dynamodb_webhooks import DynamoDbWebhookStore

    with mock_aws():
        client: Any = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "tenant_id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "tenant_id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield DynamoDbWebhookStore(TABLE, client=client)


def test_a_webhook_reads_back_as_it_was_put(store: WebhookStore) -> None:
    # GIVEN
    config = _config(event_types=(ChangeType.MEMORY_CREATED, ChangeType.USER_ERASED), include_content=True)
    # WHEN
    store.put_webhook(config)
    # THEN
    assert store.get_webhook("acme") == config


def test_a_put_replaces_the_tenants_webhook_whole(store: WebhookStore) -> None:
    # GIVEN
    store.put_webhook(_config(event_types=(ChangeType.MEMORY_CREATED,), include_content=True))
    # WHEN
    store.put_webhook(_config(url="https://acme.example.com/v2"))
    # THEN
    found = store.get_webhook("acme")
    assert found is not None
    assert (found.url, found.event_types, found.include_content) == (
        "https://acme.example.com/v2",
        None,
        False,
    )


def test_tenants_are_kept_apart_and_a_delete_removes_one_once(store: WebhookStore) -> None:
    # GIVEN two tenants' webhooks
    store.put_webhook(_config("acme"))
    store.put_webhook(_config("globex"))
    # WHEN acme's is removed, twice
    removed = [store.delete_webhook("acme"), store.delete_webhook("acme")]
    # THEN
    assert removed == [True, False]
    assert store.get_webhook("acme") is None
    assert store.get_webhook("globex") == _config("globex")
    assert store.get_webhook("initech") is None
