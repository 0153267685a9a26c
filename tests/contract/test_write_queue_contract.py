"""One contract for the write queue, on every adapter: the local FIFO queue (SQLite) and SQS FIFO
(moto). What the service relies on: every message sent arrives once, each group in send order,
a resend under the same deduplication id within the window is dropped, and a body over the
queue's size limit is refused before anything is sent."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.errors import PayloadTooLargeError
from agent_memory.model.limits import MAX_MESSAGE_BYTES
from agent_memory.ports import QueueMessage, WriteQueue


@dataclass
class Queue:
    queue: WriteQueue
    drain: Callable[[], list[tuple[str, str]]]  # (group, body) of every message, each taken once


def _local(tmp_path: Path) -> Iterator[Queue]:
    from agent_memory.adapters.local_queue import LocalFifoQueue

    fifo = LocalFifoQueue(tmp_path / "queue.db")

    def drain() -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        while batch := fifo.receive(10):
            out += [(m.group_id, m.body) for m in batch]
            fifo.ack(m.receipt_handle for m in batch)
        return out

    yield Queue(fifo, drain)


def _sqs() -> Iterator[Queue]:
    from agent_memory.adapters.sqs_queue import SqsWriteQueue

    with mock_aws():
        client: Any = boto3.client("sqs", region_name="us-east-1")
        url = client.create_queue(QueueName="writes.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]

        def drain() -> list[tuple[str, str]]:
            out: list[tuple[str, str]] = []
            while got := client.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
            ).get("Messages", []):
                out += [(m["Attributes"]["MessageGroupId"], m["Body"]) for m in got]
                for m in got:
                    client.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            return out

        yield Queue(SqsWriteQueue(url, client=client), drain)


@pytest.fixture(params=["local", "sqs"])
def writes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Queue]:
    yield from (_local(tmp_path) if request.param == "local" else _sqs())


def msg(group: str, n: int, body: str | None = None) -> QueueMessage:
    text = body if body is not None else f"{group}-{n}"
    return QueueMessage(group, hashlib.sha256(f"{group}/{n}".encode()).hexdigest(), text)


def test_every_message_arrives_once_and_each_group_in_send_order(writes: Queue) -> None:
    # GIVEN 23 writes over three agents' groups (SQS: three batch calls)
    sent = [msg(f"t:a{i % 3}:working", i) for i in range(23)]
    writes.queue.send(sent)

    # WHEN / THEN each arrives once, and each group keeps the order it was sent in
    got = writes.drain()
    assert sorted(body for _, body in got) == sorted(m.body for m in sent)
    for group in ("t:a0:working", "t:a1:working", "t:a2:working"):
        assert [b for g, b in got if g == group] == [m.body for m in sent if m.group_id == group]


def test_a_resend_under_the_same_deduplication_id_is_dropped(writes: Queue) -> None:
    # GIVEN
    writes.queue.send([msg("t:a:working", 1)])
    writes.queue.send([msg("t:a:working", 1), msg("t:a:working", 2)])
    # WHEN / THEN
    assert [body for _, body in writes.drain()] == ["t:a:working-1", "t:a:working-2"]


def test_a_body_over_the_size_limit_is_refused_and_nothing_of_its_batch_is_sent(writes: Queue) -> None:
    # GIVEN
    too_big = msg("t:a:working", 2, body="x" * (MAX_MESSAGE_BYTES + 1))
    # WHEN / THEN
    with pytest.raises(PayloadTooLargeError):
        writes.queue.send([msg("t:a:working", 1), too_big])
    assert writes.drain() == []
