"""Pending-write marks in DynamoDB: moto for behaviour, Stubber for retries and pagination."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites
from agent_memory.errors import DependencyError

TABLE = "agent-memory-pending"
T0 = 1_795_000_000.0


class SteppingClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def ddb() -> Iterator[Any]:
    """The table as the CDK stack defines it (schema in the adapter's docstring)."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        client.update_time_to_live(
            TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"}
        )
        yield client


@pytest.fixture
def pending(ddb: Any, tick: SteppingClock) -> DynamoDbPendingWrites:
    return DynamoDbPendingWrites(TABLE, client=ddb, ttl_days=14, clock=tick)


def test_marks_are_counted_per_agent_across_many_batches(pending: DynamoDbPendingWrites) -> None:
    # GIVEN 60 writes accepted for one agent (three BatchWriteItem calls), some repeated, and one elsewhere
    ids = [f"mem_{i:03d}" for i in range(60)]
    pending.add("t1", "a1", ids)
    pending.add("t1", "a1", ids[:10] + ids[:10])
    pending.add("t1", "a2", ["mem_000"])

    # THEN each agent counts its distinct records
    assert pending.count("t1", "a1") == 60
    assert pending.count("t1", "a2") == 1
    assert pending.count("t2", "a1") == 0


def test_done_is_idempotent(pending: DynamoDbPendingWrites) -> None:
    # GIVEN 30 marks, of which 27 are stored, some reported twice (a redelivery) with an unknown id
    ids = [f"mem_{i}" for i in range(30)]
    pending.add("t", "a", ids)
    pending.done("t", "a", ids[:27])
    pending.done("t", "a", [*ids[:5], "mem_unknown"])

    # THEN 3 are left
    assert pending.count("t", "a") == 3


def test_each_mark_is_one_item_with_a_ttl(pending: DynamoDbPendingWrites, ddb: Any) -> None:
    pending.add("t", "a", ["mem_1"])
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "t#a"}, "sk": {"S": "mem_1"}})["Item"]
    assert item["expires_at"] == {"N": str(int(T0 + 14 * 86_400))}


def test_expired_marks_no_longer_count_before_ttl_deletes_them(
    pending: DynamoDbPendingWrites, tick: SteppingClock
) -> None:
    # GIVEN a mark that was never cleared and one added ten days later
    pending.add("t", "a", ["mem_lost"])
    tick.now += 10 * 86_400
    pending.add("t", "a", ["mem_new"])

    # WHEN 15 days have passed since the first, THEN only the newer one counts
    tick.now += 5 * 86_400
    assert pending.count("t", "a") == 1


# --- failure paths with Stubber ---------------------------------------------------------------


def stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    return client, Stubber(client)


def put(rid: str) -> dict[str, Any]:
    expires = str(int(T0 + 14 * 86_400))
    return {"PutRequest": {"Item": {"pk": {"S": "t#a"}, "sk": {"S": rid}, "expires_at": {"N": expires}}}}


def test_unprocessed_items_are_written_again_after_a_backoff(tick: SteppingClock) -> None:
    # GIVEN DynamoDB that leaves two of three puts unprocessed once (throttling)
    client, stub = stubbed()
    stub.add_response(
        "batch_write_item",
        {"UnprocessedItems": {TABLE: [put("mem_2"), put("mem_3")]}},
        {"RequestItems": {TABLE: [put("mem_1"), put("mem_2"), put("mem_3")]}},
    )
    stub.add_response(
        "batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": {TABLE: [put("mem_2"), put("mem_3")]}}
    )
    sleeps: list[float] = []

    # WHEN added, THEN only the unprocessed ones are sent again
    with stub:
        DynamoDbPendingWrites(TABLE, client=client, clock=tick, sleep=sleeps.append).add(
            "t", "a", ["mem_1", "mem_2", "mem_3"]
        )
    stub.assert_no_pending_responses()
    assert sleeps == [0.05]


def test_items_that_stay_unprocessed_raise_a_dependency_error(tick: SteppingClock) -> None:
    client, stub = stubbed()
    for _ in range(3):
        stub.add_response("batch_write_item", {"UnprocessedItems": {TABLE: [put("mem_1")]}})
    with stub, pytest.raises(DependencyError, match="1 pending-write update"):
        DynamoDbPendingWrites(TABLE, client=client, clock=tick, max_retries=2, sleep=lambda _: None).add(
            "t", "a", ["mem_1"]
        )
    stub.assert_no_pending_responses()


def test_count_follows_every_page(tick: SteppingClock) -> None:
    # GIVEN a partition whose count comes back in two pages
    client, stub = stubbed()
    query = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "FilterExpression": "expires_at > :now",
        "ExpressionAttributeValues": {":pk": {"S": "t#a"}, ":now": {"N": str(int(T0))}},
        "Select": "COUNT",
    }
    last = {"pk": {"S": "t#a"}, "sk": {"S": "mem_500"}}
    stub.add_response("query", {"Count": 500, "ScannedCount": 500, "LastEvaluatedKey": last}, query)
    stub.add_response("query", {"Count": 7, "ScannedCount": 9}, {**query, "ExclusiveStartKey": last})

    # THEN the count adds them up
    with stub:
        assert DynamoDbPendingWrites(TABLE, client=client, clock=tick).count("t", "a") == 507
    stub.assert_no_pending_responses()


def test_client_errors_become_dependency_errors(tick: SteppingClock) -> None:
    client, stub = stubbed()
    stub.add_client_error("batch_write_item", "ResourceNotFoundException", http_status_code=400)
    stub.add_client_error("query", "ProvisionedThroughputExceededException", http_status_code=400)
    pending = DynamoDbPendingWrites(TABLE, client=client, clock=tick)
    with stub:
        with pytest.raises(DependencyError, match="ResourceNotFoundException"):
            pending.done("t", "a", ["mem_1"])
        with pytest.raises(DependencyError, match="ProvisionedThroughputExceeded"):
            pending.count("t", "a")
