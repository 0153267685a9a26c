"""Pending-write markers in DynamoDB, for the deployed stack.

The write Lambda marks each accepted record before enqueueing it and the writer clears the mark
once the record is stored; ``stats.pending_writes`` counts the marks of one agent. One item per
record makes every operation idempotent under at-least-once delivery: a redelivered message
deletes a mark that is already gone, a client retry puts the same item again.

Table schema (created by the CDK stack):

- partition key ``pk`` (S): ``"{tenant_id}#{agent_id}"`` (ids cannot contain ``#``);
- sort key ``sk`` (S): the record id;
- ``expires_at`` (N): epoch seconds, the table's TTL attribute, so marks that are never cleared
  (a crash between marking and enqueueing, a write sent to the dead letters) disappear;
- billing mode on-demand (PAY_PER_REQUEST). No indexes.

TTL deletion runs late (typically within days), so `count` also filters out expired items itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

#: BatchWriteItem's limit of requests per call.
MAX_BATCH_WRITE = 25


class DynamoDbPendingWrites:
    """`PendingWrites` on a DynamoDB table (schema in the module docstring)."""

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | None = None,
        ttl_days: float = 14,
        *,
        max_retries: int = 5,
        backoff_s: float = 0.05,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.table_name = table_name
        self._client = client
        self._ttl_s = ttl_days * 86_400
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._clock = clock
        self._sleep = sleep

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client("dynamodb", config=Config(retries={"mode": "standard"}))
        return self._client

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        pk = _pk(tenant_id, agent_id)
        expires_at = str(int(self._clock() + self._ttl_s))
        self._batch_write(
            {"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": rid}, "expires_at": {"N": expires_at}}}}
            for rid in _unique(record_ids)
        )

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        pk = _pk(tenant_id, agent_id)
        self._batch_write(
            {"DeleteRequest": {"Key": {"pk": {"S": pk}, "sk": {"S": rid}}}} for rid in _unique(record_ids)
        )

    def count(self, tenant_id: str, agent_id: str) -> int:
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": "expires_at > :now",
            "ExpressionAttributeValues": {
                ":pk": {"S": _pk(tenant_id, agent_id)},
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

    def _batch_write(self, requests: Iterator[dict[str, Any]]) -> None:
        items = list(requests)
        for start in range(0, len(items), MAX_BATCH_WRITE):
            self._write_chunk(items[start : start + MAX_BATCH_WRITE])

    def _write_chunk(self, chunk: list[dict[str, Any]]) -> None:
        """One BatchWriteItem call, then again for its ``UnprocessedItems`` (throttling) with backoff."""
        unprocessed: dict[str, list[dict[str, Any]]] = {self.table_name: chunk}
        for attempt in range(self._max_retries + 1):
            if attempt:
                self._sleep(self._backoff_s * 2 ** (attempt - 1))
            try:
                response = self.client.batch_write_item(RequestItems=unprocessed)
            except (ClientError, BotoCoreError) as exc:
                raise DependencyError(f"cannot update pending writes: {exc}") from exc
            unprocessed = response.get("UnprocessedItems") or {}
            if not unprocessed:
                return
        left = sum(len(v) for v in unprocessed.values())
        raise DependencyError(f"{left} pending-write update(s) stayed unprocessed after retries")


def _pk(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}#{agent_id}"


def _unique(record_ids: Sequence[str]) -> list[str]:
    """In order, without repeats: BatchWriteItem rejects a request naming one key twice."""
    return list(dict.fromkeys(record_ids))
