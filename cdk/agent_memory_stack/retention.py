"""Retention: once a day, delete what each tenant's plan no longer keeps (oldest grains last)."""

from __future__ import annotations

from aws_cdk import Duration
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
                },
            ),
        )
        store.grant_data_access(self.function)
        scheduling.add("Retention", RETENTION, self.function, {})
