"""The SQS FIFO write queue and dead letters: moto for behaviour, Stubber for the failure paths."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from moto import mock_aws

from agent_memory.adapters.sqs_queue import MAX_MESSAGE_BYTES, MAX_REASON_CHARS, SqsDeadLetters, SqsWriteQueue
from agent_memory.errors import DependencyError, PayloadTooLargeError
from agent_memory.ports import QueueMessage

QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/writes.fifo"


def msg(group: str, n: int, body: str | None = None) -> QueueMessage:
    text = body if body is not None else f"{group}-{n}"
    return QueueMessage(group, hashlib.sha256(f"{group}/{n}".encode()).hexdigest(), text)


@pytest.fixture
def sqs() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sqs", region_name="us-east-1")


def fifo_queue(sqs: Any, name: str) -> str:
    return sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"})["QueueUrl"]


def drain(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Receive and delete until empty, the way one FIFO consumer would."""
    out: list[dict[str, Any]] = []
    while True:
        got = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
        ).get("Messages", [])
        if not got:
            return out
        out.extend(got)
        for m in got:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def batch_sizes(sqs: Any) -> list[int]:
    """Records how many entries each SendMessageBatch call carries."""
    sizes: list[int] = []
    sqs.meta.events.register(
        "provide-client-params.sqs.SendMessageBatch",
        lambda params, **_: sizes.append(len(params["Entries"])),
    )
    return sizes


def stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("sqs", region_name="us-east-1")
    return client, Stubber(client)


def entries(messages: list[QueueMessage], ids: list[str] | None = None) -> list[dict[str, str]]:
    ids = ids or [str(i) for i in range(len(messages))]
    return [
        {"Id": i, "MessageBody": m.body, "MessageGroupId": m.group_id, "MessageDeduplicationId": m.dedup_id}
        for i, m in zip(ids, messages, strict=True)
    ]


def ok(ids: list[str]) -> dict[str, Any]:
    return {
        "Successful": [{"Id": i, "MessageId": f"m-{i}", "MD5OfMessageBody": "x"} for i in ids],
        "Failed": [],
    }


# --- with moto --------------------------------------------------------------------------------


def test_23_messages_go_in_batches_of_10_and_come_out_in_group_order(sqs: Any) -> None:
    # GIVEN 23 writes over three agents' groups
    url = fifo_queue(sqs, "writes.fifo")
    messages = [msg(f"t:a{i % 3}:working", i) for i in range(23)]
    sizes = batch_sizes(sqs)

    # WHEN they are sent
    SqsWriteQueue(url, client=sqs).send(messages)

    # THEN they went in 10 + 10 + 3, and each group comes out in send order with its ids
    assert sizes == [10, 10, 3]
    received = drain(sqs, url)
    assert len(received) == 23
    for g in ("t:a0:working", "t:a1:working", "t:a2:working"):
        got = [m["Body"] for m in received if m["Attributes"]["MessageGroupId"] == g]
        assert got == [m.body for m in messages if m.group_id == g]
    by_body = {m.body: m for m in messages}
    assert all(m["Attributes"]["MessageDeduplicationId"] == by_body[m["Body"]].dedup_id for m in received)


def test_batches_are_also_cut_at_1_mib_of_bodies(sqs: Any) -> None:
    # GIVEN three bodies of 400 KiB
    url = fifo_queue(sqs, "writes.fifo")
    sizes = batch_sizes(sqs)
    big = [msg("g", i, body=str(i) * (400 * 1024)) for i in range(3)]

    # WHEN sent, THEN two fit in one call and the third needs another
    SqsWriteQueue(url, client=sqs).send(big)
    assert sizes == [2, 1]


def test_dead_letters_keep_their_ids_and_carry_the_reason(sqs: Any) -> None:
    # GIVEN a FIFO dead-letter queue
    url = fifo_queue(sqs, "writes-dlq.fifo")
    dlq = SqsDeadLetters(url, client=sqs)

    # WHEN the writer puts two poison messages aside, one with a very long reason
    dlq.put(msg("t:a:working", 1, body="{not json"), "body is not a WriteCommand")
    dlq.put(msg("t:b:working", 2), "x" * 5000)

    # THEN both carry their group, dedup id and reason (the long one cut to a readable length)
    first, second = drain(sqs, url)
    assert first["Body"] == "{not json"
    assert first["Attributes"]["MessageGroupId"] == "t:a:working"
    assert first["Attributes"]["MessageDeduplicationId"] == msg("t:a:working", 1).dedup_id
    assert first["MessageAttributes"]["reason"] == {
        "StringValue": "body is not a WriteCommand",
        "DataType": "String",
    }
    assert len(second["MessageAttributes"]["reason"]["StringValue"]) == MAX_REASON_CHARS


def test_a_body_over_1_mib_is_refused_before_anything_is_sent() -> None:
    # GIVEN a batch with one oversized body
    client, stub = stubbed()
    messages = [msg("g", 1), msg("g", 2, body="x" * (MAX_MESSAGE_BYTES + 1))]

    # WHEN sent, THEN it is refused as too large without calling SQS
    with stub, pytest.raises(PayloadTooLargeError) as err:
        SqsWriteQueue(QUEUE_URL, client=client).send(messages)
    assert err.value.details == [{"index": 1, "bytes": MAX_MESSAGE_BYTES + 1, "limit": MAX_MESSAGE_BYTES}]
    stub.assert_no_pending_responses()


# --- failure paths with Stubber ---------------------------------------------------------------


def test_entries_that_failed_on_the_service_side_are_retried_alone() -> None:
    # GIVEN SQS that fails entry "1" of three once, then accepts it
    client, stub = stubbed()
    messages = [msg("g", 1), msg("g", 2), msg("g", 3)]
    stub.add_response(
        "send_message_batch",
        {
            "Successful": ok(["0", "2"])["Successful"],
            "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError", "Message": "try again"}],
        },
        {"QueueUrl": QUEUE_URL, "Entries": entries(messages)},
    )
    stub.add_response(
        "send_message_batch", ok(["1"]), {"QueueUrl": QUEUE_URL, "Entries": entries([messages[1]], ["1"])}
    )
    sleeps: list[float] = []

    # WHEN sent, THEN it succeeds after one backoff, resending only the failed entry
    with stub:
        SqsWriteQueue(QUEUE_URL, client=client, sleep=sleeps.append).send(messages)
    stub.assert_no_pending_responses()
    assert sleeps == [0.1]


def test_entries_that_keep_failing_raise_a_dependency_error_and_stop_later_chunks() -> None:
    # GIVEN 12 messages (two chunks) and SQS failing entry "3" of the first chunk on every try
    client, stub = stubbed()
    messages = [msg("g", i) for i in range(12)]
    failed = {"Id": "3", "SenderFault": False, "Code": "ServiceUnavailable", "Message": "busy"}
    stub.add_response(
        "send_message_batch",
        {"Successful": ok([str(i) for i in range(10) if i != 3])["Successful"], "Failed": [failed]},
        {"QueueUrl": QUEUE_URL, "Entries": ANY},
    )
    for _ in range(3):
        stub.add_response(
            "send_message_batch",
            {"Successful": [], "Failed": [failed]},
            {"QueueUrl": QUEUE_URL, "Entries": entries([messages[3]], ["3"])},
        )
    sleeps: list[float] = []

    # WHEN sent, THEN after 3 retries with growing backoff it raises, naming how many failed
    with stub, pytest.raises(DependencyError, match=r"1 of 12 message\(s\) could not be queued") as err:
        SqsWriteQueue(QUEUE_URL, client=client, sleep=sleeps.append).send(messages)
    assert "2 later message(s) were not sent" in err.value.message
    assert err.value.details == [
        {"dedup_id": messages[3].dedup_id, "code": "ServiceUnavailable", "sender_fault": False}
    ]
    assert sleeps == [0.1, 0.2, 0.4]
    stub.assert_no_pending_responses()  # the second chunk was never attempted


def test_sender_fault_entries_are_not_retried() -> None:
    # GIVEN SQS rejecting an entry as the caller's fault, and a transient failure beside it
    client, stub = stubbed()
    messages = [msg("g", 1), msg("g", 2), msg("g", 3)]
    stub.add_response(
        "send_message_batch",
        {
            "Successful": ok(["0"])["Successful"],
            "Failed": [
                {"Id": "1", "SenderFault": True, "Code": "InvalidParameterValue", "Message": "bad"},
                {"Id": "2", "SenderFault": False, "Code": "InternalError", "Message": "again"},
            ],
        },
        {"QueueUrl": QUEUE_URL, "Entries": ANY},
    )
    stub.add_response(
        "send_message_batch", ok(["2"]), {"QueueUrl": QUEUE_URL, "Entries": entries([messages[2]], ["2"])}
    )

    # WHEN sent, THEN only the transient one is retried, and the rejected one is reported
    with stub, pytest.raises(DependencyError, match=r"1 of 3 .*InvalidParameterValue"):
        SqsWriteQueue(QUEUE_URL, client=client, sleep=lambda _: None).send(messages)
    stub.assert_no_pending_responses()


def test_a_client_error_becomes_a_dependency_error() -> None:
    # GIVEN
    client, stub = stubbed()
    stub.add_client_error(
        "send_message_batch", "AWS.SimpleQueueService.NonExistentQueue", http_status_code=400
    )
    # WHEN / THEN
    with stub, pytest.raises(DependencyError, match="NonExistentQueue"):
        SqsWriteQueue(QUEUE_URL, client=client).send([msg("g", 1)])

    stub.add_client_error("send_message", "KmsThrottled", http_status_code=400)
    with stub, pytest.raises(DependencyError, match="KmsThrottled"):
        SqsDeadLetters(QUEUE_URL, client=client).put(msg("g", 1), "poison")


def test_sending_nothing_calls_nothing() -> None:
    # GIVEN
    client, stub = stubbed()
    with stub:
        SqsWriteQueue(QUEUE_URL, client=client).send([])
    # WHEN / THEN
    stub.assert_no_pending_responses()
