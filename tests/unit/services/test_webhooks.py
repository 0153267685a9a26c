"""A tenant's webhook (set, read, replaced, removed; the secret shown once; every change in the
settings history) and the delivery of change events to it: signed, to the right tenant only,
with or without content, filtered by type, one tenant's events in order, failures put off."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.payloads import memory_record

from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.adapters.sqlite.sqlite_webhooks import SqliteWebhookStore
from agent_memory.errors import NotFoundError, ValidationFailedError
from agent_memory.feed.rules.events import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    ChangeEvent,
    ChangeType,
    memory_created,
    verify_signature,
)
from agent_memory.feed.webhooks import Delivery, DeliveryOutcome, WebhookDelivery, WebhooksService
from agent_memory.model.caller import Caller
from agent_memory.ports import AuditQuery
from agent_memory.tenancy.settings import SETTINGS_RECORD, TENANT_AUDIT_AGENT

ACME = Caller("acme", key_id="key_a")
GLOBEX = Caller("globex", key_id="key_g")
NOW = 1_800_000_000.0


@dataclass
class Post:
    url: str
    body: bytes
    headers: Mapping[str, str]


@dataclass
class FakeSender:
    """Answers each POST with the next of ``answers`` (a status, or an exception to raise), or,
    for a URL with its own list in ``answers_by_url``, the next of that list: groups are delivered
    on threads, so only a per-endpoint list gives each endpoint a known sequence of answers."""

    answers: list[int | Exception] = field(default_factory=list)
    answers_by_url: dict[str, list[int | Exception]] = field(default_factory=dict)
    posts: list[Post] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        with self.lock:
            self.posts.append(Post(url, body, headers))
            queue = self.answers_by_url.get(url, self.answers)
            answer = queue.pop(0) if queue else 204
        if isinstance(answer, Exception):
            raise answer
        return answer


@dataclass
class FakeRedelivery:
    postponed: list[tuple[str, int]] = field(default_factory=list)

    def postpone(self, receipt_handle: str, delay_s: int) -> None:
        self.postponed.append((receipt_handle, delay_s))


@dataclass
class Hooks:
    store: SqliteWebhookStore
    audit: SqliteMemoryStore
    service: WebhooksService
    sender: FakeSender
    redelivery: FakeRedelivery
    delivery: WebhookDelivery


@pytest.fixture
def hooks(tmp_path: Path, clock: FixedClock) -> Hooks:
    store = SqliteWebhookStore(tmp_path / "webhooks.db")
    audit = SqliteMemoryStore(tmp_path / "memory.db", dimension=8, model_id="m")
    sender, redelivery = FakeSender(), FakeRedelivery()
    return Hooks(
        store=store,
        audit=audit,
        service=WebhooksService(store, audit, clock),
        sender=sender,
        redelivery=redelivery,
        delivery=WebhookDelivery(store, sender, redelivery=redelivery, retry_base_s=30, clock=lambda: NOW),
    )


def _event(
    tenant: str = "acme", content: str = "Vault combination 4417.", rid: str = "mem_aaaaaaaaaaaaaaaa"
) -> ChangeEvent:
    return memory_created(memory_record(rid, content, tenant=tenant, agent="bot"))


def _delivery(event: ChangeEvent, message_id: str = "m1", **fields: object) -> Delivery:
    return Delivery(
        message_id=message_id, body=event.body().decode(), receipt_handle=f"rh-{message_id}", **fields
    )  # type: ignore[arg-type]


# --- setting one --------------------------------------------------------------------------------


def test_a_new_webhook_gets_a_secret_shown_once(hooks: Hooks) -> None:
    # WHEN
    made = hooks.service.put(ACME, "https://hooks.example.com/in")
    # THEN
    assert made.secret is not None and made.secret.startswith("whsec_")
    assert made.config.secret == made.secret and made.config.event_types is None
    assert hooks.service.get(ACME).secret_last4 == made.secret[-4:]


def test_a_replacement_keeps_the_secret_unless_a_new_one_is_asked_for(hooks: Hooks) -> None:
    # GIVEN
    first = hooks.service.put(ACME, "https://hooks.example.com/in")
    # WHEN
    kept = hooks.service.put(ACME, "https://hooks.example.com/v2", include_content=True)
    renewed = hooks.service.put(ACME, "https://hooks.example.com/v2", new_secret_wanted=True)
    given = hooks.service.put(ACME, "https://hooks.example.com/v2", secret="s" * 32)
    # THEN
    assert kept.secret is None and kept.config.secret == first.secret and kept.config.include_content
    assert renewed.secret is not None and renewed.secret != first.secret
    assert given.secret is None and given.config.secret == "s" * 32
    assert given.config.created_at == first.config.created_at


def test_each_change_is_in_the_settings_history_without_the_secret(hooks: Hooks) -> None:
    # GIVEN
    made = hooks.service.put(
        ACME, "https://hooks.example.com/in?token=abc", event_types=[ChangeType.USER_ERASED]
    )
    # WHEN
    hooks.service.delete(ACME)
    # THEN
    page = hooks.audit.audit_events(AuditQuery("acme", TENANT_AUDIT_AGENT, record_id=SETTINGS_RECORD))
    deleted, set_ = page.events
    assert (set_.action, deleted.action) == ("webhook_set", "webhook_deleted")
    assert set_.detail == {
        "where": "https://hooks.example.com",
        "event_types": ["user.erased"],
        "include_content": False,
        "secret": "made",
    }
    assert (
        made.secret is not None
        and made.secret not in json.dumps(set_.detail)
        and "token" not in str(set_.detail)
    )


def test_a_bad_url_or_secret_is_a_validation_error_that_does_not_echo_the_secret(hooks: Hooks) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationFailedError) as raised:
        hooks.service.put(ACME, "http://10.0.0.1/in", secret="short-secret")
    assert [d["loc"] for d in raised.value.details] == [["body", "url"], ["body", "secret"]]
    assert "short-secret" not in str(raised.value.details)


def test_one_tenant_never_reads_replaces_or_removes_anothers_webhook(hooks: Hooks) -> None:
    # GIVEN acme's webhook
    hooks.service.put(ACME, "https://acme.example.com/in")
    # WHEN globex reads, sets and removes its own
    with pytest.raises(NotFoundError):
        hooks.service.get(GLOBEX)
    hooks.service.put(GLOBEX, "https://globex.example.com/in")
    hooks.service.delete(GLOBEX)
    # THEN acme's is as it was
    assert hooks.service.get(ACME).url == "https://acme.example.com/in"
    with pytest.raises(NotFoundError):
        hooks.service.delete(GLOBEX)


# --- delivering -------------------------------------------------------------------------------------


def test_an_event_is_posted_signed_to_its_tenants_webhook_with_ids_only_by_default(hooks: Hooks) -> None:
    # GIVEN acme's webhook and globex's
    secret = hooks.service.put(ACME, "https://acme.example.com/in").secret
    hooks.service.put(GLOBEX, "https://globex.example.com/in")
    event = _event("acme")
    # WHEN
    outcome = hooks.delivery.deliver(_delivery(event))
    # THEN one POST, to acme's URL, verifiable with acme's secret, without the memory's words
    assert outcome is DeliveryOutcome.DELIVERED
    [post] = hooks.sender.posts
    assert post.url == "https://acme.example.com/in"
    assert secret is not None and verify_signature(secret, post.body, post.headers[SIGNATURE_HEADER], now=NOW)
    assert post.headers[EVENT_ID_HEADER] == event.id
    assert b"4417" not in post.body and json.loads(post.body)["data"]["memory_id"] == event.data["memory_id"]


def test_content_is_sent_when_the_tenant_asks_and_types_it_did_not_choose_are_not(hooks: Hooks) -> None:
    # GIVEN a webhook of created events, with content
    hooks.service.put(
        ACME, "https://acme.example.com/in", event_types=[ChangeType.MEMORY_CREATED], include_content=True
    )
    created = _event()
    erased = created.model_copy(update={"type": ChangeType.USER_ERASED, "id": "evt_other", "content": None})
    # WHEN
    outcomes = [hooks.delivery.deliver(_delivery(e)) for e in (created, erased)]
    # THEN
    assert outcomes == [DeliveryOutcome.DELIVERED, DeliveryOutcome.SKIPPED]
    [post] = hooks.sender.posts
    assert json.loads(post.body)["content"]["content"] == "Vault combination 4417."


def test_an_event_of_a_tenant_without_a_webhook_goes_nowhere(hooks: Hooks) -> None:
    # GIVEN only globex has a webhook
    hooks.service.put(GLOBEX, "https://globex.example.com/in")
    # WHEN acme's event is delivered
    outcome = hooks.delivery.deliver(_delivery(_event("acme")))
    # THEN nothing is posted: acme's events never reach globex
    assert outcome is DeliveryOutcome.SKIPPED and hooks.sender.posts == []


@pytest.mark.parametrize("answer", [500, 301, 404, TimeoutError("timed out"), ConnectionRefusedError()])
def test_no_2xx_in_time_fails_and_is_put_off_by_its_back_off(hooks: Hooks, answer: int | Exception) -> None:
    # GIVEN a webhook that answers badly, and an event on its third delivery
    hooks.service.put(ACME, "https://acme.example.com/in")
    hooks.sender.answers = [answer]
    # WHEN
    failed = hooks.delivery.deliver_batch([_delivery(_event(), attempt=3)])
    # THEN it is reported failed, and put off 30 s x 2^2
    assert failed == ["m1"]
    assert hooks.redelivery.postponed == [("rh-m1", 120)]


def test_a_message_that_is_no_event_is_dropped_not_retried(hooks: Hooks) -> None:
    # WHEN / THEN
    assert hooks.delivery.deliver_batch([Delivery(message_id="m1", body="{not json")]) == []


def test_one_tenants_events_go_in_order_and_the_first_failure_holds_back_the_rest(hooks: Hooks) -> None:
    # GIVEN three events of acme in one group, and one of globex; acme's endpoint fails its second
    hooks.service.put(ACME, "https://acme.example.com/in")
    hooks.service.put(GLOBEX, "https://globex.example.com/in")
    acme = [_event("acme", f"note {i}", rid=f"mem_{'abc'[i]}aaaaaaaaaaaaaaa") for i in range(3)]
    batch = [_delivery(e, f"a{i}", group="acme") for i, e in enumerate(acme)]
    batch.append(_delivery(_event("globex"), "g0", group="globex"))
    hooks.sender.answers_by_url = {"https://acme.example.com/in": [204, 503, 204]}
    # WHEN
    failed = hooks.delivery.deliver_batch(batch)
    # THEN acme's second and third wait for the retry (the third is not sent before the second)
    assert sorted(failed) == ["a1", "a2"]
    sent = [json.loads(p.body)["data"]["memory_id"] for p in hooks.sender.posts if "acme" in p.url]
    assert sent == [acme[0].data["memory_id"], acme[1].data["memory_id"]]
    assert any("globex" in p.url for p in hooks.sender.posts)
