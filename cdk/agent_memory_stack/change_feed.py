"""The change feed: an EventBridge bus every change event goes onto, and the tenants' webhooks
fed from it.

The functions that make changes put their events on the bus (`adapters/eventbridge_feed.py`):
the writer (memories stored, merged, superseded; feedback counted; summaries stored) and the API
function (forgets, erasures, restores). Only they may ``events:PutEvents``, and on this bus only.
Rules route events anywhere: the stack's own rule sends every ``agent-memory`` event to the
delivery queue (SQS standard, encrypted), whose function POSTs each, signed, to the webhook of
the tenant that made it (`handlers/webhook_delivery.py`). A failed delivery is put off by its
back-off (``ChangeMessageVisibility``, doubling from 30 s to an hour) and, after ``DELIVERY_ATTEMPTS``
receives, parked in the delivery dead-letter queue. Writes never wait for a webhook: the bus is
between them.

Webhooks are items of their own table (the signing secret is in it): the API function reads,
writes and deletes them (``/v1/admin/webhooks``), the delivery function reads them, no other
function may.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory.feed.rules.events import EVENT_SOURCE
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FunctionFactory, set_settings
from agent_memory_stack.queues import consume, job_queue, parking_queue
from agent_memory_stack.tables import on_demand_table

#: The functions that put change events on the bus (the summarize worker: the links its
#: summary model's supersession review changes).
PUBLISHERS = ("Writer", "Api", "SummarizeWorker")
#: The function that sets tenants' webhooks.
ADMIN = "Api"
#: Deliveries of one event before it is parked, the waits doubling from `RETRY_BASE_S` to
#: `RETRY_MAX_S`: about three hours from the first try to the last.
DELIVERY_ATTEMPTS = 10
RETRY_BASE_S = 30
RETRY_MAX_S = 3600
#: Events handed to one delivery invocation, and invocations at once.
DELIVERY_BATCH = 10
DELIVERY_CONCURRENCY = 5


class ChangeFeed(Construct):
    """The bus, the webhooks table, the delivery queue, its dead letters and its function."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        factory: FunctionFactory,
        functions: Mapping[str, lambda_.Function],
    ) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"{config.prefix}-changes")
        # Webhooks are tenants' configuration: kept with the data unless told otherwise.
        self.table = on_demand_table(self, "Webhooks", "tenant_id", retain=config.retain_data)
        self.dead_letters = parking_queue(self, "DeliveryDeadLetters")
        self.queue = job_queue(self, "Deliveries", "WebhookDelivery", self.dead_letters, DELIVERY_ATTEMPTS)
        events.Rule(
            self,
            "ToWebhooks",
            description="Every change event to the webhook delivery queue",
            event_bus=self.bus,
            event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
            targets=[targets.SqsQueue(self.queue)],
        )
        self.function = factory.build(
            self,
            "WebhookDelivery",
            "Delivers change events to tenants' webhooks, signed; failures put off and retried",
            {
                **self.webhooks_environment(),
                **settings_env(
                    webhook_queue_url=self.queue.queue_url,
                    webhook_retry_base_s=RETRY_BASE_S,
                    webhook_retry_max_s=RETRY_MAX_S,
                ),
            },
        )
        consume(
            self,
            "DeliverySource",
            self.function,
            self.queue,
            batch_size=DELIVERY_BATCH,
            max_concurrency=DELIVERY_CONCURRENCY,
        )
        # A failed delivery is put off by its back-off before it is reported failed.
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:ChangeMessageVisibility"], resources=[self.queue.queue_arn])
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:GetItem"], resources=[self.table.table_arn])
        )
        for name in PUBLISHERS:
            set_settings(functions[name], change_feed="eventbridge", event_bus_name=self.bus.event_bus_name)
            functions[name].add_to_role_policy(
                iam.PolicyStatement(actions=["events:PutEvents"], resources=[self.bus.event_bus_arn])
            )
        set_settings(functions[ADMIN], webhooks="dynamodb", webhooks_table=self.table.table_name)
        functions[ADMIN].add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
                resources=[self.table.table_arn],
            )
        )

    def webhooks_environment(self) -> dict[str, str]:
        return settings_env(webhooks="dynamodb", webhooks_table=self.table.table_name)
