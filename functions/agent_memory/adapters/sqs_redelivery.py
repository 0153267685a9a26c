"""`Redelivery` on the webhook delivery queue (SQS standard): a failed delivery's message is
made invisible for its back-off (``ChangeMessageVisibility``) before the function reports it
failed, so SQS hands it back after that delay instead of after the queue's visibility timeout.
SQS caps a message's visibility at 12 hours from its receive, so a delay is held a little under it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.sqs_batch import default_client

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

#: The longest delay asked for: under SQS's 12 hours from the receive, the handler's time included.
MAX_VISIBILITY_S = 12 * 3600 - 300


class SqsRedelivery:
    def __init__(self, queue_url: str, client: SQSClient | None = None) -> None:
        self.queue_url = queue_url
        self._client = client

    def postpone(self, receipt_handle: str, delay_s: int) -> None:
        if self._client is None:
            self._client = default_client()
        self._client.change_message_visibility(
            QueueUrl=self.queue_url,
            ReceiptHandle=receipt_handle,
            VisibilityTimeout=max(0, min(int(delay_s), MAX_VISIBILITY_S)),
        )
