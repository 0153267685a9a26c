"""Retention: once a day, delete what each tenant's plan no longer keeps (oldest grains last)."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import set_settings
from agent_memory_stack.parts import StackParts
from agent_memory_stack.queues import grant_send
from agent_memory_stack.scheduling import schedules_of


class Retention(Construct):
    """The retention function and its daily schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        parts: StackParts,
        *,
        tenants: dynamodb.ITable,
        summarize_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = parts.store.build_function(
            self,
            "Retention",
            "Deletes records past their plan's retention, per plan and grain",
            {
                **parts.config.retention_environment(),
                **settings_env(
                    # Each tenant's plan is that of its newest live key in the tenants table.
                    tenants_table=tenants.table_name,
                    # A record past its cutoff that no summary lists yet is kept and its period
                    # queued to be summarized first.
                    summarize_queue_url=summarize_queue.queue_url,
                ),
            },
        )
        parts.store.grant_data_access(self.function)
        # Listing keys is a scan of the table itself (its index holds key ids only).
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:Scan"], resources=[tenants.table_arn])
        )
        grant_send(summarize_queue, self.function)
        for schedule in schedules_of("retention"):
            parts.scheduling.add(schedule, self.function)

    def grant_start(self, api_function: lambda_.Function) -> None:
        """``POST /v1/admin/retention`` hands the run to this function (asynchronously, with its
        15 minutes), instead of running it inside the API's 20 s."""
        set_settings(api_function, retention_function=self.function.function_name)
        # The unqualified function only (grant_invoke would add every version, ARN:*).
        api_function.add_to_role_policy(
            iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[self.function.function_arn])
        )
