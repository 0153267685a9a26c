"""What `make smoke` asks AWS about a stack (adapters/deployment_probe.py), on botocore Stubber:
each problem becomes one sentence that says what to do, and a healthy stack none."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from agent_memory.adapters.deployment_probe import DeploymentProbe

STACK = "agent-memory-dev"
MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/SummarizeDeadLetters"


class StubbedSession:
    """A session whose clients are stubbed: one client, one Stubber per service."""

    def __init__(self) -> None:
        self.stubs: dict[str, Stubber] = {}
        self._clients: dict[str, Any] = {}

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = boto3.client(service, region_name="us-east-1")
            self.stubs[service] = Stubber(self._clients[service])
            self.stubs[service].activate()
        return self._clients[service]

    def stub(self, service: str) -> Stubber:
        self.client(service)
        return self.stubs[service]


@pytest.fixture
def session() -> Iterator[StubbedSession]:
    s = StubbedSession()
    yield s
    for stub in s.stubs.values():
        stub.assert_no_pending_responses()


def _outputs(session: StubbedSession) -> None:
    outputs = [
        {"OutputKey": "ApiUrl", "OutputValue": "https://x.execute-api.us-east-1.amazonaws.com/dev/"},
        {"OutputKey": "SummaryModelId", "OutputValue": MODEL},
    ]
    session.stub("cloudformation").add_response(
        "describe_stacks",
        {
            "Stacks": [
                {
                    "StackName": STACK,
                    "CreationTime": "2026-11-28T00:00:00Z",
                    "StackStatus": "CREATE_COMPLETE",
                    "Outputs": outputs,
                }
            ]
        },
        {"StackName": STACK},
    )


def test_a_model_the_account_may_not_call_names_the_model_access_step(session: StubbedSession) -> None:
    # GIVEN a stack whose summary model refuses the account
    _outputs(session)
    session.stub("bedrock-runtime").add_client_error(
        "converse", "AccessDeniedException", "You don't have access to the model with the specified model ID."
    )
    # WHEN
    problem = DeploymentProbe(STACK, session=session).model_access()
    # THEN
    assert problem is not None and MODEL in problem and "AccessDeniedException" in problem
    assert "Model access" in problem and "first-use form" in problem


def test_a_dead_letter_queue_holding_messages_is_named_with_its_count(session: StubbedSession) -> None:
    # GIVEN
    session.stub("cloudformation").add_response(
        "list_stack_resources",
        {
            "StackResourceSummaries": [
                {
                    "LogicalResourceId": "SummariesDeadLetters1A2B",
                    "PhysicalResourceId": DLQ,
                    "ResourceType": "AWS::SQS::Queue",
                    "LastUpdatedTimestamp": "2026-11-28T00:00:00Z",
                    "ResourceStatus": "CREATE_COMPLETE",
                },
                {
                    "LogicalResourceId": "WritesQueue3C4D",
                    "PhysicalResourceId": DLQ + "x",
                    "ResourceType": "AWS::SQS::Queue",
                    "LastUpdatedTimestamp": "2026-11-28T00:00:00Z",
                    "ResourceStatus": "CREATE_COMPLETE",
                },
            ]
        },
        {"StackName": STACK},
    )
    session.stub("sqs").add_response(
        "get_queue_attributes",
        {"Attributes": {"ApproximateNumberOfMessages": "3"}},
        {"QueueUrl": DLQ, "AttributeNames": ["ApproximateNumberOfMessages"]},
    )
    # WHEN
    problem = DeploymentProbe(STACK, session=session).dead_letters()
    # THEN only the dead-letter queue is read, and named
    assert problem is not None and "SummariesDeadLetters1A2B (3)" in problem and "redrive" in problem


def test_alarms_in_alarm_are_named_and_none_is_no_problem(session: StubbedSession) -> None:
    # GIVEN one alarm firing, then none
    for names in (["agent-memory-dev-Api5xx"], []):
        session.stub("cloudwatch").add_response(
            "describe_alarms",
            {"MetricAlarms": [{"AlarmName": n} for n in names]},
            {"AlarmNamePrefix": f"{STACK}-", "StateValue": "ALARM"},
        )
    probe = DeploymentProbe(STACK, session=session)
    # WHEN / THEN
    assert (
        probe.alarms_firing()
        == "alarms in ALARM: agent-memory-dev-Api5xx (the dashboard agent-memory-dev shows why)"
    )
    assert probe.alarms_firing() is None
