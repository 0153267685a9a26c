"""The change feed's ports: where change events go as they are made, where tenants' webhooks are
kept, how a delivery is POSTed, and how a failed delivery is put off.

`ChangeFeed` sits on the write path (the writer, forget, feedback, restore), so its contract is
narrow on purpose: hand the events on quickly (one SQLite insert into the local outbox, one
``PutEvents`` call to the bus) and never raise into the caller; a write never waits for a
webhook. Delivery to a tenant's endpoint happens later, elsewhere (`feed.webhooks`).

Every service that records a change (the writer, a merge, a supersession and its undoing,
feedback counted, a restore, a forget, an erasure) hands its events on through `publish`, which
holds that contract for any feed: a missing one (tests, a deployment without one) is skipped,
and one that raises all the same is logged and counted (``ChangeEventsDropped``), never raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from agent_memory.feed.rules.events import ChangeEvent
from agent_memory.feed.rules.webhook_config import WebhookConfig
from agent_memory.observability import MetricUnit, logger, metrics


class ChangeFeed(Protocol):
    def publish(self, events: Sequence[ChangeEvent]) -> None:
        """Hand ``events`` on to the feed (a bus, an outbox), in order. Best effort and quick:
        a feed that cannot take them logs and counts them (``ChangeEventsDropped``) and returns;
        it never raises into the change that made them."""
        ...


def publish(feed: ChangeFeed | None, events: Sequence[ChangeEvent]) -> None:
    """Hand ``events`` to ``feed``; never raises."""
    if feed is None or not events:
        return
    try:
        feed.publish(events)
    except Exception:  # the change is made: losing its event must not undo or fail it
        logger.exception("change events not published", extra={"events": len(events)})
        metrics.add_metric(name="ChangeEventsDropped", unit=MetricUnit.Count, value=len(events))


class WebhookStore(Protocol):
    """One webhook per tenant (`WebhookConfig`), its secret included."""

    def get_webhook(self, tenant_id: str) -> WebhookConfig | None: ...

    def put_webhook(self, config: WebhookConfig) -> None:
        """Store ``config``, replacing the tenant's webhook if it had one."""
        ...

    def delete_webhook(self, tenant_id: str) -> bool:
        """Remove the tenant's webhook; whether it had one."""
        ...


class WebhookSender(Protocol):
    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        """POST ``body`` to ``url``; the HTTP status answered (any). Raises when no answer came
        within ``timeout_s`` (or the connection failed)."""
        ...


class Redelivery(Protocol):
    """A queue that can put a failed delivery off: SQS's ``ChangeMessageVisibility``."""

    def postpone(self, receipt_handle: str, delay_s: int) -> None: ...


__all__ = ["ChangeFeed", "Redelivery", "WebhookSender", "WebhookStore", "publish"]
