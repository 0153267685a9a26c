"""Pending-write marks in DynamoDB, beyond the shared contract (tests/contract/test_pending_contract.py):
the items and their TTLs (moto), retries and pagination (Stubber)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from tests.fakes import T0, SteppingClock
from tests.tables import create_pending_table

from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites
from agent_memory.errors import DependencyError

TABLE = "agent-memory-pending"


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def ddb() -> Iterator[Any]:
    """The table as the CDK stack defines it (schema in the adapter's docstring)."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_pending_table(client, TABLE)
        client.update_time_to_live(
            TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"}
        )
        yield client


@pytest.fixture
def pending(ddb: Any, tick: SteppingClock) -> DynamoDbPendingWrites:
    return DynamoDbPendingWrites(TABLE, client=ddb, ttl_days=14, clock=tick)


def test_each_mark_is_one_item_with_a_ttl(pending: DynamoDbPendingWrites, ddb: Any) -> None:
    # GIVEN a mark, leased until its message is queued
    pending.add("t", "a", ["mem_1"])
    leased = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "t#a"}, "sk": {"S": "mem_1"}})["Item"]
    # WHEN its message is on the queue
    pending.queued("t", "a", ["mem_1"])
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "t#a"}, "sk": {"S": "mem_1"}})["Item"]
    # THEN the lease (two minutes) becomes the TTL (14 days)
    assert leased["expires_at"] == {"N": str(int(T0 + 120))}
    assert item["state"] == {"S": "pending"}
    assert item["expires_at"] == {"N": str(int(T0 + 14 * 86_400))}


def test_done_leaves_a_tombstone_for_the_dedup_window(
    pending: DynamoDbPendingWrites, ddb: Any, tick: SteppingClock
) -> None:
    # GIVEN a mark cleared at a fractional second
    pending.add("t", "a", ["mem_1"])
    tick.now += 0.5
    pending.done("t", "a", ["mem_1"])

    # WHEN / THEN the item is a done tombstone that lives at least the whole window, and does not count
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "t#a"}, "sk": {"S": "mem_1"}})["Item"]
    assert item["state"] == {"S": "done"}
    assert item["expires_at"] == {"N": str(int(T0) + 301)}
    assert pending.count("t", "a") == 0


def test_a_done_landing_between_the_read_and_the_write_of_a_retry_still_clears(
    ddb: Any, tick: SteppingClock
) -> None:
    # GIVEN a write in flight, and a writer that stores it just while the client's retry is in `add`
    writer = DynamoDbPendingWrites(TABLE, client=ddb, clock=tick)
    writer.add("t", "a", ["mem_1"])
    racing = DynamoDbPendingWrites(TABLE, client=DoneAfterRead(ddb, writer), clock=tick)

    # WHEN the retry runs, THEN the writer's tombstone is not overwritten: nothing is left pending
    racing.add("t", "a", ["mem_1"])
    assert writer.count("t", "a") == 0


class DoneAfterRead:
    """A DynamoDB client whose reads are each followed by the writer storing mem_1."""

    def __init__(self, client: Any, writer: DynamoDbPendingWrites) -> None:
        self._client = client
        self._writer = writer

    def batch_get_item(self, **kwargs: Any) -> Any:
        response = self._client.batch_get_item(**kwargs)
        self._writer.done("t", "a", ["mem_1"])
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_the_dedup_window_and_ttl_must_be_positive() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="dedup_window_s must be positive"):
        DynamoDbPendingWrites(TABLE, dedup_window_s=0)
    with pytest.raises(ValueError, match="ttl_days and lease_s must be positive"):
        DynamoDbPendingWrites(TABLE, ttl_days=-1)


# --- failure paths with Stubber ---------------------------------------------------------------


def stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    return client, Stubber(client)


def tombstone(rid: str) -> dict[str, Any]:
    item = {
        "pk": {"S": "t#a"},
        "sk": {"S": rid},
        "state": {"S": "done"},
        "expires_at": {"N": str(int(T0) + 300)},
    }
    return {"PutRequest": {"Item": item}}


def get_request(*rids: str) -> dict[str, Any]:
    return {
        "Keys": [{"pk": {"S": "t#a"}, "sk": {"S": rid}} for rid in rids],
        "ConsistentRead": True,
        "ProjectionExpression": "sk, #state, expires_at",
        "ExpressionAttributeNames": {"#state": "state"},
    }


def test_unprocessed_items_are_written_again_after_a_backoff(tick: SteppingClock) -> None:
    # GIVEN DynamoDB that leaves two of three puts unprocessed once (throttling)
    client, stub = stubbed()
    stub.add_response(
        "batch_write_item",
        {"UnprocessedItems": {TABLE: [tombstone("mem_2"), tombstone("mem_3")]}},
        {"RequestItems": {TABLE: [tombstone("mem_1"), tombstone("mem_2"), tombstone("mem_3")]}},
    )
    stub.add_response(
        "batch_write_item",
        {"UnprocessedItems": {}},
        {"RequestItems": {TABLE: [tombstone("mem_2"), tombstone("mem_3")]}},
    )
    sleeps: list[float] = []

    # WHEN they are stored, THEN only the unprocessed ones are sent again
    with stub:
        DynamoDbPendingWrites(TABLE, client=client, clock=tick, sleep=sleeps.append).done(
            "t", "a", ["mem_1", "mem_2", "mem_3"]
        )
    stub.assert_no_pending_responses()
    assert sleeps == [0.05]


@pytest.mark.parametrize(
    ("mark", "operation", "answer", "match"),
    [
        pytest.param(
            "done",
            "batch_write_item",
            {"UnprocessedItems": {TABLE: [tombstone("mem_1")]}},
            "1 pending-write update",
            id="items-left-unwritten",
        ),
        pytest.param(
            "add",
            "batch_get_item",
            {"Responses": {}, "UnprocessedKeys": {TABLE: get_request("mem_1")}},
            "1 pending-write read",
            id="keys-left-unread",
        ),
    ],
)
def test_what_stays_unprocessed_through_every_retry_raises_a_dependency_error(
    tick: SteppingClock, mark: str, operation: str, answer: dict[str, Any], match: str
) -> None:
    # GIVEN DynamoDB that leaves mem_1 unprocessed on the first try and on both retries
    client, stub = stubbed()
    for _ in range(3):
        stub.add_response(operation, answer)
    pending = DynamoDbPendingWrites(TABLE, client=client, clock=tick, max_retries=2, sleep=lambda _: None)

    # WHEN / THEN marking it (as pending, or as done) fails, after exactly those three calls
    with stub, pytest.raises(DependencyError, match=match):
        getattr(pending, mark)("t", "a", ["mem_1"])
    stub.assert_no_pending_responses()


def test_unprocessed_keys_are_read_again_before_marking(tick: SteppingClock) -> None:
    # GIVEN DynamoDB that answers for mem_1 (a fresh pending mark) but leaves mem_2's read unprocessed once
    client, stub = stubbed()
    fresh = {"sk": {"S": "mem_1"}, "state": {"S": "pending"}, "expires_at": {"N": str(int(T0) + 100)}}
    stub.add_response(
        "batch_get_item",
        {"Responses": {TABLE: [fresh]}, "UnprocessedKeys": {TABLE: get_request("mem_2")}},
        {"RequestItems": {TABLE: get_request("mem_1", "mem_2")}},
    )
    stub.add_response(
        "batch_get_item", {"Responses": {TABLE: []}}, {"RequestItems": {TABLE: get_request("mem_2")}}
    )
    mark = {"pk": {"S": "t#a"}, "sk": {"S": "mem_2"}, "state": {"S": "pending"}}
    mark["expires_at"] = {"N": str(int(T0 + 120))}  # leased until its message is queued
    stub.add_response(
        "batch_write_item",
        {"UnprocessedItems": {}},
        {"RequestItems": {TABLE: [{"PutRequest": {"Item": mark}}]}},
    )
    sleeps: list[float] = []

    # WHEN both are added, THEN only mem_2 is marked, after a second read
    with stub:
        DynamoDbPendingWrites(TABLE, client=client, clock=tick, sleep=sleeps.append).add(
            "t", "a", ["mem_1", "mem_2"]
        )
    stub.assert_no_pending_responses()
    assert sleeps == [0.05]


def test_count_follows_every_page(tick: SteppingClock) -> None:
    # GIVEN a partition whose count comes back in two pages
    client, stub = stubbed()
    query = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "FilterExpression": "#state = :pending AND expires_at > :now",
        "ExpressionAttributeNames": {"#state": "state"},
        "ExpressionAttributeValues": {
            ":pk": {"S": "t#a"},
            ":pending": {"S": "pending"},
            ":now": {"N": str(int(T0))},
        },
        "Select": "COUNT",
    }
    last = {"pk": {"S": "t#a"}, "sk": {"S": "mem_500"}}
    stub.add_response("query", {"Count": 500, "ScannedCount": 500, "LastEvaluatedKey": last}, query)
    stub.add_response("query", {"Count": 7, "ScannedCount": 9}, {**query, "ExclusiveStartKey": last})

    # WHEN / THEN the count adds them up
    with stub:
        assert DynamoDbPendingWrites(TABLE, client=client, clock=tick).count("t", "a") == 507
    stub.assert_no_pending_responses()


def test_client_errors_become_dependency_errors(tick: SteppingClock) -> None:
    # GIVEN
    client, stub = stubbed()
    stub.add_client_error("batch_write_item", "ResourceNotFoundException", http_status_code=400)
    stub.add_client_error("batch_get_item", "InternalServerError", http_status_code=500)
    stub.add_client_error("query", "ProvisionedThroughputExceededException", http_status_code=400)
    pending = DynamoDbPendingWrites(TABLE, client=client, clock=tick)
    # WHEN / THEN
    with stub:
        with pytest.raises(DependencyError, match="ResourceNotFoundException"):
            pending.done("t", "a", ["mem_1"])
        with pytest.raises(DependencyError, match="InternalServerError"):
            pending.add("t", "a", ["mem_1"])
        with pytest.raises(DependencyError, match="ProvisionedThroughputExceeded"):
            pending.count("t", "a")


def test_discard_deletes_the_mark_without_a_tombstone(pending: DynamoDbPendingWrites, ddb: Any) -> None:
    # GIVEN
    pending.add("t", "a", ["r1", "r2"])
    # WHEN
    pending.discard("t", "a", ["r1"])
    # THEN
    assert pending.count("t", "a") == 1
    pending.add("t", "a", ["r1"])  # a retry after the queue was down counts again
    assert pending.count("t", "a") == 2
