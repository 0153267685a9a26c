"""A failed delivery put off on SQS (moto): the message is not received again before its delay."""

from __future__ import annotations

from typing import Any

import boto3
from moto import mock_aws

from agent_memory.adapters.sqs_redelivery import MAX_VISIBILITY_S, SqsRedelivery


def test_a_postponed_message_stays_invisible_for_its_delay() -> None:
    with mock_aws():
        # GIVEN a received message
        sqs: Any = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="deliveries", Attributes={"VisibilityTimeout": "0"})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="{}")
        [message] = sqs.receive_message(QueueUrl=url)["Messages"]
        # WHEN it is put off for an hour
        SqsRedelivery(url, client=sqs).postpone(message["ReceiptHandle"], 3600)
        # THEN it is not handed out again now
        assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []


def test_a_delay_past_twelve_hours_is_held_to_it() -> None:
    with mock_aws():
        # GIVEN
        sqs: Any = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="deliveries")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="{}")
        [message] = sqs.receive_message(QueueUrl=url)["Messages"]
        # WHEN / THEN SQS would refuse 12 hours or more from the receive; the adapter asks for less
        SqsRedelivery(url, client=sqs).postpone(message["ReceiptHandle"], 10**6)
        assert MAX_VISIBILITY_S < 43_200
