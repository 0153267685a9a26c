"""The change feed in the stack: a bus only the writer and the API function may put events on,
a rule sending every event of the service to the delivery queue (with its dead letters), the
delivery function reading the webhooks table and putting failed deliveries off, and the
webhooks table that only the API function writes."""

from __future__ import annotations

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

from agent_memory_stack.change_feed import DELIVERY_ATTEMPTS, RETRY_BASE_S, RETRY_MAX_S

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

PUBLISHERS = {"Writer", "Api", "SummarizeWorker"}  # the worker: the summary model's supersession review
TABLE_ACTIONS = {
    "Api": {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"},
    "WebhookDelivery": {"dynamodb:GetItem"},
}


def _arn(synth: Synth, construct: object) -> dict[str, object]:
    return {"Fn::GetAtt": [synth.logical_id(construct), "Arn"]}


def test_only_the_functions_that_make_changes_may_put_events_and_on_the_bus_only(synth: Synth) -> None:
    # GIVEN
    bus = _arn(synth, synth.stack.change_feed.bus)
    # WHEN / THEN
    for name in synth.stack.factory.functions:
        statements = synth.function_statements(name)
        puts = [s for s in statements if "events:PutEvents" in as_list(s["Action"])]
        env = synth.function(name)["Environment"]["Variables"]
        if name in PUBLISHERS:
            assert [s["Resource"] for s in puts] == [bus], name
            assert env["AGENT_MEMORY_CHANGE_FEED"] == "eventbridge", name
            assert env["AGENT_MEMORY_EVENT_BUS_NAME"] == {
                "Ref": synth.logical_id(synth.stack.change_feed.bus)
            }
        else:
            assert puts == [] and "AGENT_MEMORY_EVENT_BUS_NAME" not in env, name
        assert not any(
            a.startswith("events:") for s in statements if s not in puts for a in as_list(s["Action"])
        )


def test_every_event_of_the_service_goes_to_the_delivery_queue_and_failures_are_parked(synth: Synth) -> None:
    # GIVEN
    feed = synth.stack.change_feed
    # WHEN
    (rule,) = synth.of_type("AWS::Events::Rule").values()
    queue = synth.props(feed.queue)
    # THEN
    props = rule["Properties"]
    assert props["EventBusName"] == {"Ref": synth.logical_id(feed.bus)}
    assert props["EventPattern"] == {"source": ["agent-memory"]}
    assert [t["Arn"] for t in props["Targets"]] == [_arn(synth, feed.queue)]
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": _arn(synth, feed.dead_letters),
        "maxReceiveCount": DELIVERY_ATTEMPTS,
    }
    assert queue["SqsManagedSseEnabled"] is True and "FifoQueue" not in queue
    assert queue["VisibilityTimeout"] >= 6 * synth.function("WebhookDelivery")["Timeout"]


def test_the_delivery_function_reads_webhooks_and_puts_failed_deliveries_off(synth: Synth) -> None:
    # GIVEN
    feed = synth.stack.change_feed
    # WHEN
    statements = synth.function_statements("WebhookDelivery")
    env = synth.function("WebhookDelivery")["Environment"]["Variables"]
    # THEN
    on_queue = {
        a for s in statements if s["Resource"] == _arn(synth, feed.queue) for a in as_list(s["Action"])
    }
    assert on_queue == {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:ChangeMessageVisibility",
    }
    assert env["AGENT_MEMORY_WEBHOOKS"] == "dynamodb"
    assert env["AGENT_MEMORY_WEBHOOK_QUEUE_URL"] == {"Ref": synth.logical_id(feed.queue)}
    assert (env["AGENT_MEMORY_WEBHOOK_RETRY_BASE_S"], env["AGENT_MEMORY_WEBHOOK_RETRY_MAX_S"]) == (
        str(RETRY_BASE_S),
        str(RETRY_MAX_S),
    )
    (mapping,) = [
        m["Properties"]
        for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["EventSourceArn"] == _arn(synth, feed.queue)
    ]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_only_the_api_function_writes_webhooks_and_only_the_delivery_function_reads_them_besides(
    synth: Synth,
) -> None:
    # GIVEN
    table = _arn(synth, synth.stack.change_feed.table)
    # WHEN / THEN
    for name in synth.stack.factory.functions:
        on_table = {
            a for s in synth.function_statements(name) if s["Resource"] == table for a in as_list(s["Action"])
        }
        assert on_table == TABLE_ACTIONS.get(name, set()), name
    props = synth.props(synth.stack.change_feed.table)
    assert props["KeySchema"] == [{"AttributeName": "tenant_id", "KeyType": "HASH"}]
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
