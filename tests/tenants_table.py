"""The DynamoDB tenants table as the CDK stack defines it (see `adapters.dynamodb_keys`)."""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.dynamodb_keys import KEY_ID_INDEX


def create_tenants_table(client: Any, name: str) -> None:
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
