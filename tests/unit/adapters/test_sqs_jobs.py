"""Summarize jobs on an SQS standard queue, beyond the shared contract (tests/contract/
test_job_queue_contract.py): delays, and the failure paths (Stubber)."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import ANY, Stubber

from agent_memory.adapters.sqs_jobs import SqsJobQueue
from agent_memory.errors import DependencyError
from agent_memory.ports import Job

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/summarize"


def test_a_delay_becomes_delay_seconds_capped_at_sqs_limit() -> None:
    # GIVEN
    client = boto3.client("sqs", region_name="us-east-1")
    # WHEN / THEN
    with Stubber(client) as stub:
        stub.add_response(
            "send_message_batch",
            {"Successful": [], "Failed": []},
            {"QueueUrl": URL, "Entries": [{"Id": "0", "MessageBody": "b", "DelaySeconds": 900}]},
        )
        SqsJobQueue(URL, client=client).send([Job("k", "b")], delay_s=5_000)
        stub.assert_no_pending_responses()


def test_entries_failing_on_the_service_side_are_retried_then_reported() -> None:
    # GIVEN
    client = boto3.client("sqs", region_name="us-east-1")
    failed = {"Id": "1", "SenderFault": False, "Code": "InternalError"}
    sleeps: list[float] = []
    # WHEN / THEN
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
    # GIVEN
    client = boto3.client("sqs", region_name="us-east-1")
    # WHEN / THEN
    with Stubber(client) as stub:
        stub.add_client_error(
            "send_message_batch", service_error_code="AWS.SimpleQueueService.NonExistentQueue"
        )
        with pytest.raises(DependencyError, match="refused"):
            SqsJobQueue(URL, client=client).send([Job("k", "b")])
