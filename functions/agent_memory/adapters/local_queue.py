"""The embedded write queue: an SQLite-backed FIFO queue with SQS FIFO semantics.

The local runtime runs the same writer handler as the Lambda, fed by a worker thread that
receives batches from this queue, turns them into SQS event dicts (`to_sqs_event`) and settles
them from the handler's partial-batch response (`LocalFifoQueue.settle`). So this queue has to
behave like SQS FIFO where the writer relies on it:

- **Message groups.** Messages of one group come out in send order. While any message of a group
  is in flight (received, not yet acked, visibility not expired), no later message of that group
  is handed out; other groups keep flowing. One batch may hold several messages of one group, in
  order. This is what makes one writer at a time per ``tenant:agent:grain``.
- **Fair between tenants.** A batch takes the tenants' messages round-robin (each tenant's
  oldest, then each one's next, ...), not the oldest of all: one tenant's bulk write never holds
  another tenant's write back more than one batch (SQS FIFO interleaves groups too, without a
  promise; here it is the rule, `_FAIR_BATCH`).
- **Content-based deduplication.** A dedup id seen within ``dedup_window_s`` of its first send is
  accepted and dropped, like SQS's five-minute deduplication interval.
- **Redelivery.** A nacked message, or one whose visibility timeout expires (the consumer died
  mid-batch), becomes visible again with its receive count kept. When a message that has been
  received ``max_receive_count`` times is nacked or expires, it moves to the dead-letter table
  with the reason ``"max receive count exceeded"``, like an SQS redrive policy.
- **Dead letters.** The writer puts a poison message there itself with its reason
  (`DeadLetters.put`); `redrive` moves dead letters back to the tail of their groups.

State lives in one SQLite file (WAL), so the HTTP server's threads, the worker thread and a CLI
process can share it. Every state change runs in one ``BEGIN IMMEDIATE`` transaction: a batch
send is all-or-nothing and two consumers can never receive the same message.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.adapters.queue_limits import refuse_oversized
from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread, scrub_wal
from agent_memory.ports import MAX_RECEIVES_REASON, DeadLetter, QueueMessage

#: SQS hands out at most 10 messages per receive; FIFO event source mappings use the same cap.
MAX_BATCH = 10
#: The most one local receive hands out: a local worker may take more than SQS's 10 at once (the
#: writer embeds a receive's texts in one model call, so larger batches embed faster).
MAX_RECEIVE = 100
#: What a local event names as its source queue. Its region is what ``awsRegion`` reports.
DEFAULT_QUEUE_ARN = "arn:aws:sqs:local:000000000000:agent-memory-writes.fifo"
#: ``SenderId`` of local events (SQS puts the sending principal's id there).
LOCAL_SENDER_ID = "agent-memory-local"
#: How often a waiting `receive` looks for messages sent by another process. Sends from this
#: process wake it at once.
_POLL_INTERVAL_S = 0.1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_messages (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id        TEXT NOT NULL UNIQUE,
    group_id          TEXT NOT NULL,
    dedup_id          TEXT NOT NULL,
    body              TEXT NOT NULL,
    sent_at           REAL NOT NULL,
    receive_count     INTEGER NOT NULL DEFAULT 0,
    first_received_at REAL,
    invisible_until   REAL NOT NULL DEFAULT 0,
    receipt_handle    TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS queue_messages_group ON queue_messages (group_id, invisible_until);
CREATE INDEX IF NOT EXISTS queue_messages_invisible ON queue_messages (invisible_until);
CREATE TABLE IF NOT EXISTS queue_dedup (
    dedup_id TEXT PRIMARY KEY,
    sent_at  REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS queue_dedup_sent ON queue_dedup (sent_at);
CREATE TABLE IF NOT EXISTS queue_dead_letters (
    id            TEXT NOT NULL UNIQUE,
    group_id      TEXT NOT NULL,
    dedup_id      TEXT NOT NULL,
    body          TEXT NOT NULL,
    reason        TEXT NOT NULL,
    failed_at     REAL NOT NULL,
    receive_count INTEGER NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class ReceivedMessage:
    """A message handed to a consumer. ``receipt_handle`` is valid for this delivery only."""

    message_id: str
    receipt_handle: str
    group_id: str
    dedup_id: str
    body: str
    sequence_number: int
    receive_count: int
    sent_at: float
    first_received_at: float


#: The visible messages of unblocked groups, taken round-robin across tenants (a group id is
#: ``tenant:...``): each tenant's oldest first, then each one's second, and so on, oldest first
#: within a round. One tenant's bulk write of thousands of messages then delays another
#: tenant's single write by at most one batch, where taking the oldest first kept it behind all
#: of them. Within a group the order is the send order (a group belongs to one tenant, so its
#: messages' ranks rise with their sequence numbers) and a batch never skips a message of a
#: group it takes a later one of.
_FAIR_BATCH = """
SELECT * FROM (
    SELECT m.*, ROW_NUMBER() OVER (
        PARTITION BY CASE WHEN instr(m.group_id, ':') > 0
                          THEN substr(m.group_id, 1, instr(m.group_id, ':') - 1)
                          ELSE m.group_id END
        ORDER BY m.seq) AS turn
    FROM queue_messages AS m
    WHERE m.invisible_until <= :now
      AND NOT EXISTS (
          SELECT 1 FROM queue_messages AS b
          WHERE b.group_id = m.group_id AND b.invisible_until > :now)
)
ORDER BY turn, seq
LIMIT :limit
"""

_signals: dict[Path, threading.Condition] = {}
_signals_lock = threading.Lock()


def _signal_for(path: Path) -> threading.Condition:
    """One condition per queue file in this process, so any instance's send wakes any receiver."""
    key = path.resolve()
    with _signals_lock:
        return _signals.setdefault(key, threading.Condition())


class LocalFifoQueue:
    """`WriteQueue` and `DeadLetterQueue` on SQLite, plus the consumer side SQS would provide."""

    def __init__(
        self,
        path: Path,
        max_receive_count: int = 5,
        visibility_timeout_s: float = 30.0,
        dedup_window_s: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_receive_count < 1:
            raise ValueError("max_receive_count must be at least 1")
        if visibility_timeout_s <= 0:
            raise ValueError("visibility_timeout_s must be positive")
        self.path = Path(path)
        self.max_receive_count = max_receive_count
        self.visibility_timeout_s = visibility_timeout_s
        self.dedup_window_s = dedup_window_s
        self._clock = clock
        self._db = ConnectionPerThread(self.path, _SCHEMA)
        self._signal = _signal_for(self.path)

    # --- producer side (WriteQueue, DeadLetters) ----------------------------------------------

    def send(self, messages: Sequence[QueueMessage], delay_s: float = 0.0) -> None:
        """Enqueue all messages in order, in one transaction; duplicates in the window are dropped.
        A message over the queue's size limit (SQS's) refuses the whole batch. ``delay_s``: none
        is received before then (SQS's DelaySeconds)."""
        if not messages:
            return
        refuse_oversized(messages)
        now = self._clock()
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM queue_dedup WHERE sent_at <= ?", (now - self.dedup_window_s,))
            for message in messages:
                fresh = conn.execute(
                    "INSERT OR IGNORE INTO queue_dedup (dedup_id, sent_at) VALUES (?, ?)",
                    (message.dedup_id, now),
                ).rowcount
                if fresh:
                    self._insert(conn, message, now, now + delay_s if delay_s > 0 else 0.0)
        with self._signal:
            self._signal.notify_all()

    def put(self, message: QueueMessage, reason: str) -> None:
        """Dead-letter a message that can never succeed (the writer found it unparseable)."""
        with self._db.transaction() as conn:
            self._bury(
                conn, str(uuid.uuid4()), message=message, reason=reason, now=self._clock(), receive_count=0
            )

    # --- consumer side ------------------------------------------------------------------------

    def receive(
        self,
        max_messages: int = MAX_BATCH,
        *,
        wait_s: float = 0.0,
        visibility_timeout_s: float | None = None,
    ) -> list[ReceivedMessage]:
        """Up to ``max_messages`` visible messages, in FIFO group order, now in flight.

        ``wait_s`` > 0 long-polls: it returns as soon as messages are available, or empty when
        the wait is over.
        """
        if not 1 <= max_messages <= MAX_RECEIVE:
            raise ValueError(f"max_messages must be between 1 and {MAX_RECEIVE}")
        deadline = time.monotonic() + wait_s
        while True:
            batch = self._receive_once(
                max_messages,
                self.visibility_timeout_s if visibility_timeout_s is None else visibility_timeout_s,
            )
            remaining = deadline - time.monotonic()
            if batch or remaining <= 0:
                return batch
            with self._signal:
                self._signal.wait(min(remaining, _POLL_INTERVAL_S))

    def peek(self, max_messages: int = MAX_RECEIVE) -> list[str]:
        """The bodies of up to ``max_messages`` messages waiting to be received, oldest first:
        what the next receives most likely hand out (those of a group in flight too, which follow
        once its batch is settled). Read only: nothing is received or changed, and a message
        seen here is received as any other. A hint for work that may start early: the writer
        embeds the next batch's texts while it stores this one (`local.worker.QueueWorker`)."""
        if max_messages < 1:
            return []
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT body FROM queue_messages WHERE invisible_until <= ? ORDER BY seq LIMIT ?",
                (self._clock(), max_messages),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def ack(self, receipt_handles: Iterable[str]) -> int:
        """Delete the messages of these deliveries; stale or unknown handles are ignored."""
        handles = list(receipt_handles)
        if not handles:
            return 0
        with self._db.transaction() as conn:
            acked = sum(
                conn.execute("DELETE FROM queue_messages WHERE receipt_handle = ?", (handle,)).rowcount
                for handle in handles
            )
        # A message body is a memory's text: once handled it is zeroed in the file (secure
        # delete) and its frames leave the log, so a later erasure finds no copy here.
        scrub_wal(self._db.get())
        return acked

    def nack(self, receipt_handles: Iterable[str], delay_s: float = 0.0) -> None:
        """Give these deliveries back: visible again after ``delay_s``, or dead-lettered when spent.

        During the delay the message still counts as in flight, so its group stays blocked and
        the group's order holds (SQS: ChangeMessageVisibility on a FIFO message).
        """
        handles = list(receipt_handles)
        if not handles:
            return
        now = self._clock()
        with self._db.transaction() as conn:
            for handle in handles:
                row = conn.execute(
                    "SELECT * FROM queue_messages WHERE receipt_handle = ?", (handle,)
                ).fetchone()
                if row is None:
                    continue
                if row["receive_count"] >= self.max_receive_count:
                    self._bury_row(conn, row, MAX_RECEIVES_REASON, now)
                else:
                    conn.execute(
                        "UPDATE queue_messages SET receipt_handle = NULL, invisible_until = ? WHERE seq = ?",
                        (now + delay_s if delay_s > 0 else 0.0, row["seq"]),
                    )
        with self._signal:
            self._signal.notify_all()

    def settle(
        self,
        messages: Sequence[ReceivedMessage],
        batch_response: Mapping[str, Any],
        retry_delay_s: float = 0.0,
    ) -> tuple[int, int]:
        """Apply a Lambda partial-batch response to a received batch: ack the rest, nack failures.

        ``batch_response`` is what the writer handler returns
        (``{"batchItemFailures": [{"itemIdentifier": message_id}]}``), exactly what the SQS event
        source mapping reads. If the handler raised, nack the whole batch instead. Returns
        ``(acked, failed)``.
        """
        failed_ids = {item["itemIdentifier"] for item in batch_response.get("batchItemFailures", [])}
        failed = [m.receipt_handle for m in messages if m.message_id in failed_ids]
        succeeded = [m.receipt_handle for m in messages if m.message_id not in failed_ids]
        self.ack(succeeded)
        self.nack(failed, delay_s=retry_delay_s)
        return len(succeeded), len(failed)

    # --- inspection and operations ------------------------------------------------------------

    def depth(self) -> int:
        """Messages still in the queue: visible, delayed or in flight (not the dead letters)."""
        with self._db.transaction(write=False) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM queue_messages").fetchone()[0])

    def dead_letters(self) -> list[DeadLetter]:
        """Every dead letter, oldest first."""
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT id, group_id, dedup_id, body, reason, failed_at, receive_count "
                "FROM queue_dead_letters ORDER BY rowid"
            ).fetchall()
        return [DeadLetter(**dict(row)) for row in rows]

    def redrive(self, ids: Iterable[str] | None = None) -> int:
        """Move dead letters (all, or those ``ids``) back to the tail of their groups.

        They come back as new messages with fresh receive counts, past the dedup check: a redrive
        is a deliberate resend of a message whose dedup id the queue has already seen.
        """
        wanted = None if ids is None else set(ids)
        now = self._clock()
        moved = 0
        with self._db.transaction() as conn:
            rows = conn.execute("SELECT rowid, * FROM queue_dead_letters ORDER BY rowid").fetchall()
            for row in rows:
                if wanted is not None and row["id"] not in wanted:
                    continue
                message = QueueMessage(row["group_id"], row["dedup_id"], row["body"])
                self._insert(conn, message, now)
                conn.execute("DELETE FROM queue_dead_letters WHERE rowid = ?", (row["rowid"],))
                moved += 1
        if moved:
            with self._signal:
                self._signal.notify_all()
        return moved

    def close(self) -> None:
        self._db.close()

    # --- internals ----------------------------------------------------------------------------

    def _receive_once(self, max_messages: int, visibility_timeout_s: float) -> list[ReceivedMessage]:
        now = self._clock()
        with self._db.transaction(write=False) as conn:
            # An idle worker polls often: look before taking the write lock the API also needs.
            if not conn.execute(
                "SELECT 1 FROM queue_messages WHERE invisible_until <= ? LIMIT 1", (now,)
            ).fetchone():
                return []
        with self._db.transaction() as conn:
            # Deliveries that used up their receives and timed out go to the dead letters first,
            # so they neither come back nor keep blocking their group.
            spent = conn.execute(
                "SELECT * FROM queue_messages WHERE receive_count >= ? AND invisible_until <= ?",
                (self.max_receive_count, now),
            ).fetchall()
            for row in spent:
                self._bury_row(conn, row, MAX_RECEIVES_REASON, now)
            rows = conn.execute(_FAIR_BATCH, {"now": now, "limit": max_messages}).fetchall()
            batch = []
            for row in rows:
                handle = uuid.uuid4().hex
                first = row["first_received_at"] if row["first_received_at"] is not None else now
                conn.execute(
                    "UPDATE queue_messages SET receive_count = receive_count + 1, receipt_handle = ?, "
                    "invisible_until = ?, first_received_at = ? WHERE seq = ?",
                    (handle, now + visibility_timeout_s, first, row["seq"]),
                )
                batch.append(
                    ReceivedMessage(
                        message_id=row["message_id"],
                        receipt_handle=handle,
                        group_id=row["group_id"],
                        dedup_id=row["dedup_id"],
                        body=row["body"],
                        sequence_number=row["seq"],
                        receive_count=row["receive_count"] + 1,
                        sent_at=row["sent_at"],
                        first_received_at=first,
                    )
                )
            return batch

    @staticmethod
    def _insert(conn: sqlite3.Connection, message: QueueMessage, now: float, visible_at: float = 0.0) -> None:
        conn.execute(
            "INSERT INTO queue_messages (message_id, group_id, dedup_id, body, sent_at, invisible_until) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (str(uuid.uuid4()), message.group_id, message.dedup_id, message.body, now, visible_at),
        )

    def _bury_row(self, conn: sqlite3.Connection, row: sqlite3.Row, reason: str, now: float) -> None:
        message = QueueMessage(row["group_id"], row["dedup_id"], row["body"])
        self._bury(
            conn,
            row["message_id"],
            message=message,
            reason=reason,
            now=now,
            receive_count=row["receive_count"],
        )
        conn.execute("DELETE FROM queue_messages WHERE seq = ?", (row["seq"],))

    @staticmethod
    def _bury(
        conn: sqlite3.Connection,
        dead_letter_id: str,
        *,
        message: QueueMessage,
        reason: str,
        now: float,
        receive_count: int,
    ) -> None:
        conn.execute(
            "INSERT INTO queue_dead_letters (id, group_id, dedup_id, body, reason, failed_at, receive_count) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (dead_letter_id, message.group_id, message.dedup_id, message.body, reason, now, receive_count),
        )


def to_sqs_event(messages: Sequence[ReceivedMessage], queue_arn: str = DEFAULT_QUEUE_ARN) -> dict[str, Any]:
    """The event Lambda's SQS FIFO event source mapping would deliver for this batch.

    The shape is Powertools' ``SqsModel``/``SqsRecordModel`` (and AWS's documented sample event):
    timestamps are epoch milliseconds as strings, the region is the ARN's.
    """
    region = queue_arn.split(":")[3] if queue_arn.count(":") >= 5 else "local"
    return {
        "Records": [
            {
                "messageId": m.message_id,
                "receiptHandle": m.receipt_handle,
                "body": m.body,
                "attributes": {
                    "ApproximateReceiveCount": str(m.receive_count),
                    "SentTimestamp": str(_ms(m.sent_at)),
                    "SequenceNumber": str(m.sequence_number),
                    "MessageGroupId": m.group_id,
                    "MessageDeduplicationId": m.dedup_id,
                    "SenderId": LOCAL_SENDER_ID,
                    "ApproximateFirstReceiveTimestamp": str(_ms(m.first_received_at)),
                },
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(m.body.encode("utf-8"), usedforsecurity=False).hexdigest(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


def _ms(epoch_s: float) -> int:
    return round(epoch_s * 1000)
