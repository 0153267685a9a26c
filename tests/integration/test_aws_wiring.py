"""The same handlers wired to AWS adapters (SQS FIFO, DynamoDB) under moto.

This is the deployed hot path minus OpenSearch and Bedrock: API -> SQS FIFO -> writer, with
pending writes counted in DynamoDB and a poison message landing in the FIFO DLQ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.environment import set_env, sqs_write_path_env
from tests.integration.conftest import call_api
from tests.payloads import load_event, sqs_event
from tests.tables import create_pending_table, create_topics_table, create_write_queues

from agent_memory import container
from agent_memory.handlers import writer
from agent_memory.local.lambda_context import LocalContext


@pytest.fixture
def aws_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        queue, dlq = create_write_queues(sqs)
        create_pending_table(boto3.client("dynamodb", region_name="us-east-1"), "pending")
        set_env(monkeypatch, sqs_write_path_env(tmp_path, queue, dlq))
        container.reset()
        yield {"sqs": sqs, "queue": queue, "dlq": dlq}
        container.reset()


def _receive_as_event(sqs: Any, queue_url: str) -> dict[str, Any]:
    """What the SQS event source mapping would hand the writer."""
    messages = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", [])
    return sqs_event(messages)


def test_write_flows_through_sqs_fifo_to_the_store(aws_env: dict[str, Any]) -> None:
    # WHEN
    status, _body = call_api(load_event("api_write_conversation.json"))
    # THEN
    assert status == 202
    assert call_api(load_event("api_stats.json"))[1]["pending_writes"] == 2

    event = _receive_as_event(aws_env["sqs"], aws_env["queue"])
    assert [r["attributes"]["MessageGroupId"] for r in event["Records"]] == ["acme:support-bot:working"] * 2
    assert writer.handler(event, LocalContext()) == {"batchItemFailures": []}

    stats = call_api(load_event("api_stats.json"))[1]
    assert stats["pending_writes"] == 0 and stats["records"]["working"] == 2
    results = call_api(load_event("api_search.json", body=json.dumps({"query": "March 3 launch"})))[1][
        "results"
    ]
    assert {r["content"] for r in results} == {
        "Can we ship on March 3?",
        "Yes, March 3 works for the launch.",
    }


def test_a_client_retry_is_delivered_and_stored_once(aws_env: dict[str, Any]) -> None:
    # GIVEN the same write accepted twice (each acceptance is a message the queue keeps)
    call_api(load_event("api_write.json"))
    call_api(load_event("api_write.json"))
    event = _receive_as_event(aws_env["sqs"], aws_env["queue"])
    bodies = [json.loads(r["body"]) for r in event["Records"]]
    assert len(bodies) == 2 and bodies[0]["record"]["id"] == bodies[1]["record"]["id"]
    # WHEN the writer takes both THEN both succeed and one record is stored
    assert writer.handler(event, LocalContext()) == {"batchItemFailures": []}
    assert container.store().stats("acme", "support-bot", container.clock().now()).records == {"working": 1}


def test_poison_message_lands_in_the_fifo_dlq_with_its_reason(aws_env: dict[str, Any]) -> None:
    # GIVEN
    sqs = aws_env["sqs"]
    sqs.send_message(
        QueueUrl=aws_env["queue"],
        MessageBody="{not json",
        MessageGroupId="acme:bot:working",
        MessageDeduplicationId="poison-1",
    )
    # WHEN
    response = writer.handler(_receive_as_event(sqs, aws_env["queue"]), LocalContext())
    # THEN
    assert response == {"batchItemFailures": []}
    [letter] = sqs.receive_message(
        QueueUrl=aws_env["dlq"], MessageAttributeNames=["All"], AttributeNames=["All"]
    )["Messages"]
    assert letter["Body"] == "{not json"
    assert "invalid write command" in letter["MessageAttributes"]["reason"]["StringValue"]
    assert letter["Attributes"]["MessageGroupId"] == "acme:bot:working"


def _event(method: str, path: str, body: Any = None, scopes: str = "read write") -> dict[str, Any]:
    event = load_event("api_stats.json")
    event = {**event, "httpMethod": method, "path": path, "body": None if body is None else json.dumps(body)}
    event["requestContext"] = {
        **event["requestContext"],
        "httpMethod": method,
        "authorizer": {**event["requestContext"]["authorizer"], "scopes": scopes},
    }
    event["headers"] = {**(event.get("headers") or {}), "Content-Type": "application/json"}
    return event


def test_topic_dictionary_in_dynamodb_canonicalises_writes_and_counts_proposals(
    aws_env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the deployed topics table (as the stack defines it) and the functions configured for it
    create_topics_table(boto3.client("dynamodb", region_name="us-east-1"), "topics")
    monkeypatch.setenv("AGENT_MEMORY_TOPICS", "dynamodb")
    monkeypatch.setenv("AGENT_MEMORY_TOPICS_TABLE", "topics")
    container.reset()

    # WHEN an admin sets the dictionary and a writer names a synonym and an unknown topic
    terms = {"launch date": ["go-live"]}
    put = _event("PUT", "/v1/admin/topics", {"terms": terms}, scopes="admin read write")
    status, stored = call_api(put)
    assert (status, stored["terms"]) == (200, terms)
    assert call_api(_event("GET", "/v1/topics")) == (200, stored)
    # a key without the admin scope may read it, not replace it
    assert call_api(_event("PUT", "/v1/admin/topics", {"terms": {}}))[0] == 403
    items = [{"content": "We go live on March 3.", "topic": "Go-Live"}, {"content": "x", "topic": "Hiring"}]
    assert call_api(_event("POST", "/v1/agents/support-bot/memories", {"items": items}))[0] == 202

    # THEN the queued records carry the canonical topic and the raw one, and the unknown one is proposed
    records = [
        json.loads(r["body"])["record"]
        for r in _receive_as_event(aws_env["sqs"], aws_env["queue"])["Records"]
    ]
    assert sorted((r["topic"], r["topic_raw"]) for r in records) == [
        ("hiring", "Hiring"),
        ("launch date", "Go-Live"),
    ]
    status, proposals = call_api(_event("GET", "/v1/topics/proposals"))
    assert status == 200 and [(p["topic"], p["count"]) for p in proposals["items"]] == [("hiring", 1)]
