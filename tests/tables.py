"""DynamoDB tables as the CDK stack defines them, for tests against moto."""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.dynamodb_keys import KEY_ID_INDEX


def create_tenants_table(client: Any, name: str) -> None:
    """API keys by hash, and the key-id index (see `adapters.dynamodb_keys`)."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "key_hash", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "key_hash", "AttributeType": "S"},
            {"AttributeName": "key_id", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": KEY_ID_INDEX,
                "KeySchema": [{"AttributeName": "key_id", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def create_pending_table(client: Any, name: str) -> None:
    """Pending-write marks (see `adapters.dynamodb_pending`): ``pk`` = tenant#agent, ``sk`` = id."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
