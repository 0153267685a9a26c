"""Schedules, the summarize job queue, the cascade functions, retention, Bedrock scoping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list, render

from agent_memory_stack.config import DEFAULT_SUMMARY_MODEL
from agent_memory_stack.scheduling import construct_name

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

AT = {"scheduled_time": "<aws.scheduler.scheduled-time>"}  # Scheduler puts the instant it fired here
SCHEDULES = {
    "SummarizeDaily": ("cron(15 0 * * ? *)", {"grain": "daily", **AT}, "SummarizeDispatch"),
    "SummarizeWeekly": ("cron(15 1 ? * MON *)", {"grain": "weekly", **AT}, "SummarizeDispatch"),
    "SummarizeMonthly": ("cron(15 2 1 * ? *)", {"grain": "monthly", **AT}, "SummarizeDispatch"),
    "SummarizeQuarterly": ("cron(15 3 1 1,4,7,10 ? *)", {"grain": "quarterly", **AT}, "SummarizeDispatch"),
    "SummarizeYearly": ("cron(15 4 1 1 ? *)", {"grain": "yearly", **AT}, "SummarizeDispatch"),
    "Retention": ("cron(15 5 * * ? *)", {}, "Retention"),
    # pattern recognition: the dispatcher queues one job per agent on the same job queue
    "Patterns": ("cron(45 5 * * ? *)", {"job": "patterns", **AT}, "SummarizeDispatch"),
    # profiles: the same dispatcher, another job kind, on the same job queue
    "Profiles": ("cron(55 5 * * ? *)", {"job": "profiles", **AT}, "SummarizeDispatch"),
}


def _arn(synth: Synth, construct: object) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [synth.logical_id(construct), "Arn"]}


def test_one_staggered_schedule_per_grain_plus_retention_with_retries_and_a_dlq(synth: Synth) -> None:
    # GIVEN
    scheduling = synth.stack.scheduling
    # WHEN / THEN
    assert set(scheduling.schedules) == set(SCHEDULES)
    for name, (expression, payload, function) in SCHEDULES.items():
        props = synth.props(scheduling.schedules[name])
        assert props["ScheduleExpression"] == expression, name
        assert props["ScheduleExpressionTimezone"] == "UTC"
        assert props["GroupName"] == synth.props(scheduling.group)["Name"]
        assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}
        target = props["Target"]
        assert target["Arn"] == _arn(synth, synth.stack.factory.functions[function])
        assert json.loads(target["Input"]) == payload
        assert target["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 7200}
        assert target["DeadLetterConfig"] == {"Arn": _arn(synth, scheduling.dead_letters)}


def test_schedule_timezone_comes_from_the_config(alt: Synth) -> None:
    # WHEN / THEN
    for schedule in alt.stack.scheduling.schedules.values():
        assert alt.props(schedule)["ScheduleExpressionTimezone"] == "Europe/Berlin"
    env = alt.function("SummarizeDispatch")["Environment"]["Variables"]
    assert env["AGENT_MEMORY_TIMEZONE"] == "Europe/Berlin"


def test_scheduler_roles_invoke_only_their_function_and_are_bound_to_the_account(synth: Synth) -> None:
    # WHEN / THEN
    for name, (_, _, function) in SCHEDULES.items():
        role_arn = synth.props(synth.stack.scheduling.schedules[name])["Target"]["RoleArn"]
        role_id = role_arn["Fn::GetAtt"][0]
        trust = synth.resources[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust[0]["Principal"] == {"Service": "scheduler.amazonaws.com"}
        assert "aws:SourceAccount" in trust[0]["Condition"]["StringEquals"]
        statements = [
            s
            for p in synth.of_type("AWS::IAM::Policy").values()
            if {"Ref": role_id} in p["Properties"]["Roles"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]
        invoke = [s for s in statements if s["Action"] == "lambda:InvokeFunction"]
        target = synth.logical_id(synth.stack.factory.functions[function])
        assert all(f"<{target}.Arn>" in render(r) for s in invoke for r in as_list(s["Resource"])), name


def test_summarize_queue_is_standard_with_a_dlq_and_a_worker_that_reports_failures(synth: Synth) -> None:
    # GIVEN
    summaries = synth.stack.summaries
    # WHEN
    queue = synth.props(summaries.queue)
    # THEN
    assert "FifoQueue" not in queue
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": _arn(synth, summaries.dead_letters),
        "maxReceiveCount": 3,
    }
    assert queue["VisibilityTimeout"] >= 6 * synth.function("SummarizeWorker")["Timeout"]
    (mapping,) = [
        m["Properties"]
        for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["EventSourceArn"] == _arn(synth, summaries.queue)
    ]
    assert mapping["FunctionName"] == {"Ref": synth.logical_id(summaries.worker)}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 5
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 2}


def _pending_statements(synth: Synth, function: str) -> list[dict[str, Any]]:
    """The function's DynamoDB statements, less its read of the tenant settings (the worker's
    summary model; checked in test_tenant_settings.py)."""
    settings = _arn(synth, synth.stack.tenant_settings.table)
    return [
        s
        for s in synth.function_statements(function)
        if any(a.startswith("dynamodb:") for a in as_list(s["Action"])) and s["Resource"] != settings
    ]


def test_dispatcher_fans_out_to_the_summarize_queue(synth: Synth) -> None:
    # GIVEN
    queue = synth.stack.summaries.queue
    env = synth.function("SummarizeDispatch")["Environment"]["Variables"]
    # WHEN / THEN
    assert env["AGENT_MEMORY_SUMMARIZE_QUEUE_URL"] == {"Ref": synth.logical_id(queue)}
    sends = [
        s["Resource"]
        for s in synth.function_statements("SummarizeDispatch")
        if "sqs:SendMessage" in as_list(s["Action"])
    ]
    # the job queue, and the on-failure destination Lambda sends a failed run to with this role
    assert sends == [_arn(synth, queue), _arn(synth, synth.stack.scheduling.run_failures)]
    assert not [
        s for s in synth.function_statements("SummarizeDispatch") if "bedrock" in json.dumps(s["Action"])
    ]


def test_the_dispatcher_and_the_worker_mark_pattern_jobs_pending_but_never_count(synth: Synth) -> None:
    # GIVEN
    pending = synth.stack.writes.pending
    # WHEN / THEN
    for function in ("SummarizeDispatch", "SummarizeWorker"):
        env = synth.function(function)["Environment"]["Variables"]
        assert env["AGENT_MEMORY_PENDING"] == "dynamodb", function
        assert env["AGENT_MEMORY_PENDING_TABLE"] == {"Ref": synth.logical_id(pending)}, function
        # add: BatchGetItem + BatchWriteItem; held once queued: UpdateItem; done and discard:
        # BatchWriteItem; no Query (count)
        assert _pending_statements(synth, function) == [
            {
                "Action": ["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem"],
                "Effect": "Allow",
                "Resource": [_arn(synth, pending)],
            }
        ], function
    # the dispatcher queues jobs only: the write queue is the worker's
    env = synth.function("SummarizeDispatch")["Environment"]["Variables"]
    assert "AGENT_MEMORY_WRITE_QUEUE_URL" not in env


def test_worker_may_invoke_exactly_the_summary_and_the_embedding_model(synth: Synth) -> None:
    # GIVEN
    env = synth.function("SummarizeWorker")["Environment"]["Variables"]
    # WHEN / THEN
    assert env["AGENT_MEMORY_SUMMARIZER"] == "bedrock"
    assert env["AGENT_MEMORY_BEDROCK_SUMMARY_MODEL_ID"] == DEFAULT_SUMMARY_MODEL
    assert env["AGENT_MEMORY_WRITE_QUEUE_URL"] == {"Ref": synth.logical_id(synth.stack.writes.queue)}
    # A job may queue the backfill of a missing child period.
    assert env["AGENT_MEMORY_SUMMARIZE_QUEUE_URL"] == {"Ref": synth.logical_id(synth.stack.summaries.queue)}
    sends = [
        s["Resource"]
        for s in synth.function_statements("SummarizeWorker")
        if "sqs:SendMessage" in as_list(s["Action"])
    ]
    assert sorted(map(str, sends)) == sorted(
        map(str, [_arn(synth, synth.stack.writes.queue), _arn(synth, synth.stack.summaries.queue)])
    )
    bedrock = [
        s
        for s in synth.function_statements("SummarizeWorker")
        if "bedrock:InvokeModel" in as_list(s["Action"])
    ]
    # the summary model states summaries and patterns (the writer embeds what it stores); the
    # embedding model is for a pattern job, which clusters the agent's experiences by their vectors.
    # The summary model is a global inference profile: the profile here, and its model wherever
    # it routes the call (a global profile's model ARN has no region, which "*" matches).
    assert sorted(render(r) for s in bedrock for r in as_list(s["Resource"])) == sorted(
        [
            "arn:<AWS::Partition>:bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/"
            + DEFAULT_SUMMARY_MODEL,
            "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/amazon.titan-embed-text-v2:0",
        ]
    )
    assert env["AGENT_MEMORY_EMBEDDER"] == "bedrock"
    assert env["AGENT_MEMORY_BEDROCK_EMBEDDING_MODEL_ID"] == "amazon.titan-embed-text-v2:0"


def test_an_inference_profile_grants_the_profile_and_its_model(alt: Synth) -> None:
    # GIVEN
    bedrock = [
        s for s in alt.function_statements("SummarizeWorker") if "bedrock:InvokeModel" in as_list(s["Action"])
    ]
    # WHEN
    summary = [s for s in bedrock if "claude" in json.dumps(s["Resource"])]
    # THEN
    (statement,) = summary
    assert sorted(render(r) for r in statement["Resource"]) == sorted(
        [
            "arn:<AWS::Partition>:bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            "arn:<AWS::Partition>:bedrock:eu-west-1:123456789012:inference-profile/"
            "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
        ]
    )


def test_retention_reads_the_plan_overrides_and_touches_the_store_and_the_job_queue(
    synth: Synth, alt: Synth
) -> None:
    # WHEN / THEN
    assert json.loads(synth.function("Retention")["Environment"]["Variables"]["AGENT_MEMORY_PLANS"]) == {}
    env = alt.function("Retention")["Environment"]["Variables"]
    assert json.loads(env["AGENT_MEMORY_PLANS"]) == {
        "pro": {"working": 720},
        "team": {"daily": 2400, "yearly": None},
    }
    services = {a.split(":")[0] for s in synth.function_statements("Retention") for a in as_list(s["Action"])}
    # the store, the tenants' plans, and the job queue (periods to summarize before deleting)
    assert services == {"logs", "xray", "es", "dynamodb", "sqs"}
    sqs = [s for s in synth.function_statements("Retention") if "sqs:SendMessage" in as_list(s["Action"])]
    assert [s["Resource"] for s in sqs] == [
        {"Fn::GetAtt": [synth.logical_id(synth.stack.summaries.queue), "Arn"]},
        {"Fn::GetAtt": [synth.logical_id(synth.stack.scheduling.run_failures), "Arn"]},  # failed runs
    ]
    # Plans come from the tenants' keys (a scan of the tenants table), a tenant's own retention
    # from its settings (one item): nothing else in DynamoDB.
    tenants = synth.stack.api.tenants
    dynamo = [s for s in synth.function_statements("Retention") if str(s["Action"]).startswith("dynamodb")]
    assert dynamo == [
        {
            "Action": "dynamodb:Scan",
            "Effect": "Allow",
            "Resource": {"Fn::GetAtt": [synth.logical_id(tenants), "Arn"]},
        },
        {
            "Action": "dynamodb:GetItem",
            "Effect": "Allow",
            "Resource": {"Fn::GetAtt": [synth.logical_id(synth.stack.tenant_settings.table), "Arn"]},
        },
    ]
    env = synth.function("Retention")["Environment"]["Variables"]
    assert env["AGENT_MEMORY_TENANTS_TABLE"] == {"Ref": synth.logical_id(tenants)}


def test_retention_knobs_reach_the_functions_that_use_them(synth: Synth, alt: Synth) -> None:
    # WHEN / THEN
    # the committed defaults, and the alternative's overrides, as the settings read them
    for function in ("Api", "Retention"):
        env = synth.function(function)["Environment"]["Variables"]
        assert env["AGENT_MEMORY_DEFAULT_TTLS"] == "true"
        assert env["AGENT_MEMORY_FORGET_GRACE_DAYS"] == "7"
        assert env["AGENT_MEMORY_MAX_WORKING_PER_AGENT"] == "10000"
        assert env["AGENT_MEMORY_RETENTION_MAX_UNSUMMARIZED_DAYS"] == "30"
        alt_env = alt.function(function)["Environment"]["Variables"]
        assert alt_env["AGENT_MEMORY_DEFAULT_TTLS"] == "false"
        assert alt_env["AGENT_MEMORY_FORGET_GRACE_DAYS"] == "30"
        assert alt_env["AGENT_MEMORY_MAX_WORKING_PER_AGENT"] == "500"


def test_the_stack_schedules_exactly_the_table_the_local_scheduler_fires(synth: Synth) -> None:
    # GIVEN
    from agent_memory.schedules import SCHEDULES as TABLE

    # WHEN / THEN
    for schedule in TABLE:
        props = synth.props(synth.stack.scheduling.schedules[construct_name(schedule)])
        assert props["ScheduleExpression"] == schedule.expression
        assert json.loads(props["Target"]["Input"]) == schedule.aws_input()
    assert len(synth.stack.scheduling.schedules) == len(TABLE)


def test_a_scheduled_run_that_fails_in_the_function_lands_in_an_alarmed_queue(synth: Synth) -> None:
    # GIVEN
    failures = synth.logical_id(synth.stack.scheduling.run_failures)
    configs = synth.of_type("AWS::Lambda::EventInvokeConfig")
    targets = {render(c["Properties"]["FunctionName"]) for c in configs.values()}
    # WHEN / THEN
    assert targets == {
        f"<{synth.logical_id(synth.stack.factory.functions[n])}>" for n in ("SummarizeDispatch", "Retention")
    }
    for config in configs.values():
        props = config["Properties"]
        assert props["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": [failures, "Arn"]}
        assert props["MaximumRetryAttempts"] == 2
    alarmed = [
        a
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if {"Name": "QueueName", "Value": {"Fn::GetAtt": [failures, "QueueName"]}}
        in a["Properties"].get("Dimensions", [])
    ]
    assert alarmed, "no alarm on the failed-runs queue"


def test_the_schedule_group_is_named_by_the_stack_and_goes_with_it(synth: Synth) -> None:
    # WHEN
    group = synth.resources[synth.logical_id(synth.stack.scheduling.group)]
    # THEN no group is left behind by a failed first deploy or a destroy to block the next deploy,
    # and its name is made by CDK from the stack (not the stage's fixed prefix)
    assert group["DeletionPolicy"] == "Delete"
    assert group["Properties"]["Name"] != "agent-memory-dev"
