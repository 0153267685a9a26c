"""The change feed's part of the composition root: which feed, webhook store, sender and queue
serve a process, built from the settings on first use (`container.Container.feed` holds one).

- ``change_feed=local``: events go into the outbox ``changes.db`` (`LocalChangeFeed`), which the
  local runtime's delivery worker drains into `handlers.webhook_delivery`; ``eventbridge``: onto
  the stack's bus (`EventBridgeChangeFeed`); ``none``: nowhere.
- ``webhooks=local``: ``webhooks.db``; ``dynamodb``: the stack's webhooks table.
- A delivery function given ``webhook_queue_url`` puts a failed delivery off on that queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import cached_property
from typing import TYPE_CHECKING

from agent_memory.feed.webhooks import WebhookDelivery, WebhooksService
from agent_memory.ports import AuditLog, Clock
from agent_memory.ports.change_feed import ChangeFeed, Redelivery, WebhookStore
from agent_memory.settings import Settings
from agent_memory.tenancy.rules.outbound import OutboundGuard

if TYPE_CHECKING:
    from agent_memory.adapters.local_queue import LocalFifoQueue

#: Seconds a batch of deliveries may take before the outbox hands it out again (ten deliveries
#: of one tenant in a row, each up to the timeout, and then some).
OUTBOX_VISIBILITY_S = 120.0


class FeedParts:
    """The change feed and the webhooks of one process. ``audit`` is the memory store (the
    settings history), asked for only when a webhook is changed."""

    def __init__(self, settings: Settings, audit: Callable[[], AuditLog], clock: Clock) -> None:
        self.settings = settings
        self._audit = audit
        self._clock = clock

    @cached_property
    def outbox(self) -> LocalFifoQueue:
        """The local outbox's queue: the feed writes it, the local delivery worker drains it."""
        from agent_memory.adapters.local_queue import LocalFifoQueue

        s = self.settings
        s.data_dir.mkdir(parents=True, exist_ok=True)
        return LocalFifoQueue(
            s.changes_path, max_receive_count=s.webhook_attempts, visibility_timeout_s=OUTBOX_VISIBILITY_S
        )

    @cached_property
    def feed(self) -> ChangeFeed | None:
        s = self.settings
        if s.change_feed == "eventbridge":
            from agent_memory.adapters.eventbridge_feed import EventBridgeChangeFeed

            return EventBridgeChangeFeed(s.resource("event_bus_name"))
        if s.change_feed == "local":
            from agent_memory.adapters.local_change_feed import LocalChangeFeed

            return LocalChangeFeed(self.outbox)
        return None

    def batched(self) -> AbstractContextManager[None]:
        """Events published inside are sent together on leaving where a send is a network call
        (the bus: one ``PutEvents`` for a writer's batch); locally each is an insert anyway."""
        feed = self.feed
        if self.settings.change_feed == "eventbridge" and feed is not None:
            from agent_memory.adapters.eventbridge_feed import EventBridgeChangeFeed

            assert isinstance(feed, EventBridgeChangeFeed)
            return feed.batched()
        return contextlib.nullcontext()

    @cached_property
    def webhook_store(self) -> WebhookStore:
        s = self.settings
        if s.webhooks == "dynamodb":
            from agent_memory.adapters.dynamodb_webhooks import DynamoDbWebhookStore

            return DynamoDbWebhookStore(s.resource("webhooks_table"))
        from agent_memory.adapters.sqlite.sqlite_webhooks import SqliteWebhookStore

        s.data_dir.mkdir(parents=True, exist_ok=True)
        return SqliteWebhookStore(s.webhooks_path)

    @cached_property
    def outbound(self) -> OutboundGuard:
        """Where webhooks may point and deliveries may go (`tenancy.rules.outbound`)."""
        from agent_memory.adapters.outbound_http import outbound_guard

        return outbound_guard(self.settings)

    @cached_property
    def webhooks(self) -> WebhooksService:
        """The admin routes' service: a URL is checked against the outbound policy."""
        return WebhooksService(self.webhook_store, self._audit(), self._clock, outbound=self.outbound)

    @cached_property
    def redelivery(self) -> Redelivery | None:
        if not self.settings.webhook_queue_url:
            return None
        from agent_memory.adapters.sqs_redelivery import SqsRedelivery

        return SqsRedelivery(self.settings.webhook_queue_url)

    @cached_property
    def delivery(self) -> WebhookDelivery:
        from agent_memory.adapters.http_webhooks import GuardedWebhookSender

        s = self.settings
        return WebhookDelivery(
            self.webhook_store,
            GuardedWebhookSender(self.outbound),
            timeout_s=s.webhook_timeout_s,
            redelivery=self.redelivery,
            retry_base_s=s.webhook_retry_base_s,
            retry_max_s=s.webhook_retry_max_s,
        )
