"""The operator's side of the SQS FIFO dead-letter queue: list with reasons, redrive in order.

moto does not implement ``StartMessageMoveTask`` (and a move task keeps no group order anyway),
so `SqsDeadLetters` redrives by receive, re-send, delete. These tests run it against moto's
FIFO queues, with the main queue's real redrive policy moving spent messages to the DLQ.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.sqs_queue import REDRIVE_DEDUP_PREFIX, SqsDeadLetters
from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.ports import MAX_RECEIVES_REASON, QueueMessage

MAX_RECEIVES = 2


class Crash(BaseException):
    """The redrive process dying: nothing in it catches this."""


@pytest.fixture
def sqs() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sqs", region_name="us-east-1")


@pytest.fixture
def queues(sqs: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A FIFO write queue whose redrive policy moves a message after 2 receives to a FIFO DLQ."""
    monkeypatch.setattr(SqsDeadLetters, "wait_s", 0)  # moto answers at once; no long poll
    dlq = sqs.create_queue(QueueName="writes-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    queue = sqs.create_queue(
        QueueName="writes.fifo",
        Attributes={
            "FifoQueue": "true",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": MAX_RECEIVES}),
        },
    )["QueueUrl"]
    return queue, dlq


def send(sqs: Any, queue: str, group: str, *bodies: str) -> None:
    for body in bodies:
        sqs.send_message(
            QueueUrl=queue, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=f"{group}/{body}"
        )


def fail_everything(sqs: Any, queue: str) -> None:
    """A consumer that never succeeds: receive, give back, until the policy moved it all away."""
    for _ in range(50):
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=30)
        if not got.get("Messages"):
            return
        for m in got["Messages"]:
            sqs.change_message_visibility(
                QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
            )
    raise AssertionError("the redrive policy never moved the messages")


def consume(sqs: Any, queue: str) -> list[dict[str, Any]]:
    """Receive and delete until empty, as one FIFO consumer would: the order it got them in."""
    out: list[dict[str, Any]] = []
    while got := sqs.receive_message(
        QueueUrl=queue, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    ).get("Messages", []):
        out += got
        for m in got:
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
    return out


def by_group(messages: list[dict[str, Any]]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for m in messages:
        groups.setdefault(m["Attributes"]["MessageGroupId"], []).append(m["Body"])
    return groups


def test_spent_messages_and_poison_are_listed_with_their_reasons_and_left_in_place(
    sqs: Any, queues: tuple[str, str]
) -> None:
    # GIVEN two groups whose messages the redrive policy moved, and a poison the writer put there
    queue, dlq = queues
    send(sqs, queue, "acme:a:working", "a1", "a2")
    send(sqs, queue, "acme:b:working", "b1")
    fail_everything(sqs, queue)
    letters = SqsDeadLetters(dlq, sqs, redrive_to=queue)
    letters.put(QueueMessage("acme:c:working", "c-dedup", "{not json"), "invalid write command: 1 error(s)")

    # WHEN they are listed, twice
    first = letters.dead_letters()
    second = letters.dead_letters()

    # THEN every letter is shown with its group, body and reason, in group order, and listing
    # leaves them where they are (the second listing sees the same)
    assert [(d.group_id, d.body, d.reason) for d in first] == [
        ("acme:a:working", "a1", MAX_RECEIVES_REASON),
        ("acme:a:working", "a2", MAX_RECEIVES_REASON),
        ("acme:b:working", "b1", MAX_RECEIVES_REASON),
        ("acme:c:working", "{not json", "invalid write command: 1 error(s)"),
    ]
    assert [d.id for d in second] == [d.id for d in first]
    assert first[-1].dedup_id == "c-dedup" and all(d.failed_at > 0 for d in first)


def test_redrive_replays_every_letter_in_group_order_and_a_second_redrive_finds_none(
    sqs: Any, queues: tuple[str, str]
) -> None:
    # GIVEN 23 dead letters in two groups (more than one receive's worth for group a)
    queue, dlq = queues
    a = [f"a{i:02d}" for i in range(15)]
    b = [f"b{i:02d}" for i in range(8)]
    send(sqs, queue, "g-a", *a)
    send(sqs, queue, "g-b", *b)
    fail_everything(sqs, queue)
    letters = SqsDeadLetters(dlq, sqs, redrive_to=queue)

    # WHEN they are redriven
    moved = letters.redrive()

    # THEN all of them are back on the write queue, each group in its original order, each once,
    # under a deduplication id of its own; the DLQ is empty and a second redrive moves nothing
    assert moved == 23
    replayed = consume(sqs, queue)
    assert by_group(replayed) == {"g-a": a, "g-b": b}
    assert all(m["Attributes"]["MessageDeduplicationId"].startswith(REDRIVE_DEDUP_PREFIX) for m in replayed)
    assert letters.dead_letters() == []
    assert letters.redrive() == 0


def test_a_redrive_that_dies_between_send_and_delete_does_not_duplicate(
    sqs: Any, queues: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN three dead letters, and a redrive that dies after re-sending them, before deleting
    queue, dlq = queues
    send(sqs, queue, "g", "m1", "m2", "m3")
    fail_everything(sqs, queue)
    monkeypatch.setattr(SqsDeadLetters, "hold_s", 1)
    dying = SqsDeadLetters(dlq, sqs, redrive_to=queue)

    def die(**_: Any) -> None:
        raise Crash

    monkeypatch.setattr(dying, "_delete", lambda messages: die())
    with pytest.raises(Crash):
        dying.redrive()

    # WHEN the letters come back after the hold and the operator redrives again
    time.sleep(1.1)
    assert SqsDeadLetters(dlq, sqs, redrive_to=queue).redrive() == 3

    # THEN the write queue holds each message once, in order: the resend was deduplicated
    assert by_group(consume(sqs, queue)) == {"g": ["m1", "m2", "m3"]}


def test_redrive_of_chosen_ids_moves_those_and_leaves_the_others_listed(
    sqs: Any, queues: tuple[str, str]
) -> None:
    # GIVEN dead letters of two groups
    queue, dlq = queues
    send(sqs, queue, "g", "g1")
    send(sqs, queue, "h", "h1")
    fail_everything(sqs, queue)
    letters = SqsDeadLetters(dlq, sqs, redrive_to=queue)
    h_id = next(d.id for d in letters.dead_letters() if d.group_id == "h")

    # WHEN only h's letter is redriven
    assert letters.redrive([h_id]) == 1

    # THEN h1 is on the write queue and g1 is still a dead letter, visible to a listing at once
    assert [m["Body"] for m in consume(sqs, queue)] == ["h1"]
    assert [d.body for d in letters.dead_letters()] == ["g1"]


def test_a_failed_resend_deletes_nothing_and_gives_the_letters_back(
    sqs: Any, queues: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a dead letter, and a write queue that refuses the resend
    queue, dlq = queues
    send(sqs, queue, "g", "g1", "g2")
    fail_everything(sqs, queue)
    letters = SqsDeadLetters(dlq, sqs, redrive_to=queue, max_retries=0)
    real = sqs.send_message_batch
    monkeypatch.setattr(
        sqs,
        "send_message_batch",
        lambda **kw: {
            "Successful": [],
            "Failed": [{"Id": e["Id"], "Code": "InternalError", "SenderFault": False} for e in kw["Entries"]],
        },
    )

    # WHEN it is redriven THEN the failure is reported and the letters stay, visible again at once
    with pytest.raises(DependencyError, match="could not be re-sent"):
        letters.redrive()
    assert [d.body for d in letters.dead_letters()] == ["g1", "g2"]

    # AND once the write queue is back, a redrive moves them
    monkeypatch.setattr(sqs, "send_message_batch", real)
    assert letters.redrive() == 2
    assert [m["Body"] for m in consume(sqs, queue)] == ["g1", "g2"]


def test_a_reason_is_cut_to_what_sqs_accepts_in_an_attribute(sqs: Any, queues: tuple[str, str]) -> None:
    # GIVEN a reason quoting a hostile body: NUL, escape, a lone surrogate, a non-character
    _, dlq = queues
    letters = SqsDeadLetters(dlq, sqs)

    # WHEN the writer dead-letters with it
    letters.put(QueueMessage("g", "d1", "{}"), "record.\x00evil\x1b[31m\ud800\ufffe: extra input")

    # THEN it is stored with those characters replaced, the rest as written
    [letter] = letters.dead_letters()
    assert letter.reason == "record.\ufffdevil\ufffd[31m\ufffd\ufffd: extra input"


def test_redrive_needs_the_write_queue(sqs: Any, queues: tuple[str, str]) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="WRITE_QUEUE_URL"):
        SqsDeadLetters(queues[1], sqs).redrive()
