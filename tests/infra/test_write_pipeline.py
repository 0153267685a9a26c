"""The write path: FIFO queue, its DLQ, the writer's event source, pending writes, permissions."""

from __future__ import annotations

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)


def _arn(synth: Synth, construct: object) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [synth.logical_id(construct), "Arn"]}


def test_write_queue_is_high_throughput_fifo_encrypted_with_a_fifo_dlq(synth: Synth) -> None:
    # GIVEN
    writes = synth.stack.writes
    queue, dlq = synth.props(writes.queue), synth.props(writes.dead_letters)
    # WHEN / THEN
    for props in (queue, dlq):
        assert props["FifoQueue"] is True
        assert props["DeduplicationScope"] == "messageGroup"
        assert props["FifoThroughputLimit"] == "perMessageGroupId"
        assert props["SqsManagedSseEnabled"] is True
        # a summary's write names every child: SQS's largest message, and the DLQ must take it too
        assert props["MaximumMessageSize"] == 1024 * 1024
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": _arn(synth, writes.dead_letters),
        "maxReceiveCount": 5,
    }
    assert dlq["MessageRetentionPeriod"] == 14 * 86400


def test_visibility_timeout_is_at_least_six_writer_timeouts(synth: Synth) -> None:
    # GIVEN
    writer_timeout = synth.function("Writer")["Timeout"]
    # WHEN / THEN
    assert synth.props(synth.stack.writes.queue)["VisibilityTimeout"] >= 6 * writer_timeout


def test_every_queue_refuses_requests_without_tls(synth: Synth) -> None:
    # GIVEN
    policies = synth.of_type("AWS::SQS::QueuePolicy")
    queues = synth.of_type("AWS::SQS::Queue")
    covered = set()
    # WHEN
    for policy in policies.values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement["Condition"] == {
                "Bool": {"aws:SecureTransport": "false"}
            }:
                covered.update(ref["Ref"] for ref in policy["Properties"]["Queues"])
    # THEN
    assert covered == set(queues)
    assert all(q["Properties"]["SqsManagedSseEnabled"] for q in queues.values())


def test_writer_consumes_batches_of_ten_and_reports_item_failures(synth: Synth) -> None:
    # WHEN
    mappings = [
        m["Properties"]
        for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["EventSourceArn"] == _arn(synth, synth.stack.writes.queue)
    ]
    # THEN
    assert len(mappings) == 1
    mapping = mappings[0]
    assert mapping["FunctionName"] == {"Ref": synth.logical_id(synth.stack.writes.writer)}
    assert mapping["BatchSize"] == 10
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 10}


def test_writer_may_dead_letter_queue_remakes_and_clear_pending_but_not_enqueue_writes(synth: Synth) -> None:
    # GIVEN
    writes = synth.stack.writes
    statements = synth.function_statements("Writer")
    sends = [s for s in statements if "sqs:SendMessage" in as_list(s["Action"])]
    # WHEN / THEN poison messages go to its DLQ, and the re-make of a summary it hid (a source
    # forgotten before its put) to the summarize queue; never a write to its own queue
    assert sorted(str(s["Resource"]) for s in sends) == sorted(
        map(str, [_arn(synth, writes.dead_letters), _arn(synth, synth.stack.summaries.queue)])
    )
    summarize_queue = {"Ref": synth.logical_id(synth.stack.summaries.queue)}
    assert (
        synth.function("Writer")["Environment"]["Variables"]["AGENT_MEMORY_SUMMARIZE_QUEUE_URL"]
        == summarize_queue
    )
    dynamo = [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]
    assert dynamo == [
        {"Action": "dynamodb:BatchWriteItem", "Effect": "Allow", "Resource": [_arn(synth, writes.pending)]},
        # whether the tenant merges near duplicates (its settings, on a cache miss)
        {
            "Action": "dynamodb:GetItem",
            "Effect": "Allow",
            "Resource": _arn(synth, synth.stack.tenant_settings.table),
        },
    ]
    env = synth.function("Writer")["Environment"]["Variables"]
    assert env["AGENT_MEMORY_DEAD_LETTER_QUEUE_URL"] == {"Ref": synth.logical_id(writes.dead_letters)}
    assert env["AGENT_MEMORY_PENDING"] == "dynamodb"
    assert env["AGENT_MEMORY_QUEUE"] == "sqs"
    assert env["AGENT_MEMORY_MAX_RECEIVE_COUNT"] == "5"


def test_pending_writes_table_has_keys_ttl_on_demand_and_pitr(synth: Synth) -> None:
    # WHEN
    props = synth.props(synth.stack.writes.pending)
    # THEN
    assert props["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert {a["AttributeName"]: a["AttributeType"] for a in props["AttributeDefinitions"]} == {
        "pk": "S",
        "sk": "S",
    }
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_producers_may_send_to_the_write_queue(synth: Synth) -> None:
    # GIVEN
    queue = _arn(synth, synth.stack.writes.queue)
    # WHEN / THEN
    for name in ("Api", "SummarizeWorker"):
        sends = [
            s["Resource"]
            for s in synth.function_statements(name)
            if "sqs:SendMessage" in as_list(s["Action"])
        ]
        assert queue in sends, name
    for name in ("Search", "Authorizer", "Retention", "SummarizeDispatch", "Writer"):
        sends = [
            s["Resource"]
            for s in synth.function_statements(name)
            if "sqs:SendMessage" in as_list(s["Action"])
        ]
        assert queue not in sends, name
