"""An admin key bound to one agent stays in its lane: it administers that agent, and is refused
(403, the documented error body) on anything that touches another agent or every agent of the
tenant: another agent's read grants, the tenant's webhook, settings and topics, pattern runs for
another agent or for all."""

from __future__ import annotations

from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error, settled_stats

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

OWN, OTHER = "bot-a", "bot-b"


@pytest.fixture
def keys(runtime: LocalRuntime, new_key: Any) -> dict[str, str]:
    """A tenant's unbound admin key, an admin key bound to bot-a, and a plain bot-a key."""
    tenant, _, admin = new_key(admin=True)
    _, bound_admin = runtime.keys.create(NewKey(tenant, "pro", admin=True, agents=frozenset({OWN})))
    _, plain = runtime.keys.create(NewKey(tenant, "pro", agents=frozenset({OWN})))
    return {"admin": admin, "bound_admin": bound_admin, "plain": plain}


def test_a_bound_admin_cannot_grant_its_agent_reads_of_another_agent(api: Api, keys: dict[str, str]) -> None:
    # GIVEN a memory of bot-b
    status, written = api(
        "POST", f"/v1/agents/{OTHER}/memories", {"items": [{"content": "b secret"}]}, key=keys["admin"]
    )
    assert status == 202
    settled_stats(api, keys["admin"], OTHER)
    memory_id = written["accepted"][0]["id"]

    # WHEN the admin key bound to bot-a grants bot-a reads of bot-b
    status, body = api("PUT", f"/v1/admin/agents/{OTHER}/readers/{OWN}", key=keys["bound_admin"])

    # THEN it is refused, and bot-a's plain key still cannot read bot-b
    assert status == 403, body
    assert_error(body, "forbidden")
    assert api("GET", f"/v1/agents/{OTHER}/memories/{memory_id}", key=keys["plain"])[0] == 403


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/v1/admin/webhooks", {"url": "https://hooks.example.com/x", "include_content": True}),
        ("GET", "/v1/admin/webhooks", None),
        ("DELETE", "/v1/admin/webhooks", None),
        ("GET", "/v1/admin/settings", None),
        ("GET", "/v1/admin/settings/history", None),
        ("PUT", "/v1/admin/settings", {"settings": {}, "version": 0}),
        ("PUT", "/v1/admin/topics", {"terms": {}}),
        ("POST", "/v1/admin/summarize", {"grain": "daily"}),
        ("POST", "/v1/admin/retention", None),
        ("POST", "/v1/admin/patterns", {"agent_id": OTHER}),
        ("POST", "/v1/admin/patterns", {}),
        ("POST", "/v1/admin/exports", {"user_id": "u1"}),
        ("POST", "/v1/admin/exports", {"agent_id": OTHER}),
        ("GET", f"/v1/admin/agents/{OTHER}/readers", None),
        ("DELETE", f"/v1/admin/agents/{OWN}/readers/{OTHER}", None),
        ("POST", f"/v1/agents/{OTHER}/memories/mem_x/history/1/restore", None),
    ],
)
def test_a_bound_admin_is_refused_what_touches_another_agent_or_the_whole_tenant(
    api: Api, keys: dict[str, str], method: str, path: str, body: Any
) -> None:
    # WHEN
    status, answer = (
        api(method, path, body, key=keys["bound_admin"])
        if body is not None
        else api(method, path, key=keys["bound_admin"])
    )
    # THEN
    assert status == 403, answer
    assert_error(answer, "forbidden")


def test_a_bound_admin_administers_its_own_agent(api: Api, keys: dict[str, str]) -> None:
    # WHEN the bound admin runs patterns for its agent and reads its agent's grants
    patterns = api("POST", "/v1/admin/patterns", {"agent_id": OWN}, key=keys["bound_admin"])
    readers = api("GET", f"/v1/admin/agents/{OWN}/readers", key=keys["bound_admin"])

    # THEN both are answered
    assert patterns[0] == 202, patterns
    assert readers == (200, {"agent_id": OWN, "readers": []})
