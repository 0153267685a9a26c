"""The client's webhook calls over the scripted transport: set (the secret sent as given, never
starred), read, remove, and a missing webhook as `NotFoundError`."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.client.test_client import error, make, ok

from agent_memory.client import NotFoundError


def webhook(**fields: Any) -> dict[str, Any]:
    return {
        "url": "https://hooks.example.com/in", "event_types": None, "include_content": False,
        "secret_last4": "wxyz", "secret": None, "signature_header": "Agent-Memory-Signature",
        "created_at": "2026-11-22T12:00:00Z", "updated_at": "2026-11-22T12:00:00Z", "updated_by": "key_1",
        **fields,
    }  # fmt: skip


def test_set_webhook_sends_the_whole_webhook_and_returns_the_secret_made() -> None:
    # GIVEN
    client, transport, _ = make(ok(webhook(secret="whsec_abcwxyz", include_content=True)))
    # WHEN
    made = client.set_webhook(
        "https://hooks.example.com/in", event_types=["memory.created"], include_content=True, secret="s" * 32
    )
    # THEN
    [sent] = transport.sent
    assert (sent.method, sent.path) == ("PUT", "/prod/v1/admin/webhooks")
    assert sent.json() == {
        "url": "https://hooks.example.com/in",
        "event_types": ["memory.created"],
        "include_content": True,
        "new_secret": False,
        "secret": "s" * 32,
    }
    assert made.secret == "whsec_abcwxyz" and made.include_content


def test_read_and_remove_and_a_missing_webhook_is_not_found() -> None:
    # GIVEN
    client, transport, _ = make(ok(webhook()), ok({"deleted": True}), error(404, "not_found"))
    # WHEN
    read = client.webhook()
    removed = client.delete_webhook()
    # THEN
    assert read.secret is None and read.secret_last4 == "wxyz" and removed.deleted
    assert [(s.method, s.path) for s in transport.sent] == [
        ("GET", "/prod/v1/admin/webhooks"),
        ("DELETE", "/prod/v1/admin/webhooks"),
    ]
    with pytest.raises(NotFoundError):
        client.webhook()
