"""Pending-write markers in DynamoDB, for the deployed stack.

The write Lambda marks each accepted record before enqueueing it and the writer clears the mark
once the record is stored; ``stats.pending_writes`` counts the marks of one agent. One item per
record makes every operation idempotent under at-least-once delivery: a redelivered message
clears a mark that is already clear, a client retry puts the same item again.

Clearing does not delete the item: it turns it into a *done* tombstone that lives for the queue's
deduplication window. Every acceptance of a write is a message of its own (its deduplication id
names that acceptance), so a retry, or the same write accepted again after it was forgotten, is
delivered and its writer clears its mark: `add` marks it pending whatever tombstone is there, so a
client that waits for ``pending_writes`` to reach 0 never reads before that write is stored.
`add` first reads the items (BatchGetItem, strongly consistent) and leaves a fresh *pending* mark
alone: its writer is in flight and will clear it, and not rewriting it keeps a retry from
overwriting the tombstone of a writer that finishes between our read and our write (the retry's
own writer only confirms the stored record). BatchWriteItem has no conditions, so a small race
remains: when a ``done`` for an id that had no pending item when `add` read it lands between that
read and the write, the pending mark overwrites the tombstone and counts until the retry's own
writer clears it, or its TTL (``ttl_days``) expires it, as any mark whose write was lost does.

Table schema (created by the CDK stack):

- partition key ``pk`` (S): ``"{tenant_id}#{agent_id}"`` (ids cannot contain ``#``);
- sort key ``sk`` (S): the record id;
- ``state`` (S): ``"pending"`` (accepted, not yet stored) or ``"done"`` (a tombstone);
- ``expires_at`` (N): epoch seconds, the table's TTL attribute: ``lease_s`` after `add` for a
  pending mark, so a crash between marking and enqueueing leaves no mark that counts for long;
  ``ttl_days`` after `queued` (its message is on the queue; an UpdateItem per id, conditional on
  the item still being pending, so a writer's tombstone is never turned back), so marks that are
  never cleared (a write sent to the dead letters) disappear; ``dedup_window_s`` after `done`
  for a tombstone;
- billing mode on-demand (PAY_PER_REQUEST). No indexes.

TTL deletion runs late (typically within days), so reads also check ``expires_at`` themselves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.dynamodb_table import DynamoDbTable
from agent_memory.adapters.pending_marks import LEASE_S, mark_times
from agent_memory.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

#: BatchWriteItem's limit of requests per call.
MAX_BATCH_WRITE = 25
#: BatchGetItem's limit of keys per call.
MAX_BATCH_GET = 100

PENDING = "pending"
DONE = "done"


class DynamoDbPendingWrites(DynamoDbTable):
    """`PendingWrites` on a DynamoDB table (schema in the module docstring).

    ``dedup_window_s`` must be at least the queue's deduplication window: SQS FIFO's is 5 minutes.
    A shorter one would let a retry mark a record that the queue still drops, which is the stuck
    count the tombstones exist to prevent.
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | None = None,
        ttl_days: float = 14,
        dedup_window_s: float = 300.0,
        *,
        max_retries: int = 5,
        backoff_s: float = 0.05,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        lease_s: float = LEASE_S,
    ) -> None:
        self._ttl_s, self._lease_s, self._dedup_window_s = mark_times(ttl_days, dedup_window_s, lease_s)
        super().__init__(table_name, client)
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._clock = clock
        self._sleep = sleep

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        pk = _pk(tenant_id, agent_id)
        ids = _unique(record_ids)
        if not ids:
            return
        now = self._clock()
        in_flight = self._pending_ids(pk, ids, now)
        expires_at = str(int(now + self._lease_s))
        self._batch_write(
            {"PutRequest": {"Item": _item(pk, rid, PENDING, expires_at)}}
            for rid in ids
            if rid not in in_flight
        )

    def queued(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        pk = _pk(tenant_id, agent_id)
        until = str(int(self._clock() + self._ttl_s))
        for rid in _unique(record_ids):
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key={"pk": {"S": pk}, "sk": {"S": rid}},
                    UpdateExpression="SET expires_at = :until",
                    ConditionExpression="#state = :pending AND expires_at < :until",
                    ExpressionAttributeNames={"#state": "state"},
                    ExpressionAttributeValues={":pending": {"S": PENDING}, ":until": {"N": until}},
                )
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise DependencyError(f"cannot hold pending writes: {exc}") from exc
            except BotoCoreError as exc:
                raise DependencyError(f"cannot hold pending writes: {exc}") from exc

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        pk = _pk(tenant_id, agent_id)
        # Rounded up, so the tombstone lives at least the whole window.
        expires_at = str(math.ceil(self._clock() + self._dedup_window_s))
        self._batch_write(
            {"PutRequest": {"Item": _item(pk, rid, DONE, expires_at)}} for rid in _unique(record_ids)
        )

    def discard(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Delete the marks outright, leaving no tombstone: the write was never enqueued."""
        pk = _pk(tenant_id, agent_id)
        self._batch_write(
            {"DeleteRequest": {"Key": {"pk": {"S": pk}, "sk": {"S": rid}}}} for rid in _unique(record_ids)
        )

    def count(self, tenant_id: str, agent_id: str) -> int:
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": "#state = :pending AND expires_at > :now",
            "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": {
                ":pk": {"S": _pk(tenant_id, agent_id)},
                ":pending": {"S": PENDING},
                ":now": {"N": str(int(self._clock()))},
            },
            "Select": "COUNT",
        }
        total = 0
        try:
            while True:
                page = self.client.query(**params)
                total += page["Count"]
                if "LastEvaluatedKey" not in page:
                    return total
                params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"cannot count pending writes: {exc}") from exc

    def _pending_ids(self, pk: str, ids: list[str], now: float) -> set[str]:
        """The ids among ``ids`` with an unexpired pending mark: `add` leaves those alone."""
        pending: set[str] = set()
        for start in range(0, len(ids), MAX_BATCH_GET):
            for item in self._get_chunk(pk, ids[start : start + MAX_BATCH_GET]):
                if item["state"]["S"] == PENDING and float(item["expires_at"]["N"]) > now:
                    pending.add(item["sk"]["S"])
        return pending

    def _get_chunk(self, pk: str, chunk: list[str]) -> list[dict[str, Any]]:
        """One BatchGetItem call, then again for its ``UnprocessedKeys`` (throttling) with backoff.

        Strongly consistent: a tombstone written a moment ago must be seen, or the retry that
        follows a stored write at once would mark it again.
        """
        request: dict[str, Any] = {
            "Keys": [{"pk": {"S": pk}, "sk": {"S": rid}} for rid in chunk],
            "ConsistentRead": True,
            "ProjectionExpression": "sk, #state, expires_at",
            "ExpressionAttributeNames": {"#state": "state"},
        }
        unprocessed: dict[str, Any] = {self.table_name: request}
        items: list[dict[str, Any]] = []
        for attempt in range(self._max_retries + 1):
            if attempt:
                self._sleep(self._backoff_s * 2 ** (attempt - 1))
            try:
                response = self.client.batch_get_item(RequestItems=unprocessed)
            except (ClientError, BotoCoreError) as exc:
                raise DependencyError(f"cannot read pending writes: {exc}") from exc
            items.extend(response.get("Responses", {}).get(self.table_name, []))
            unprocessed = response.get("UnprocessedKeys") or {}
            if not unprocessed:
                return items
        left = sum(len(v["Keys"]) for v in unprocessed.values())
        raise DependencyError(f"{left} pending-write read(s) stayed unprocessed after retries")

    def _batch_write(self, requests: Iterator[dict[str, Any]]) -> None:
        items = list(requests)
        for start in range(0, len(items), MAX_BATCH_WRITE):
            self._write_chunk(items[start : start + MAX_BATCH_WRITE])

    def _write_chunk(self, chunk: list[dict[str, Any]]) -> None:
        """One BatchWriteItem call, then again for its ``UnprocessedItems`` (throttling) with backoff."""
        unprocessed: dict[str, Any] = {self.table_name: chunk}
        for attempt in range(self._max_retries + 1):
            if attempt:
                self._sleep(self._backoff_s * 2 ** (attempt - 1))
            try:
                response = self.client.batch_write_item(RequestItems=unprocessed)
            except (ClientError, BotoCoreError) as exc:
                raise DependencyError(f"cannot update pending writes: {exc}") from exc
            unprocessed = dict(response.get("UnprocessedItems") or {})
            if not unprocessed:
                return
        left = sum(len(v) for v in unprocessed.values())
        raise DependencyError(f"{left} pending-write update(s) stayed unprocessed after retries")


def _pk(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}#{agent_id}"


def _item(pk: str, record_id: str, state: str, expires_at: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": record_id}, "state": {"S": state}, "expires_at": {"N": expires_at}}


def _unique(record_ids: Sequence[str]) -> list[str]:
    """In order, without repeats: BatchGetItem and BatchWriteItem reject a request naming one key twice."""
    return list(dict.fromkeys(record_ids))
