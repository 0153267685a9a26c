"""The write queue and dead letters on Amazon SQS FIFO.

`SqsWriteQueue` sends with ``SendMessageBatch``: at most 10 entries and 1 MiB of bodies per
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
shows it next to the messages the redrive policy moved there (SQS records no reason for those:
they are shown as "max receive count exceeded", the only way a message gets there otherwise).

The operator's side (`agent-memory dlq list | redrive`) works by receive, re-send and delete,
not SQS's ``StartMessageMoveTask``: a move task gives no say over order, while a FIFO redrive
must put each group's letters back in their order. A redrive receives a batch (held invisible
while it works), re-sends it to the write queue with the same group id and a deduplication id
made from the dead letter's message id, and only then deletes it from the dead-letter queue.
A redrive that dies between the send and the delete leaves the letters to come back; the next
redrive re-sends them with the same deduplication ids, which the write queue drops within its
five-minute window (and past it, the writer would only confirm records it already stored).

A FIFO receive hands out no later message of a group while an earlier one is in flight, so a
listing, which must hold what it received until it is done, sees at most the first ten dead
letters of each group; a redrive deletes as it goes and so reaches all of them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.queue_limits import refuse_oversized
from agent_memory.adapters.sqs_batch import MAX_BATCH_ENTRIES, BatchSender, SqsQueue, default_client
from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.model.limits import MAX_MESSAGE_BYTES
from agent_memory.ports import MAX_RECEIVES_REASON, DeadLetter, QueueMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

logger = logging.getLogger(__name__)

#: Longer reasons are cut: the attribute is for a person reading the dead-letter queue.
MAX_REASON_CHARS = 1_000
#: What SQS refuses in a message attribute: characters outside XML's (#x9 #xA #xD #x20-#xD7FF
#: #xE000-#xFFFD #x10000-#x10FFFF). A reason may quote what a hostile body held.
_NOT_SQS_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: The prefix of the deduplication id a redriven letter is re-sent with (then its message id).
REDRIVE_DEDUP_PREFIX = "redrive-"


class SqsWriteQueue(SqsQueue):
    """`WriteQueue` on an SQS FIFO queue."""

    label = "the write queue"

    def send(self, messages: Sequence[QueueMessage]) -> None:
        sizes = refuse_oversized(messages)
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
    """`DeadLetterQueue` on the FIFO dead-letter queue of the write queue.

    ``redrive_to`` is the write queue's URL (a redrive needs it; the writer, which only puts,
    does not). ``hold_s`` is how long a listing or a redrive keeps what it received invisible
    to others; ``wait_s`` is each receive's long poll (an empty short-poll answer from SQS does
    not prove the queue empty).
    """

    hold_s: int = 60
    wait_s: int = 1

    def __init__(
        self,
        queue_url: str,
        client: SQSClient | None = None,
        *,
        redrive_to: str | None = None,
        max_retries: int = 3,
        backoff_s: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.queue_url = queue_url
        self.redrive_to = redrive_to
        self._client = client
        self._retry = (max_retries, backoff_s, sleep)

    @property
    def client(self) -> SQSClient:
        if self._client is None:
            self._client = default_client()
        return self._client

    def put(self, message: QueueMessage, reason: str) -> None:
        reason = _NOT_SQS_TEXT.sub("\ufffd", reason).strip() or "unspecified"
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

    # --- the operator's side ------------------------------------------------------------------

    def dead_letters(self) -> list[DeadLetter]:
        """The dead letters SQS hands out (the head of each group), left in the queue."""
        held: list[dict[str, Any]] = []
        try:
            seen: set[str] = set()
            while batch := [m for m in self._receive() if m["MessageId"] not in seen]:
                seen.update(m["MessageId"] for m in batch)
                held += batch
            return [_letter(m) for m in held]
        finally:
            self._release(held)

    def redrive(self, ids: Iterable[str] | None = None) -> int:
        """Re-send dead letters (all, or those ``ids``) to the write queue, group by group."""
        if not self.redrive_to:
            raise ConfigurationError("AGENT_MEMORY_WRITE_QUEUE_URL is required to redrive dead letters")
        wanted = None if ids is None else set(ids)
        sender = BatchSender(self.redrive_to, "the write queue", self.client, *self._retry)
        skipped: list[dict[str, Any]] = []
        seen: set[str] = set()
        moved = 0
        try:
            while wanted is None or wanted - seen:
                batch = [m for m in self._receive() if m["MessageId"] not in seen]
                if not batch:
                    break
                seen.update(m["MessageId"] for m in batch)
                chosen = [m for m in batch if wanted is None or m["MessageId"] in wanted]
                skipped += [m for m in batch if wanted is not None and m["MessageId"] not in wanted]
                if chosen:
                    self._resend(sender, chosen, batch)
                    self._delete(chosen)
                    moved += len(chosen)
        finally:
            self._release(skipped)
        return moved

    def _receive(self) -> list[dict[str, Any]]:
        try:
            response: Any = self.client.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=self.hold_s,
                WaitTimeSeconds=self.wait_s,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["reason"],
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"the dead-letter queue could not be read: {exc}") from exc
        return list(response.get("Messages", []))

    def _resend(self, sender: BatchSender, chosen: list[dict[str, Any]], batch: list[dict[str, Any]]) -> None:
        """Send ``chosen`` to the write queue in order; on failure give the whole batch back."""
        try:
            failures = sender.send(
                [
                    {
                        "Id": str(i),
                        "MessageBody": m["Body"],
                        "MessageGroupId": m["Attributes"]["MessageGroupId"],
                        "MessageDeduplicationId": REDRIVE_DEDUP_PREFIX + m["MessageId"],
                    }
                    for i, m in enumerate(chosen)
                ]
            )
        except DependencyError:
            self._release(batch)
            raise
        if failures:
            self._release(batch)
            codes = sorted({str(f.get("Code", "unknown")) for f in failures})
            raise DependencyError(
                f"{len(failures)} of {len(chosen)} dead letter(s) could not be re-sent ({', '.join(codes)}); "
                "they stay in the dead-letter queue, and a second redrive is safe"
            )

    def _delete(self, messages: list[dict[str, Any]]) -> None:
        try:
            response: Any = self.client.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"re-sent dead letters could not be deleted: {exc}") from exc
        if response.get("Failed"):
            raise DependencyError(
                f"{len(response['Failed'])} re-sent dead letter(s) could not be deleted; they come "
                "back, and a second redrive re-sends them under the same deduplication ids"
            )

    def _release(self, messages: list[dict[str, Any]]) -> None:
        """Best effort: make held messages visible again now (else they are after ``hold_s``)."""
        for start in range(0, len(messages), MAX_BATCH_ENTRIES):
            chunk = messages[start : start + MAX_BATCH_ENTRIES]
            try:
                self.client.change_message_visibility_batch(
                    QueueUrl=self.queue_url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                        for i, m in enumerate(chunk)
                    ],
                )
            except (ClientError, BotoCoreError):
                logger.warning("held dead letters not released; visible again after the hold", exc_info=True)


def _letter(message: dict[str, Any]) -> DeadLetter:
    """A received SQS message as a dead letter, with the writer's reason or the queue's."""
    attributes = message.get("Attributes", {})
    reason = message.get("MessageAttributes", {}).get("reason", {}).get("StringValue")
    return DeadLetter(
        id=message["MessageId"],
        group_id=attributes.get("MessageGroupId", ""),
        dedup_id=attributes.get("MessageDeduplicationId", ""),
        body=message["Body"],
        reason=reason or MAX_RECEIVES_REASON,
        failed_at=int(attributes.get("SentTimestamp", "0")) / 1000,
        receive_count=None,
    )


def _chunks(messages: Sequence[QueueMessage], sizes: Sequence[int]) -> Iterator[list[QueueMessage]]:
    """Consecutive runs of at most 10 messages whose bodies add up to at most `MAX_MESSAGE_BYTES`."""
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
