"""EventBridge Scheduler: the cascade and retention clocks, in the configured timezone.

The schedules are those of `agent_memory.schedules.SCHEDULES`, the one table the local runtime's
scheduler fires too: each becomes a schedule in the stage's group, with its cron expression in
the configured timezone and its input (the cascade's carries ``<aws.scheduler.scheduled-time>``,
so a delayed or retried run still takes the period that was due, not the one of "now").

Scheduler invokes Lambda asynchronously: its retry policy and dead-letter queue cover the
*delivery* of the event only. A run that fails inside the function (an exception, a timeout)
is retried by Lambda twice and then sent to the functions' on-failure destination, the
``RunFailures`` queue, which has an alarm like every dead-letter queue (docs/infrastructure.md).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack, TimeZone
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as targets
from constructs import Construct

from agent_memory.schedules import SCHEDULES, Schedule
from agent_memory_stack.config import StackConfig
from agent_memory_stack.nag import acknowledge, logical_id
from agent_memory_stack.queues import grant_send, parking_queue


def construct_name(schedule: Schedule) -> str:
    """``summarize-daily`` -> ``SummarizeDaily``: the schedule's construct id."""
    return "".join(part.capitalize() for part in schedule.name.split("-"))


def schedules_of(function: str) -> list[Schedule]:
    """The schedules that invoke the handler module ``function`` (``summarize_dispatch``, ...)."""
    return [s for s in SCHEDULES if s.function == function]


class Scheduling(Construct):
    """A schedule group, the schedules' dead-letter queue, and `add` for each schedule."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        # Named by CDK from the stack, not the stage, and never kept: it holds only the schedules
        # the stack makes again, and a group left behind (by a failed first deploy, or a
        # destroy) under the stage's name made the next deploy fail with "already exists".
        self.group = scheduler.ScheduleGroup(self, "Group")
        self.group.apply_removal_policy(RemovalPolicy.DESTROY)
        # Scheduler DLQs must be standard queues.
        self.dead_letters = parking_queue(
            self,
            "DeadLetters",
            parks="EventBridge Scheduler's failed deliveries of schedule invocations",
        )
        # Runs that failed inside the function, after Lambda's own two retries (on-failure destination).
        self.run_failures = parking_queue(
            self,
            "RunFailures",
            parks="the scheduled functions' failed asynchronous runs (Lambda's on-failure destination)",
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

    def add(self, schedule: Schedule, function: lambda_.Function) -> scheduler.Schedule:
        """``schedule`` invoking ``function``; the function's failed runs go to `run_failures`."""
        made = scheduler.Schedule(
            self,
            construct_name(schedule),
            schedule_group=self.group,
            description=f"agent-memory {schedule.name}: {schedule.event or 'retention'}",
            schedule=scheduler.ScheduleExpression.expression(
                schedule.expression, TimeZone.of(self.config.timezone)
            ),
            target=targets.LambdaInvoke(
                function,
                input=scheduler.ScheduleTargetInput.from_object(schedule.aws_input()),
                dead_letter_queue=self.dead_letters,
                retry_attempts=self.config.schedules.retry_attempts,
                max_event_age=Duration.minutes(self.config.schedules.max_event_age_minutes),
                role=self._invoke_role(function),
            ),
        )
        self.schedules[construct_name(schedule)] = made
        self._on_failure(function)
        return made

    def _on_failure(self, function: lambda_.Function) -> None:
        """Lambda's own retries of a failed asynchronous run, then the failed-runs queue.

        The L1 resource with a ``SendMessage``-only grant: the L2 destination would also grant
        ``GetQueueAttributes`` and ``GetQueueUrl``, which Lambda does not call to deliver.
        """
        if function.node.try_find_child("FailedRuns") is not None:
            return
        grant_send(self.run_failures, function)
        lambda_.CfnEventInvokeConfig(
            function,
            "FailedRuns",
            function_name=function.function_name,
            qualifier="$LATEST",
            maximum_retry_attempts=2,
            maximum_event_age_in_seconds=int(Duration.hours(6).to_seconds()),
            destination_config=lambda_.CfnEventInvokeConfig.DestinationConfigProperty(
                on_failure=lambda_.CfnEventInvokeConfig.OnFailureProperty(
                    destination=self.run_failures.queue_arn
                )
            ),
        )
