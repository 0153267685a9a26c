"""Tenants' webhooks: set, read and removed by the tenant's admin; and the delivery of change
events to them, signed, one POST per event.

**Setting one** (`WebhooksService`): one webhook per tenant, replaced whole. The secret is made
here (or given by the caller) and shown in the answer of the call that made it, never again; a
replacement that names no secret keeps the one there is (so receivers need not change), unless
asked to make a new one. Every change is in the tenant's settings history (`webhook_set`,
`webhook_deleted`, the key as actor): where events go (scheme, host and port only), which
types, whether with content, and whether the secret was made, set or kept; never the secret.

**Delivering** (`WebhookDelivery`): an event is delivered to the webhook of the tenant that made
it (looked up by the event's tenant, nowhere else), if the webhook wants its type, with or
without its content as the tenant chose, signed with the tenant's secret. A 2xx answer within
the timeout is delivered; anything else fails and the queue brings it back later (the local
outbox after its back-off, SQS once `Redelivery` has put it off), until the attempts run out
and it is dead-lettered. Deliveries of one batch go out concurrently, one tenant's (one group's)
in order: the first that fails fails the rest of its group, so order holds when it is retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum

from pydantic import ValidationError

from agent_memory.errors import NotFoundError, ValidationFailedError
from agent_memory.feed.rules.events import (
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    ChangeType,
    parse_event,
    signature,
)
from agent_memory.feed.rules.webhook_config import (
    WebhookConfig,
    backoff_s,
    check_secret,
    check_url,
    new_secret,
    where,
)
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.caller import Caller
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditAppend, AuditEvent, Clock
from agent_memory.ports.change_feed import Redelivery, WebhookSender, WebhookStore
from agent_memory.tenancy.rules.outbound import OutboundGuard
from agent_memory.tenancy.settings import SETTINGS_RECORD, TENANT_AUDIT_AGENT

#: Deliveries of one batch made at once (one per tenant, or per event on a standard queue).
DELIVERY_WORKERS = 8
USER_AGENT = "agent-memory-webhooks/1"


@dataclass(frozen=True, slots=True)
class WebhookSet:
    """A webhook as stored, and its secret when this call made it (shown once)."""

    config: WebhookConfig
    secret: str | None


class WebhooksService:
    def __init__(
        self, store: WebhookStore, audit: AuditAppend, clock: Clock, *, outbound: OutboundGuard | None = None
    ) -> None:
        self._store = store
        self._audit = audit
        self._clock = clock
        #: The outbound policy a URL's host must pass, resolved (`tenancy.rules.outbound`); without one,
        #: only address literals are checked (and loopback refused).
        self._outbound = outbound

    def get(self, caller: Caller) -> WebhookConfig:
        found = self._store.get_webhook(caller.tenant_id)
        if found is None:
            raise NotFoundError("no webhook is set")
        return found

    def put(
        self,
        caller: Caller,
        url: str,
        *,
        event_types: Sequence[ChangeType] | None = None,
        include_content: bool = False,
        secret: str | None = None,
        new_secret_wanted: bool = False,
    ) -> WebhookSet:
        """Set the caller's tenant's webhook (replacing the one there is)."""
        problems = []
        try:
            loopback = self._outbound is not None and self._outbound.policy.allow_loopback
            url = check_url(url, allow_loopback_http=loopback)
            if self._outbound is not None:  # what the name resolves to now (checked again on each send)
                self._outbound.target(url)
        except ValueError as exc:
            problems.append({"loc": ["body", "url"], "msg": str(exc), "type": "value_error"})
        if secret is not None:
            try:
                check_secret(secret)
            except ValueError as exc:
                problems.append({"loc": ["body", "secret"], "msg": str(exc), "type": "value_error"})
            if new_secret_wanted:
                problems.append({"loc": ["body"], "msg": "secret and new_secret cannot both be given"})
        if problems:
            raise ValidationFailedError("the webhook is invalid", problems)
        now = self._clock.now()
        old = self._store.get_webhook(caller.tenant_id)
        made: str | None = None
        if secret is not None:
            how = "set"
        elif old is not None and not new_secret_wanted:
            secret, how = old.secret, "kept"
        else:
            secret = made = new_secret()
            how = "made"
        config = WebhookConfig(
            tenant_id=caller.tenant_id,
            url=url,
            secret=secret,
            event_types=None if event_types is None else tuple(dict.fromkeys(event_types)),
            include_content=include_content,
            created_at=old.created_at if old is not None else now,
            updated_at=now,
            updated_by=caller.key_id or "api",
        )
        self._store.put_webhook(config)
        detail: dict[str, object] = {
            "where": where(url),
            "event_types": None if config.event_types is None else [t.value for t in config.event_types],
            "include_content": include_content,
            "secret": how,
        }
        self._record(caller, AuditAction.WEBHOOK_SET, detail)
        logger.info("webhook set", extra={"where": where(url), "secret": how})
        return WebhookSet(config, made)

    def delete(self, caller: Caller) -> None:
        if not self._store.delete_webhook(caller.tenant_id):
            raise NotFoundError("no webhook is set")
        self._record(caller, AuditAction.WEBHOOK_DELETED, {})

    def _record(self, caller: Caller, action: str, detail: dict[str, object]) -> None:
        """In the tenant's settings history (``GET /v1/admin/settings/history``)."""
        event = AuditEvent(
            caller.tenant_id,
            TENANT_AUDIT_AGENT,
            SETTINGS_RECORD,
            action,
            caller.key_id or "api",
            self._clock.now(),
            detail,
        )
        self._audit.append_audit([event])


# --- delivery ----------------------------------------------------------------------------------


class DeliveryOutcome(StrEnum):
    DELIVERED = "delivered"
    SKIPPED = "skipped"  # no webhook, or one that does not want the type: nothing to do
    UNREADABLE = "unreadable"  # not an event: no retry can deliver it
    FAILED = "failed"  # no 2xx in time: retried later


@dataclass(frozen=True, slots=True)
class Delivery:
    """One message of the delivery queue: an event on its ``attempt``-th delivery. ``group``:
    the deliveries that must go in order (a tenant's, locally); None: this one alone."""

    message_id: str
    body: str
    attempt: int = 1
    group: str | None = None
    receipt_handle: str = ""


class WebhookDelivery:
    def __init__(
        self,
        store: WebhookStore,
        sender: WebhookSender,
        *,
        timeout_s: float = 5.0,
        redelivery: Redelivery | None = None,
        retry_base_s: float = 2.0,
        retry_max_s: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._sender = sender
        self._timeout_s = timeout_s
        self._redelivery = redelivery
        self._retry_base_s = retry_base_s
        self._retry_max_s = retry_max_s
        self._clock = clock

    def retry_delay_s(self, attempt: int) -> float:
        """The wait after a failed ``attempt``: doubling, bounded."""
        return backoff_s(attempt, self._retry_base_s, self._retry_max_s)

    def deliver_batch(self, deliveries: Sequence[Delivery]) -> list[str]:
        """Deliver a batch; the message ids that failed (to be tried again), each put off by its
        back-off when the queue can (`Redelivery`)."""
        groups: dict[str, list[Delivery]] = {}
        for d in deliveries:
            groups.setdefault(d.group or f"\x00{d.message_id}", []).append(d)
        if len(groups) <= 1:
            failed = [f for group in groups.values() for f in self._in_order(group)]
        else:
            with ThreadPoolExecutor(max_workers=min(len(groups), DELIVERY_WORKERS)) as pool:
                failed = [f for done in pool.map(self._in_order, groups.values()) for f in done]
        for d in failed:
            self._postpone(d)
        return [d.message_id for d in failed]

    def _in_order(self, group: list[Delivery]) -> list[Delivery]:
        """One group's deliveries in order; the first that fails fails the rest with it."""
        for i, d in enumerate(group):
            if self.deliver(d) is DeliveryOutcome.FAILED:
                return group[i:]
        return []

    def _postpone(self, delivery: Delivery) -> None:
        if self._redelivery is None or not delivery.receipt_handle:
            return
        try:
            self._redelivery.postpone(delivery.receipt_handle, round(self.retry_delay_s(delivery.attempt)))
        except Exception:  # the queue's own visibility timeout brings it back instead
            logger.warning(
                "a failed delivery could not be put off", extra={"message_id": delivery.message_id}
            )

    def deliver(self, delivery: Delivery) -> DeliveryOutcome:
        try:
            event = parse_event(delivery.body)
        except (ValueError, ValidationError):
            logger.error("not a change event: dropped", extra={"message_id": delivery.message_id})
            metrics.add_metric(name="WebhookEventsUnreadable", unit=MetricUnit.Count, value=1)
            return DeliveryOutcome.UNREADABLE
        try:
            config = self._store.get_webhook(event.tenant_id)
        except Exception:
            logger.exception("the tenant's webhook could not be read", extra={"event_id": event.id})
            return DeliveryOutcome.FAILED
        if config is None or not config.wants(event.type):
            return DeliveryOutcome.SKIPPED
        body = event.delivered(config.include_content).body()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            EVENT_ID_HEADER: event.id,
            EVENT_TYPE_HEADER: event.type.value,
            SIGNATURE_HEADER: signature(config.secret, body, int(self._clock())),
        }
        context = {"event_id": event.id, "tenant_id": event.tenant_id, "attempt": delivery.attempt}
        try:
            status = self._sender.post(config.url, body, headers, self._timeout_s)
        except Exception as exc:  # no answer (timeout, refused, DNS): tried again later
            status, reason = 0, type(exc).__name__
        else:
            reason = f"HTTP {status}"
        if 200 <= status < 300:
            metrics.add_metric(name="WebhookDeliveries", unit=MetricUnit.Count, value=1)
            logger.info("change event delivered", extra=context)
            return DeliveryOutcome.DELIVERED
        metrics.add_metric(name="WebhookDeliveriesFailed", unit=MetricUnit.Count, value=1)
        logger.warning("change event not delivered", extra={**context, "reason": reason})
        return DeliveryOutcome.FAILED
