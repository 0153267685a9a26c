"""The writer: consumes the SQS FIFO write queue and stores what the API accepted.

Powertools' `SqsFifoPartialProcessor` reports failed records as batch item failures and, with
``skip_group_on_error``, fails only the rest of the failing record's *group*, so other agents'
writes in the same batch still land and order within a group is kept. A poison message (a body
that can never parse) is moved to the DLQ by the service with its reason and counts as handled,
so it never blocks its group. A document of a tenant's shared knowledge travels the same queue
(its own group per document) and is stored by the knowledge writer; feedback on an experience
travels its agent's working-memory group and is counted by the feedback applier.
"""

from __future__ import annotations

from typing import Any, cast

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.errors import ProviderKeyRejectedError
from agent_memory.observability import logger, metrics, tracer
from agent_memory.ports import QueueMessage
from agent_memory.writing.writer import Prepared

#: The dead letter's reason when the tenant's own embedding provider refused its key.
KEY_REJECTED = (
    "provider_key_rejected: the tenant's embedding provider refused its key; set a working key "
    "(PUT /v1/admin/settings), then redrive"
)


def _message(record: SQSRecord) -> QueueMessage:
    attrs = record.attributes
    return QueueMessage(
        group_id=attrs.message_group_id or "unknown",
        dedup_id=attrs.message_deduplication_id or record.message_id,
        body=record.body,
    )


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    writer = container.writer_service()
    records = event.get("Records", [])
    prepared = writer.prepare([r.get("body", "") for r in records])
    by_id: dict[str, Prepared] = {r["messageId"]: p for r, p in zip(records, prepared, strict=True)}

    def record_handler(record: SQSRecord) -> str:
        item = by_id[record.message_id]
        if item.feedback is not None:
            return container.feedback_applier().apply(item.feedback).value
        try:
            if item.document is not None:
                return container.knowledge_writer().apply(item.document).value
            if item.command is not None:
                return writer.apply(item.command, item.vector).value
        except ProviderKeyRejectedError:
            # No retry helps until the tenant sets a working key: dead-lettered at once, saying so
            # (redriven once it is fixed), and said in the settings history, where its admin looks.
            container.tenant_settings_service().record_key_rejected(item.tenant_id or "", "write")
            return writer.dead_letter(_message(record), KEY_REJECTED).value
        return writer.dead_letter(_message(record), item.poison_reason or "invalid").value

    processor = SqsFifoPartialProcessor(skip_group_on_error=True)
    with container.current().feed.batched():  # the batch's change events in one send
        response = process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    return cast("dict[str, Any]", response)
