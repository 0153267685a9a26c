"""The write queue and dead letters on Amazon SQS FIFO.

`SqsWriteQueue` sends with ``SendMessageBatch``: at most 10 entries and 256 KiB of bodies per
call. A batch call can succeed while some of its entries fail (the response's ``Failed`` list),
so entries are checked one by one: those that failed on the service's side are retried a few
times with backoff before the next chunk goes, and nothing after a chunk that still has failures
is sent (it would overtake the failed messages of its group). Such a failure raises
`DependencyError`. A retried entry can still land after a later entry of the same chunk that went
through the first time; that costs order within a group, never a message. Some messages may then
already be queued; the caller may resend all of them, because their deduplication ids make SQS
drop the ones it already has.

`SqsDeadLetters` puts a poison message on the FIFO dead-letter queue with the same group and
deduplication ids and the reason in a ``reason`` message attribute, where the ``dlq`` tooling
shows it next to the messages the redrive policy moved there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.sqs_batch import MAX_BATCH_ENTRIES, BatchSender, default_client
from agent_memory.errors import DependencyError, PayloadTooLargeError
from agent_memory.ports import QueueMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

#: SQS's limit for one message, and for the sum of the bodies of one batch call.
MAX_MESSAGE_BYTES = 256 * 1024
#: Longer reasons are cut: the attribute is for a person reading the dead-letter queue.
MAX_REASON_CHARS = 1_000


class SqsWriteQueue:
    """`WriteQueue` on an SQS FIFO queue."""

    def __init__(
        self,
        queue_url: str,
        client: SQSClient | None = None,
        *,
        max_retries: int = 3,
        backoff_s: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.queue_url = queue_url
        self._sender = BatchSender(queue_url, "the write queue", client, max_retries, backoff_s, sleep)

    @property
    def client(self) -> SQSClient:
        return self._sender.client

    def send(self, messages: Sequence[QueueMessage]) -> None:
        sizes = [len(m.body.encode("utf-8")) for m in messages]
        too_big = [i for i, size in enumerate(sizes) if size > MAX_MESSAGE_BYTES]
        if too_big:
            raise PayloadTooLargeError(
                f"{len(too_big)} message(s) exceed the queue's {MAX_MESSAGE_BYTES} byte limit",
                details=[{"index": i, "bytes": sizes[i], "limit": MAX_MESSAGE_BYTES} for i in too_big],
            )
        sent = 0
        for chunk in _chunks(messages, sizes):
            failures = self._send_chunk(chunk)
            sent += len(chunk)
            if failures:
                # Later chunks are not sent: they would overtake the failed messages of their group.
                codes = sorted({str(f.get("Code", "unknown")) for f in failures})
                raise DependencyError(
                    f"{len(failures)} of {len(messages)} message(s) could not be queued "
                    f"({', '.join(codes)}); {len(messages) - sent} later message(s) were not sent",
                    details=[
                        {
                            "dedup_id": chunk[int(f["Id"])].dedup_id,
                            "code": f.get("Code"),
                            "sender_fault": bool(f.get("SenderFault")),
                        }
                        for f in failures
                    ],
                )

    def _send_chunk(self, chunk: Sequence[QueueMessage]) -> list[dict[str, Any]]:
        """Send one chunk, retrying the entries that failed on the service's side. The failures left."""
        return self._sender.send(
            [
                {
                    "Id": str(i),
                    "MessageBody": m.body,
                    "MessageGroupId": m.group_id,
                    "MessageDeduplicationId": m.dedup_id,
                }
                for i, m in enumerate(chunk)
            ]
        )


class SqsDeadLetters:
    """`DeadLetters` on the FIFO dead-letter queue of the write queue."""

    def __init__(self, queue_url: str, client: SQSClient | None = None) -> None:
        self.queue_url = queue_url
        self._client = client

    @property
    def client(self) -> SQSClient:
        if self._client is None:
            self._client = default_client()
        return self._client

    def put(self, message: QueueMessage, reason: str) -> None:
        reason = reason.strip() or "unspecified"
        if len(reason) > MAX_REASON_CHARS:
            reason = reason[: MAX_REASON_CHARS - 1] + "…"
        try:
            self.client.send_message(
                QueueUrl=self.queue_url,
                MessageBody=message.body,
                MessageGroupId=message.group_id,
                MessageDeduplicationId=message.dedup_id,
                MessageAttributes={"reason": {"DataType": "String", "StringValue": reason}},
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"the dead-letter queue refused a message: {exc}") from exc


def _chunks(messages: Sequence[QueueMessage], sizes: Sequence[int]) -> Iterator[list[QueueMessage]]:
    """Consecutive runs of at most 10 messages whose bodies add up to at most 256 KiB."""
    chunk: list[QueueMessage] = []
    total = 0
    for message, size in zip(messages, sizes, strict=True):
        if chunk and (len(chunk) == MAX_BATCH_ENTRIES or total + size > MAX_MESSAGE_BYTES):
            yield chunk
            chunk, total = [], 0
        chunk.append(message)
        total += size
    if chunk:
        yield chunk
