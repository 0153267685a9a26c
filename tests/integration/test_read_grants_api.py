"""Read access to another agent's memory through the API: off by default, granted and revoked by
an admin, recorded in the owner's audit trail, read-only, and never across tenants. The caller of
each request is what the key store answers for the key, as the authorizer would hand it over."""

from __future__ import annotations

import json
from typing import Any

from tests.integration.conftest import call_api, drain_writes
from tests.payloads import load_event

from agent_memory import container
from agent_memory.model.caller import Caller
from agent_memory.tenancy.rules.keys import NewKey

ADMIN = Caller("acme", key_id="key_admin", scopes=frozenset({"admin"}))


def as_caller(caller: Caller, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    event = load_event("api_search.json", path=path, httpMethod=method)
    event["body"] = None if body is None else json.dumps(body)
    event["requestContext"]["authorizer"] = {**caller.to_authorizer(), "principalId": caller.key_id}
    return call_api(event)


def bound_key(tenant: str, agent: str) -> str:
    _, key = container.key_store().create(NewKey(tenant, "pro", agents=frozenset({agent})))
    return key


def caller_of(key: str) -> Caller:
    caller = container.key_store().lookup(key)
    assert caller is not None
    return caller


def test_an_admin_grant_lets_one_agent_read_another_and_nothing_more(local_env: object) -> None:
    # GIVEN a worker's memory and a key bound to the supervisor agent
    worker = Caller(
        "acme",
        key_id="key_worker",
        scopes=frozenset({"read", "write", "forget"}),
        agents=frozenset({"worker"}),
    )
    assert (
        as_caller(
            worker,
            "POST",
            "/v1/agents/worker/memories",
            {"items": [{"content": "Refund for order 1001 approved."}]},
        )[0]
        == 202
    )
    drain_writes()
    key = bound_key("acme", "supervisor")
    search = ("POST", "/v1/agents/worker/memories/search", {"query": "refund"})

    # WHEN it searches before, during and after a grant
    before = as_caller(caller_of(key), *search)
    granted = as_caller(ADMIN, "PUT", "/v1/admin/agents/worker/readers/supervisor")
    during = as_caller(caller_of(key), *search)
    write = as_caller(caller_of(key), "POST", "/v1/agents/worker/memories", {"items": [{"content": "x"}]})
    forget = as_caller(
        caller_of(key), "DELETE", f"/v1/agents/worker/memories/{during[1]['results'][0]['id']}"
    )
    readers = as_caller(ADMIN, "GET", "/v1/admin/agents/worker/readers")
    revoked = as_caller(ADMIN, "DELETE", "/v1/admin/agents/worker/readers/supervisor")
    after = as_caller(caller_of(key), *search)

    # THEN it reads only while granted, never writes or forgets, and the trail says who let it
    assert before[0] == 403
    assert granted == (
        200,
        {"agent_id": "worker", "reader_id": "supervisor", "granted": True, "changed": True},
    )
    assert during[0] == 200 and "1001" in during[1]["results"][0]["content"]
    assert write[0] == 403 and forget[0] == 403
    assert readers == (200, {"agent_id": "worker", "readers": ["supervisor"]})
    assert revoked[1]["changed"] is True and after[0] == 403
    trail = as_caller(worker, "GET", "/v1/agents/worker/audit")[1]["items"]
    assert [(e["action"], e["actor"], e["detail"]) for e in trail[:2]] == [
        ("read_revoked", "key_admin", {"reader": "supervisor"}),
        ("read_granted", "key_admin", {"reader": "supervisor"}),
    ]


def test_a_grant_never_crosses_tenants_and_needs_an_admin(local_env: object) -> None:
    # GIVEN globex's supervisor key, and acme's admin granting acme's supervisor
    globex_key = bound_key("globex", "supervisor")
    as_caller(ADMIN, "PUT", "/v1/admin/agents/worker/readers/supervisor")
    agent_key = Caller("acme", scopes=frozenset({"read", "write"}), agents=frozenset({"supervisor"}))

    # WHEN globex's key reads globex's worker, and a non-admin tries to grant
    read = as_caller(caller_of(globex_key), "POST", "/v1/agents/worker/memories/search", {"query": "x"})
    grant = as_caller(agent_key, "PUT", "/v1/admin/agents/worker/readers/supervisor")
    same = as_caller(ADMIN, "PUT", "/v1/admin/agents/worker/readers/worker")

    # THEN refused, refused, and an agent reading itself is no grant
    assert read[0] == 403 and grant[0] == 403
    assert same[0] == 400 and same[1]["error"]["code"] == "validation_error"
