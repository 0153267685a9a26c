"""EventBridge Scheduler: the cascade and retention clocks, in the configured timezone.

The schedules are staggered an hour apart, finest grain first, so each summarizer finds the
periods below it already folded (each can also backfill a missing child period, so a late or
failed run heals). A failed invocation is retried, then parked in the schedules' DLQ.

========== ============================== ==================================
schedule   when (local time)              event
========== ============================== ==================================
daily      every day 00:15                ``{"grain": "daily"}``
weekly     Monday 01:15                   ``{"grain": "weekly"}``
monthly    1st of the month 02:15         ``{"grain": "monthly"}``
quarterly  1st of Jan, Apr, Jul, Oct 03:15 ``{"grain": "quarterly"}``
yearly     January 1st 04:15              ``{"grain": "yearly"}``
retention  every day 05:15                ``{}``
========== ============================== ==================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import Duration, Stack, TimeZone
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.nag import acknowledge, logical_id


@dataclass(frozen=True)
class Cron:
    """An EventBridge Scheduler cron, local to the configured timezone."""

    minute: str
    hour: str
    day: str | None = None
    month: str | None = None
    week_day: str | None = None


CASCADE: dict[str, Cron] = {
    "daily": Cron("15", "0"),
    "weekly": Cron("15", "1", week_day="MON"),
    "monthly": Cron("15", "2", day="1"),
    "quarterly": Cron("15", "3", day="1", month="1,4,7,10"),
    "yearly": Cron("15", "4", day="1", month="1"),
}
RETENTION = Cron("15", "5")


class Scheduling(Construct):
    """A schedule group, the schedules' dead-letter queue, and `add` for each schedule."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.group = scheduler.ScheduleGroup(self, "Group", schedule_group_name=config.prefix)
        # Scheduler DLQs must be standard queues.
        self.dead_letters = sqs.Queue(
            self,
            "DeadLetters",
            retention_period=Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        acknowledge(
            self.dead_letters,
            "SQS3",
            "this queue is itself a dead-letter queue: EventBridge Scheduler parks failed schedule "
            "invocations here (it is not an SQS redrive target, which is what the rule looks for)",
        )
        self.schedules: dict[str, scheduler.Schedule] = {}
        self._roles: dict[str, iam.IRole] = {}

    def _invoke_role(self, function: lambda_.IFunction) -> iam.IRole:
        """One role per target function, assumable only by Scheduler on behalf of this account."""
        key = function.node.path
        if key not in self._roles:
            stack = Stack.of(self)
            role = iam.Role(
                self,
                f"{function.node.id}InvokeRole",
                assumed_by=iam.ServicePrincipal(
                    "scheduler.amazonaws.com",
                    conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
                ),
                description=f"EventBridge Scheduler: invoke {function.node.id}",
            )
            function_id = logical_id(function)
            acknowledge(
                role,
                f"IAM5[Resource::<{function_id}.Arn>:*]",
                "the Scheduler target grants invoke on this one function and its versions (ARN:*); "
                "only the version is a wildcard",
            )
            self._roles[key] = role
        return self._roles[key]

    def add(
        self, name: str, cron: Cron, function: lambda_.IFunction, payload: dict[str, Any]
    ) -> scheduler.Schedule:
        schedule = scheduler.Schedule(
            self,
            name,
            schedule_group=self.group,
            description=f"agent-memory {name}: {payload or 'retention'}",
            schedule=scheduler.ScheduleExpression.cron(
                minute=cron.minute,
                hour=cron.hour,
                day=cron.day,
                month=cron.month,
                week_day=cron.week_day,
                time_zone=TimeZone.of(self.config.timezone),
            ),
            target=targets.LambdaInvoke(
                function,
                input=scheduler.ScheduleTargetInput.from_object(payload),
                dead_letter_queue=self.dead_letters,
                retry_attempts=self.config.schedules.retry_attempts,
                max_event_age=Duration.minutes(self.config.schedules.max_event_age_minutes),
                role=self._invoke_role(function),
            ),
        )
        self.schedules[name] = schedule
        return schedule
