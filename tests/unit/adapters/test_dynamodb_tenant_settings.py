"""`DynamoDbTenantSettingsStore` under moto: what only the DynamoDB table shows (its item, a missing
table). The behaviour both settings stores share is in tests/contract/test_tenant_settings_contract.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.contract.test_tenant_settings_contract import FULL, T0, TABLE, create_tenant_settings_table

from agent_memory.adapters.dynamodb_tenant_settings import DynamoDbTenantSettingsStore
from agent_memory.errors import ConfigurationError
from agent_memory.tenancy.rules.tenant_settings import TenantSettings


@pytest.fixture
def client() -> Iterator[Any]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_tenant_settings_table(dynamodb, TABLE)
        yield dynamodb


@pytest.fixture
def store(client: Any) -> DynamoDbTenantSettingsStore:
    return DynamoDbTenantSettingsStore(TABLE, client=client)


def test_the_stored_item_has_the_documented_attributes(
    store: DynamoDbTenantSettingsStore, client: Any
) -> None:
    # GIVEN
    store.put_settings("acme", TenantSettings(), 0, "alice", T0)

    # WHEN
    store.put_settings("acme", FULL, 1, "bob", T0 + timedelta(minutes=5))

    # THEN
    item = client.get_item(TableName=TABLE, Key={"tenant_id": {"S": "acme"}})["Item"]
    assert set(item) == {"tenant_id", "settings", "version", "updated_at", "updated_by"}
    assert item["tenant_id"] == {"S": "acme"}
    assert TenantSettings.model_validate(json.loads(item["settings"]["S"])) == FULL
    assert item["version"] == {"N": "2"}
    assert datetime.fromisoformat(item["updated_at"]["S"]) == T0 + timedelta(minutes=5)
    assert item["updated_by"] == {"S": "bob"}


def test_a_missing_table_is_a_configuration_error(client: Any) -> None:
    # GIVEN
    missing = DynamoDbTenantSettingsStore("no-such-table", client=client)

    # WHEN / THEN reading and writing both say the table does not exist
    with pytest.raises(ConfigurationError, match="does not exist"):
        missing.get_settings("acme")
    with pytest.raises(ConfigurationError, match="does not exist"):
        missing.put_settings("acme", FULL, 0, "alice", T0)
