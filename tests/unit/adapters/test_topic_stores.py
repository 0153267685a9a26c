"""Both `TopicStore` adapters against one contract: SQLite, and DynamoDB under moto."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from tests.tables import create_topics_table

from agent_memory.adapters.dynamodb_topics import DynamoDbTopicStore
from agent_memory.adapters.sqlite.sqlite_topics import SqliteTopicStore
from agent_memory.errors import ConfigurationError
from agent_memory.knowledge.rules.topic_dictionary import PROPOSAL_TTL_DAYS, TopicDictionary
from agent_memory.ports import TopicStore

TABLE = "agent-memory-topics"
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
LAUNCH = TopicDictionary.build({"launch date": ["release date", "go-live"]})


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TopicStore]:
    if request.param == "sqlite":
        sqlite = SqliteTopicStore(tmp_path / "topics.db")
        yield sqlite
        sqlite.close()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_topics_table(client, TABLE)
        yield DynamoDbTopicStore(TABLE, client=client)


def test_a_tenant_without_a_dictionary_has_none(store: TopicStore) -> None:
    # WHEN / THEN
    assert store.get_dictionary("acme") is None
    assert store.list_proposals("acme", T0) == []


def test_a_dictionary_is_stored_replaced_and_removed_per_tenant(store: TopicStore) -> None:
    # GIVEN acme's dictionary
    store.put_dictionary("acme", LAUNCH, T0)

    # THEN acme reads it back, and globex still has none
    stored = store.get_dictionary("acme")
    assert stored is not None and stored.dictionary == LAUNCH and stored.updated_at == T0
    assert store.get_dictionary("globex") is None

    # WHEN it is replaced, THEN the new one is read
    budget = TopicDictionary.build({"budget": ["spend"]})
    store.put_dictionary("acme", budget, T0 + timedelta(hours=1))
    stored = store.get_dictionary("acme")
    assert stored is not None and stored.dictionary == budget and stored.updated_at == T0 + timedelta(hours=1)

    # WHEN it is replaced by an empty one, THEN acme has none
    store.put_dictionary("acme", TopicDictionary(), T0)
    assert store.get_dictionary("acme") is None


def test_proposals_are_counted_per_tenant_with_first_and_last_seen(store: TopicStore) -> None:
    # GIVEN unknown topics seen in two writes of acme and one of globex
    store.record_proposals("acme", {"hiring plan": 2, "office move": 1}, T0)
    store.record_proposals("acme", {"hiring plan": 1}, T0 + timedelta(days=1))
    store.record_proposals("globex", {"secret project": 5}, T0)
    store.record_proposals("acme", {}, T0)  # nothing to count: nothing happens

    # WHEN acme's are listed
    listed = {p.topic: p for p in store.list_proposals("acme", T0 + timedelta(days=1))}

    # THEN the counts add up, the first and last sightings are kept, and globex's are not there
    assert set(listed) == {"hiring plan", "office move"}
    hiring = listed["hiring plan"]
    assert (hiring.count, hiring.first_seen, hiring.last_seen) == (3, T0, T0 + timedelta(days=1))
    assert listed["office move"].count == 1
    assert [p.topic for p in store.list_proposals("globex", T0)] == ["secret project"]


def test_a_proposal_not_seen_for_the_ttl_is_no_longer_listed(store: TopicStore) -> None:
    # GIVEN
    store.record_proposals("acme", {"old name": 1}, T0)
    store.record_proposals("acme", {"new name": 1}, T0 + timedelta(days=PROPOSAL_TTL_DAYS))
    later = T0 + timedelta(days=PROPOSAL_TTL_DAYS, seconds=1)
    # WHEN / THEN
    assert [p.topic for p in store.list_proposals("acme", later)] == ["new name"]


def test_dynamodb_proposals_carry_the_ttl_attribute_and_a_missing_table_is_configuration() -> None:
    with mock_aws():
        # GIVEN
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_topics_table(client, TABLE)
        DynamoDbTopicStore(TABLE, client=client).record_proposals("acme", {"hiring plan": 1}, T0)
        item = client.get_item(
            TableName=TABLE, Key={"tenant_id": {"S": "acme"}, "sk": {"S": "proposal#hiring plan"}}
        )["Item"]
        # WHEN / THEN
        assert int(item["expires_at"]["N"]) == int((T0 + timedelta(days=PROPOSAL_TTL_DAYS)).timestamp())

        with pytest.raises(ConfigurationError, match="does not exist"):
            DynamoDbTopicStore("no-such-table", client=client).get_dictionary("acme")


def test_dynamodb_lists_every_page_and_skips_expired_items_ttl_has_not_deleted_yet() -> None:
    # GIVEN a listing that spans two Query pages, one item past its TTL
    client = boto3.client("dynamodb", region_name="us-east-1")
    live, gone = int(T0.timestamp()) + 60, int(T0.timestamp()) - 60

    def item(topic: str, expires: int) -> dict[str, Any]:
        return {
            "tenant_id": {"S": "acme"}, "sk": {"S": f"proposal#{topic}"}, "topic": {"S": topic},
            "count": {"N": "2"}, "first_seen": {"S": T0.isoformat()}, "last_seen": {"S": T0.isoformat()},
            "expires_at": {"N": str(expires)},
        }  # fmt: skip

    with Stubber(client) as stub:
        stub.add_response(
            "query", {"Items": [item("a", live), item("b", gone)], "LastEvaluatedKey": {"k": {"S": "b"}}}
        )
        stub.add_response(
            "query", {"Items": [item("c", live)]}, {**_QUERY, "ExclusiveStartKey": {"k": {"S": "b"}}}
        )
        # WHEN it is listed
        listed = DynamoDbTopicStore(TABLE, client=client).list_proposals("acme", T0)
        stub.assert_no_pending_responses()

    # THEN both pages are read and the expired item is left out
    assert [(p.topic, p.count) for p in listed] == [("a", 2), ("c", 2)]


_QUERY = {
    "TableName": TABLE,
    "KeyConditionExpression": "#tenant_id = :tenant AND begins_with(#sk, :prefix)",
    "ExpressionAttributeNames": {"#tenant_id": "tenant_id", "#sk": "sk"},
    "ExpressionAttributeValues": {":tenant": {"S": "acme"}, ":prefix": {"S": "proposal#"}},
}
