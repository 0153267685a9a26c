"""The change feed of the local runtime: an outbox on a `LocalFifoQueue` of its own file
(``changes.db``), drained by a background worker into the webhook delivery handler.

Publishing is one SQLite insert (a transaction on a file nothing else writes to), so the change
that publishes never waits for a delivery, and a webhook endpoint that hangs or fails never
slows it. The queue gives the deliveries what the write queue has: redelivery with a receive
count (the worker backs off exponentially between attempts), dead letters after the last one,
and ordering within a group: the group is the tenant, so one tenant's events reach its endpoint
in the order they were made, and one tenant's failing endpoint holds back only its own. The
deduplication id is the event's id: an event published again within five minutes (a write
redelivered) is dropped here; past that the receiver drops it by its id.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.feed.rules.events import ChangeEvent
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import QueueMessage

#: What local delivery events name as their source queue.
CHANGES_QUEUE_ARN = "arn:aws:sqs:local:000000000000:agent-memory-changes.fifo"


class LocalChangeFeed:
    """`ChangeFeed` into the local outbox; ``queue`` is the side the delivery worker drains."""

    def __init__(self, queue: LocalFifoQueue) -> None:
        self.queue = queue

    def publish(self, events: Sequence[ChangeEvent]) -> None:
        if not events:
            return
        messages = [QueueMessage(group_id=e.tenant_id, dedup_id=e.id, body=e.body().decode()) for e in events]
        try:
            self.queue.send(messages)
        except Exception:  # the change is made; its event is what is lost, and it is counted
            logger.exception("change events not queued for delivery", extra={"events": len(events)})
            metrics.add_metric(name="ChangeEventsDropped", unit=MetricUnit.Count, value=len(events))
