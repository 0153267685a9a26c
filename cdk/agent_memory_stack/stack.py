"""The agent-memory stack: wires the capability constructs together, tags them, exports outputs.

Each construct owns one capability and grants its functions exactly what they use; the stack
only passes references between them. cdk-nag runs over the whole app (app.py), and every
acknowledged finding carries its reason next to the code that causes it.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Stack, Tags
from constructs import Construct

from agent_memory_stack.api import Api
from agent_memory_stack.change_feed import ChangeFeed
from agent_memory_stack.config import StackConfig
from agent_memory_stack.console import ConsoleSite
from agent_memory_stack.exports import ExportBucket
from agent_memory_stack.file_store import FileStore
from agent_memory_stack.function_factory import FunctionFactory
from agent_memory_stack.observability import Observability
from agent_memory_stack.parts import StackParts
from agent_memory_stack.retention import Retention
from agent_memory_stack.scheduling import Scheduling
from agent_memory_stack.summarization import Summarization
from agent_memory_stack.tenant_settings import TenantSettingsTable
from agent_memory_stack.vector_store import VectorStore
from agent_memory_stack.write_pipeline import WritePipeline


class AgentMemoryStack(Stack):
    """Everything `cdk deploy` creates for one stage."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"agent-memory ({config.stage})", **kwargs)
        self.config = config
        Tags.of(self).add("service", config.service_name)
        Tags.of(self).add("stage", config.stage)

        self.factory = FunctionFactory(self, "Functions", config=config)
        self.store: VectorStore | FileStore = (
            FileStore(self, "FileStore", config=config, factory=self.factory)
            if config.store == "serverless"
            else VectorStore(self, "VectorStore", config=config, factory=self.factory)
        )
        self.writes = WritePipeline(self, "Writes", config=config, store=self.store)
        self.scheduling = Scheduling(self, "Schedules", config=config)
        parts = StackParts(config, self.factory, self.store, self.writes, self.scheduling)
        self.summaries = Summarization(self, "Summaries", parts)
        self.console = ConsoleSite(self, "Console", config=config) if config.console.enabled else None
        self.api = Api(
            self,
            "Api",
            parts,
            summarize_queue=self.summaries.queue,
            console_origin=self.console.origin if self.console is not None else None,
        )
        if self.console is not None:
            self.console.publish(self.api.rest_api.url)
            CfnOutput(self, "ConsoleUrl", value=self.console.url, description="The operator console")
        self.retention = Retention(
            self,
            "Retention",
            parts,
            tenants=self.api.tenants,
            summarize_queue=self.summaries.queue,
        )
        self.retention.grant_start(self.api.api_function)
        self.exports = ExportBucket(self, "Exports", config=config)
        self.exports.attach(self.api.api_function, self.summaries.worker)
        self.tenant_settings = TenantSettingsTable(
            self, "TenantSettings", prefix=config.prefix, retain=config.retain_data
        )
        self.tenant_settings.attach(self.factory.functions)
        self.change_feed = ChangeFeed(
            self, "ChangeFeed", config=config, factory=self.factory, functions=self.factory.functions
        )
        self.observability = Observability(
            self,
            "Observability",
            config=config,
            functions=self.factory.functions,
            rest_api=self.api.rest_api,
            queues={
                "WriteQueue": (self.writes.queue, Duration.minutes(5)),
                "SummarizeQueue": (self.summaries.queue, Duration.hours(1)),
            },
            dead_letter_queues={
                "WriteDeadLetters": self.writes.dead_letters,
                "SummarizeDeadLetters": self.summaries.dead_letters,
                "ScheduleDeadLetters": self.scheduling.dead_letters,
                "ScheduledRunFailures": self.scheduling.run_failures,
                # change events a tenant's webhook refused for every attempt: its integration lost them
                "WebhookDeadLetters": self.change_feed.dead_letters,
            },
            domain=self.store.domain,
        )

        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url, description="Base URL: append v1/agents/...")
        CfnOutput(
            self, "TenantsTable", value=self.api.tenants.table_name, description="agent-memory keys --table"
        )
        CfnOutput(
            self,
            "UsagePlans",
            value=config.prefix,
            description="agent-memory keys create|enroll --usage-plans (per-tenant API limits)",
        )
        CfnOutput(self, "VectorStoreEndpoint", value=self.store.endpoint)
        CfnOutput(self, "WriteQueueUrl", value=self.writes.queue.queue_url)
        CfnOutput(self, "WriteDeadLetterQueueUrl", value=self.writes.dead_letters.queue_url)
        CfnOutput(self, "Dashboard", value=config.prefix, description="CloudWatch dashboard name")
        CfnOutput(
            self,
            "SummaryModelId",
            value=config.summary_model_id,
            description="The Bedrock summary model: enable it under Model access (make smoke checks it)",
        )
        CfnOutput(
            self,
            "ChangeEventBus",
            value=self.change_feed.bus.event_bus_name,
            description="EventBridge bus of the change events (source agent-memory): add rules to route them",
        )
