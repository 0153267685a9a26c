"""Retention: once a day, delete what each tenant's plan no longer keeps (oldest grains last)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.function_factory import FunctionFactory, FunctionSpec
from agent_memory_stack.scheduling import RETENTION, Scheduling
from agent_memory_stack.vector_store import VectorStore


class Retention(Construct):
    """The retention function and its daily schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        factory: FunctionFactory,
        store: VectorStore,
        scheduling: Scheduling,
        tenants: dynamodb.ITable,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = factory.build(
            self,
            FunctionSpec(
                name="Retention",
                handler="agent_memory.handlers.retention.handler",
                description="Deletes records past their plan's retention, per plan and grain",
                memory_mb=512,
                # Each _delete_by_query waits for completion (up to 300 s); several grains and plans.
                timeout=Duration.minutes(15),
                environment={
                    **store.environment(),
                    "AGENT_MEMORY_TIMEZONE": config.timezone,
                    "AGENT_MEMORY_PLANS": config.plans_json,
                    **config.retention.environment(),
                    # Each tenant's plan is that of its newest live key in the tenants table.
                    "AGENT_MEMORY_TENANTS_TABLE": tenants.table_name,
                },
            ),
        )
        store.grant_data_access(self.function)
        # Listing keys is a scan of the table itself (its index holds key ids only).
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:Scan"], resources=[tenants.table_arn])
        )
        scheduling.add("Retention", RETENTION, self.function, {})
