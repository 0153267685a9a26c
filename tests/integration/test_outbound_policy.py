"""The outbound-address policy where tenants name URLs: a webhook and an OpenAI-compatible endpoint
that are, or resolve to, a private, loopback or link-local address are refused when set (400), and
refused again when called (a name whose DNS answer changed since), before any connection is opened
and so before the provider key or a signed body leaves. DNS is a stub here: no packet leaves."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from tests.fakes import refused_connections
from tests.integration.conftest import call_api
from tests.payloads import api_event

from agent_memory import container
from agent_memory.adapters import outbound_http
from agent_memory.adapters.embedders import build_tenant_embedder
from agent_memory.adapters.http_webhooks import GuardedWebhookSender
from agent_memory.errors import ConfigurationError
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.outbound import OutboundRefusedError
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider

PUBLIC = "93.184.215.14"
ADMIN = {"tenant_id": "acme", "key_id": "k1", "scopes": "admin", "agents": "", "reads": ""}


@pytest.fixture
def dns(local_env: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Sequence[str]]]:
    """A deployment's policy (no loopback) with a stub DNS: the names it holds, and what they
    resolve to (changeable by the test); every connection opened is recorded and refused."""
    answers: dict[str, Sequence[str]] = {
        "public.example.com": [PUBLIC],
        "private.example.com": ["10.0.0.7"],
        "mixed.example.com": [PUBLIC, "169.254.169.254"],
        "mapped.example.com": ["::ffff:127.0.0.1"],
    }

    def resolve(host: str, port: int) -> Sequence[str]:
        if host not in answers:
            raise OSError(f"{host} does not resolve")
        return answers[host]

    monkeypatch.setenv("AGENT_MEMORY_OUTBOUND_ALLOW_LOOPBACK", "false")
    monkeypatch.setattr(outbound_http, "system_resolver", resolve)
    container.reset()
    yield answers
    container.reset()


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address a connection is opened to; each is refused (no packet leaves)."""
    return refused_connections(monkeypatch)


def _admin(method: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    return call_api(api_event(method, path, body, ADMIN))


REFUSED = [
    "https://10.1/hook",
    "https://2130706433/hook",
    "https://127.1/hook",
    "https://0x7f000001/hook",
    "https://0xa9fea9fe/latest/meta-data",
    "https://localhost./hook",
    "https://[::ffff:7f00:1]/hook",
    "https://[64:ff9b::a9fe:a9fe]/hook",
    "https://[fe80::1%25eth0]/hook",
    "https://100.64.0.1/hook",
    "https://private.example.com/hook",
    "https://mixed.example.com/hook",
    "https://mapped.example.com/hook",
    "https://unknown.example.com/hook",
    "http://127.0.0.1:9000/hook",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_webhook_at_a_private_loopback_or_link_local_address_is_refused(dns: object, url: str) -> None:
    # WHEN
    status, body = _admin("PUT", "/v1/admin/webhooks", {"url": url})
    # THEN
    assert status == 400, body
    assert body["error"]["code"] == "validation_error"


def test_a_webhook_at_a_public_name_is_set(dns: object) -> None:
    # WHEN / THEN
    assert _admin("PUT", "/v1/admin/webhooks", {"url": "https://public.example.com/hook"})[0] == 200


def _summary_at(endpoint: str) -> dict[str, Any]:
    choice = {"provider": "openai", "model": "gpt-x", "endpoint": endpoint}
    return {"version": 0, "settings": {"summary": choice}, "provider_key": "sk-tenant-secret-1234"}


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://169.254.169.254/latest",
        "http://127.0.0.1:9001",
        "http://localhost:9001/2018-06-01/runtime",
        "https://0xa9fea9fe/v1",
        "https://private.example.com/v1",
        "https://mixed.example.com/v1",
    ],
)
def test_an_openai_compatible_endpoint_at_a_refused_address_is_not_stored(dns: object, endpoint: str) -> None:
    # WHEN
    status, body = _admin("PUT", "/v1/admin/settings", _summary_at(endpoint))
    # THEN the settings are refused, and the key with them
    assert status == 400, body
    assert _admin("GET", "/v1/admin/settings", None)[1]["provider_key"] is None


def test_an_openai_compatible_endpoint_at_a_public_name_is_stored(dns: object) -> None:
    # WHEN
    status, body = _admin("PUT", "/v1/admin/settings", _summary_at("https://public.example.com/v1"))
    # THEN
    assert status == 200, body
    assert body["settings"]["summary"]["endpoint"] == "https://public.example.com/v1"


def test_a_name_that_resolves_to_a_private_address_after_it_was_checked_is_never_called(
    dns: dict[str, Sequence[str]], connections: list[tuple[str, int]]
) -> None:
    # GIVEN a webhook and a model endpoint set while their name resolved to a public address
    assert _admin("PUT", "/v1/admin/webhooks", {"url": "https://public.example.com/hook"})[0] == 200
    embedder = build_tenant_embedder(
        ModelChoice(
            provider=ModelProvider.OPENAI, model="e", endpoint="https://public.example.com/v1", dimension=8
        ),
        "sk-tenant-secret-1234",
        get_settings(),
    )

    # WHEN the name comes to resolve to the instance metadata address (DNS rebinding)
    dns["public.example.com"] = ["169.254.169.254"]
    with pytest.raises(OutboundRefusedError):
        GuardedWebhookSender(container.current().feed.outbound).post(
            "https://public.example.com/hook", json.dumps({}).encode(), {}, 1.0
        )
    with pytest.raises(ConfigurationError):
        embedder.embed(["Alice moved the launch to March 3."])

    # THEN no connection was opened: neither the signed body nor the key left
    assert connections == []
