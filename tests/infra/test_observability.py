"""The dashboard shows the service's health; alarms cover errors, throttles, DLQs and queue age."""

from __future__ import annotations

from typing import Any

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, render

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)


def _alarms(synth: Synth) -> dict[str, dict[str, object]]:
    return {
        a["Properties"]["AlarmName"]: a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
    }


def test_dashboard_shows_latency_business_metrics_queue_age_and_dlq_depth(synth: Synth) -> None:
    # GIVEN
    (dashboard,) = synth.of_type("AWS::CloudWatch::Dashboard").values()
    # WHEN
    body = render(dashboard["Properties"]["DashboardBody"])
    # THEN
    assert dashboard["Properties"]["DashboardName"] == "agent-memory-dev"
    assert '"AWS/ApiGateway","Latency"' in body
    assert '"stat":"p50"' in body and '"stat":"p95"' in body
    for metric in (
        "WritesAccepted",
        "WritesDeduplicated",
        "WritesStored",
        "Searches",
        "ZeroHitSearches",
        "SearchLatency",
        "SummariesMade",
        "RecordsDeleted",
        "PoisonMessages",
    ):
        assert f'"AgentMemory","{metric}","service","agent-memory"' in body, metric
    assert body.count("ApproximateAgeOfOldestMessage") == 2
    assert body.count("ApproximateNumberOfMessagesVisible") == 5  # four dead-letter queues, failed runs


def test_every_function_alarms_on_errors_and_throttles(synth: Synth) -> None:
    # GIVEN
    alarms = _alarms(synth)
    # WHEN / THEN
    for name in synth.stack.factory.functions:
        for metric, suffix in (("Errors", "Errors"), ("Throttles", "Throttles")):
            alarm = alarms[f"agent-memory-dev-{name}{suffix}"]
            assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/Lambda", metric)
            assert alarm["Threshold"] == 1
            assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
            assert alarm["TreatMissingData"] == "notBreaching"


def test_dead_letter_queues_alarm_on_the_first_message(synth: Synth) -> None:
    # GIVEN
    alarms = _alarms(synth)
    queues = {
        "WriteDeadLetters": synth.stack.writes.dead_letters,
        "SummarizeDeadLetters": synth.stack.summaries.dead_letters,
        "ScheduleDeadLetters": synth.stack.scheduling.dead_letters,
        "ScheduledRunFailures": synth.stack.scheduling.run_failures,
        "WebhookDeadLetters": synth.stack.change_feed.dead_letters,
    }
    # WHEN / THEN
    for name, queue in queues.items():
        alarm = alarms[f"agent-memory-dev-{name}Depth"]
        assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
        assert alarm["Threshold"] == 1
        dims = alarm["Dimensions"]
        assert dims == [
            {"Name": "QueueName", "Value": {"Fn::GetAtt": [synth.logical_id(queue), "QueueName"]}}
        ]


def test_queues_alarm_on_the_age_of_their_oldest_message(synth: Synth) -> None:
    # WHEN
    alarms = _alarms(synth)
    # THEN
    assert alarms["agent-memory-dev-WriteQueueOldestMessage"]["Threshold"] == 300
    assert alarms["agent-memory-dev-SummarizeQueueOldestMessage"]["Threshold"] == 3600
    assert alarms["agent-memory-dev-WriteQueueOldestMessage"]["MetricName"] == "ApproximateAgeOfOldestMessage"


def test_domain_alarms_exist_only_for_the_managed_domain(synth: Synth, files: Synth) -> None:
    # WHEN / THEN
    assert {"agent-memory-dev-ClusterRed", "agent-memory-dev-FreeStorageLow"} <= set(_alarms(synth))
    assert not [name for name in _alarms(files) if "Cluster" in name or "FreeStorage" in name]


def test_alarms_notify_the_stacks_topic_or_the_configured_one(synth: Synth, alt: Synth) -> None:
    # GIVEN
    topics = synth.of_type("AWS::SNS::Topic")
    # WHEN / THEN
    assert len(topics) == 1  # created by default, so an alarm always reaches someone who subscribes
    (topic_id,) = topics
    assert all(alarm["AlarmActions"] == [{"Ref": topic_id}] for alarm in _alarms(synth).values())
    assert not alt.of_type("AWS::SNS::Topic")
    assert all(
        alarm["AlarmActions"] == ["arn:aws:sns:us-east-1:123456789012:oncall"]
        for alarm in _alarms(alt).values()
    )


def test_an_alarm_email_subscribes_to_the_stacks_topic(tmp_path: Any) -> None:
    # GIVEN
    from tests.infra.conftest import _synth
    from tests.infra.support import committed_context

    synth = _synth(tmp_path, {**committed_context(), "alarm_email": "oncall@example.com"})
    (subscription,) = synth.of_type("AWS::SNS::Subscription").values()
    # WHEN / THEN
    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == "oncall@example.com"


def test_the_domain_alarms_aws_recommends_are_there(synth: Synth) -> None:
    # GIVEN
    alarms = _alarms(synth)
    expected = {
        "ClusterYellow": "ClusterStatus.yellow",
        "JVMMemoryPressure": "JVMMemoryPressure",
        "KNNCircuitBreaker": "KNNCircuitBreakerTriggered",
        "AutomatedSnapshotFailure": "AutomatedSnapshotFailure",
        "CPUCreditBalanceLow": "CPUCreditBalance",  # the committed sizing is burstable t3
        "AuthorizationsRefused": "AuthorizationsRefused",
    }
    # WHEN / THEN
    for name, metric in expected.items():
        assert alarms[f"agent-memory-dev-{name}"]["MetricName"] == metric, name
