"""The webhook delivery: consumes change events from a queue and POSTs each, signed, to the
webhook of the tenant that made it.

In AWS the queue is the SQS standard queue the stack's EventBridge rule feeds (a message is an
EventBridge event whose ``detail`` is the change event); a failed delivery is put off by its
back-off and reported failed, so SQS hands it back then, until its redrive policy parks it in the
dead-letter queue. Locally the queue is the outbox (``changes.db``), drained by the local
runtime's delivery worker, which applies the same back-off; a message is the change event
itself, and the group is its tenant, whose events go in order.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.feed.webhooks import Delivery
from agent_memory.observability import MetricUnit, logger, metrics, tracer


def _delivery(record: dict[str, Any]) -> Delivery:
    attributes = record.get("attributes") or {}
    return Delivery(
        message_id=str(record.get("messageId", "")),
        body=str(record.get("body", "")),
        attempt=int(attributes.get("ApproximateReceiveCount") or 1),
        group=attributes.get("MessageGroupId"),
        receipt_handle=str(record.get("receiptHandle", "")),
    )


@logger.inject_lambda_context(clear_state=True, log_event=False)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deliveries = [_delivery(r) for r in event.get("Records", [])]
    metrics.add_metric(name="ChangeEventsReceived", unit=MetricUnit.Count, value=len(deliveries))
    failed = container.current().feed.delivery.deliver_batch(deliveries)
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}
