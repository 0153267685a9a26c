"""The change feed in AWS: every event on the stack's EventBridge bus, from which rules route it
(the stack's own rule to the webhook delivery queue; an operator's rules anywhere else).

``PutEvents`` takes at most 10 entries and 256 KiB a call, so events go in batches bounded by
both. An entry the bus refuses (``FailedEntryCount``) is sent once more; what still fails, or a
call that fails outright, is logged and counted (``ChangeEventsDropped``) and never raised: the
change that made the event is stored, and a write must not fail or wait on the feed. The client
has short timeouts and few retries for the same reason.

Each entry: ``Source`` ``agent-memory``, ``DetailType`` the event's type (``memory.created``...),
``Detail`` the event with its content (the bus is the deployment's own; a tenant's choice of ids
only applies where its events leave it, at its webhook), ``Time`` when the change was made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from agent_memory.feed.rules.events import EVENT_SOURCE, ChangeEvent
from agent_memory.observability import MetricUnit, logger, metrics

if TYPE_CHECKING:
    from mypy_boto3_events.client import EventBridgeClient

#: EventBridge's limits on one ``PutEvents`` call.
MAX_ENTRIES = 10
MAX_REQUEST_BYTES = 256 * 1024
#: What an entry costs besides its detail (its source, type, time and the request's framing).
ENTRY_OVERHEAD_BYTES = 256


def default_client() -> EventBridgeClient:
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=2, read_timeout=3, retries={"mode": "standard", "max_attempts": 2})
    return boto3.client("events", config=config)


class EventBridgeChangeFeed:
    """`ChangeFeed` onto an EventBridge bus."""

    def __init__(self, bus_name: str, client: EventBridgeClient | None = None) -> None:
        self.bus_name = bus_name
        self._client = client
        #: Events held back while `batched` is open (None: each publish is sent at once).
        self._held: list[ChangeEvent] | None = None

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Hold every event published inside, and send them all on leaving (also on an error):
        the writer's batch of ten writes is one ``PutEvents`` call, not ten. Safe because the
        writer reports its batch only after this ends: a crash before the send redelivers the
        batch, and each redelivered write publishes its event again (the same id)."""
        if self._held is not None:  # nested: the outer one sends
            yield
            return
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            self._send(held)

    @property
    def client(self) -> EventBridgeClient:
        if self._client is None:
            self._client = default_client()
        return self._client

    def publish(self, events: Sequence[ChangeEvent]) -> None:
        if self._held is not None:
            self._held.extend(events)
            return
        self._send(events)

    def _send(self, events: Sequence[ChangeEvent]) -> None:
        dropped = 0
        for batch in self._batches([self._entry(e) for e in events]):
            dropped += self._put(batch)
        if dropped:
            metrics.add_metric(name="ChangeEventsDropped", unit=MetricUnit.Count, value=dropped)
        if events:
            metrics.add_metric(
                name="ChangeEventsPublished", unit=MetricUnit.Count, value=len(events) - dropped
            )

    def _entry(self, event: ChangeEvent) -> dict[str, Any]:
        return {
            "Source": EVENT_SOURCE,
            "DetailType": event.type.value,
            "Detail": event.body().decode(),
            "Time": event.time,
            "EventBusName": self.bus_name,
        }

    @staticmethod
    def _batches(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Entries in calls of at most 10 and 256 KiB (an entry alone over it is its own call,
        for the bus to refuse and the count to show)."""
        batches: list[list[dict[str, Any]]] = []
        size = 0
        for entry in entries:
            cost = len(entry["Detail"].encode()) + ENTRY_OVERHEAD_BYTES
            if not batches or len(batches[-1]) == MAX_ENTRIES or size + cost > MAX_REQUEST_BYTES:
                batches.append([])
                size = 0
            batches[-1].append(entry)
            size += cost
        return batches

    def _put(self, entries: list[dict[str, Any]]) -> int:
        """Send ``entries``, the refused ones once more; how many are lost."""
        for attempt in range(2):
            try:
                answer: Any = self.client.put_events(Entries=entries)
            except Exception as exc:  # any failure of the call: the events are lost, the write is not
                logger.warning(
                    "change events not put on the bus",
                    extra={"events": len(entries), "error": type(exc).__name__},
                )
                return len(entries)
            if not answer.get("FailedEntryCount"):
                return 0
            results = answer.get("Entries", [])
            failed = [e for e, r in zip(entries, results, strict=False) if r.get("ErrorCode")]
            codes = sorted({str(r.get("ErrorCode")) for r in results if r.get("ErrorCode")})
            if attempt or not failed:
                logger.warning(
                    "change events refused by the bus", extra={"events": len(failed), "codes": codes}
                )
                return len(failed)
            entries = failed
        return 0


__all__ = ["EventBridgeChangeFeed"]
