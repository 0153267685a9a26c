"""Summarize jobs on an SQS standard queue: moto for behaviour, Stubber for the failure paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from moto import mock_aws

from agent_memory.adapters.sqs_jobs import SqsJobQueue
from agent_memory.errors import DependencyError
from agent_memory.ports import Job

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/summarize"


@pytest.fixture
def sqs() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sqs", region_name="us-east-1")


def test_jobs_are_sent_in_batches_of_ten_and_all_arrive(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="summarize")["QueueUrl"]
    jobs = [Job(f"t:a:daily:{i}", f'{{"n":{i}}}') for i in range(23)]

    SqsJobQueue(url, client=sqs).send(jobs)

    bodies: set[str] = set()
    while got := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        bodies |= {m["Body"] for m in got}
        sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
        )
    assert bodies == {j.body for j in jobs}


def test_a_delay_becomes_delay_seconds_capped_at_sqs_limit() -> None:
    client = boto3.client("sqs", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch",
            {"Successful": [], "Failed": []},
            {"QueueUrl": URL, "Entries": [{"Id": "0", "MessageBody": "b", "DelaySeconds": 900}]},
        )
        SqsJobQueue(URL, client=client).send([Job("k", "b")], delay_s=5_000)
        stub.assert_no_pending_responses()


def test_entries_failing_on_the_service_side_are_retried_then_reported() -> None:
    client = boto3.client("sqs", region_name="us-east-1")
    failed = {"Id": "1", "SenderFault": False, "Code": "InternalError"}
    sleeps: list[float] = []
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch", {"Successful": [], "Failed": [failed]}, {"QueueUrl": URL, "Entries": ANY}
        )
        stub.add_response(
            "send_message_batch",
            {"Successful": [], "Failed": [{**failed, "Id": "1"}]},
            {"QueueUrl": URL, "Entries": ANY},
        )
        queue = SqsJobQueue(URL, client=client, max_retries=1, sleep=sleeps.append)
        with pytest.raises(DependencyError, match="1 of 2 summarize job"):
            queue.send([Job("k0", "a"), Job("k1", "b")])
        stub.assert_no_pending_responses()
    assert sleeps == [0.1]


def test_a_refused_call_is_a_dependency_error() -> None:
    client = boto3.client("sqs", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error(
            "send_message_batch", service_error_code="AWS.SimpleQueueService.NonExistentQueue"
        )
        with pytest.raises(DependencyError, match="refused"):
            SqsJobQueue(URL, client=client).send([Job("k", "b")])
