"""DynamoDB tables and SQS queues as the CDK stack defines them, for tests against moto."""

from __future__ import annotations

import json
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


def create_topics_table(client: Any, name: str) -> None:
    """Topic dictionaries and proposals (see `adapters.dynamodb_topics`): ``tenant_id``, ``sk``."""
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "tenant_id", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "tenant_id", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def create_write_queues(sqs: Any, max_receives: int | None = None) -> tuple[str, str]:
    """The FIFO write queue and its FIFO dead-letter queue: their URLs. With ``max_receives``, the
    write queue's redrive policy moves a message to the dead-letter queue after that many receives."""
    dlq = sqs.create_queue(QueueName="writes-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    attributes = {"FifoQueue": "true"}
    if max_receives is not None:
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receives}
        attributes["RedrivePolicy"] = json.dumps(redrive)
    queue = sqs.create_queue(QueueName="writes.fifo", Attributes=attributes)["QueueUrl"]
    return queue, dlq
