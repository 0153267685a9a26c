"""The route table (handlers/routes.py) is what the routers register and what each deployed
function serves: one router per capability, and a function answers only its own routes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Router
from tests.integration.conftest import call_api
from tests.payloads import api_event

from agent_memory.handlers import api
from agent_memory.handlers.routes import FUNCTION_OF, ROUTES, capabilities_of
from agent_memory.local.lambda_context import LocalContext


def _registered(router: Router) -> set[tuple[str, str]]:
    """(method, path) of every route a router registered, in the table's ``{param}`` form."""
    return {
        (method, re.sub(r"<(\w+)>", r"{\1}", path))
        for path, methods, *_ in router._routes
        for method in methods
    }


@pytest.mark.parametrize("capability", sorted(FUNCTION_OF))
def test_each_router_registers_exactly_the_routes_the_table_gives_its_capability(capability: str) -> None:
    # WHEN / THEN
    assert _registered(api.ROUTERS[capability]) == {
        (r.method, r.path) for r in ROUTES if r.capability == capability
    }  # type: ignore[index]


def test_every_capability_is_served_by_exactly_one_function() -> None:
    # GIVEN
    served = [c for function in ("Api", "Search") for c in capabilities_of(function)]

    # WHEN / THEN
    assert sorted(served) == sorted(FUNCTION_OF) and capabilities_of("Search") == ("recall",)


@pytest.mark.parametrize(
    ("entry_point", "method", "path", "body"),
    [
        ("search_handler", "POST", "/v1/agents/bot/memories", {"items": [{"content": "x"}]}),
        ("search_handler", "GET", "/v1/agents/bot/stats", None),
        ("api_handler", "POST", "/v1/agents/bot/memories/search", {"query": "x"}),
        ("api_handler", "POST", "/v1/agents/bot/context", {"query": "x"}),
    ],
)
def test_a_function_answers_404_to_a_route_of_the_other_function(
    local_env: object, entry_point: str, method: str, path: str, body: Any
) -> None:
    # WHEN a route reaches a function the table does not give it to
    result = getattr(api, entry_point)(api_event(method, path, body), LocalContext())

    # THEN it is no route there: nothing ran
    assert result["statusCode"] == 404
    assert json.loads(result["body"])["error"]["code"] == "not_found"


# --- who may call each route: the table, walked for every kind of key --------------------------

#: Who may call each route, written out plainly: the scope it needs (None: any key of the tenant)
#: and which agents it touches: "path" (the agents its path names), "body" (the body's
#: ``agent_id``; none named means every agent), "tenant" (every agent of the tenant), "shared"
#: (what every agent of the tenant reads) or "own" (answers only with the key's own agents).
#: A route added to handlers/routes.py without a line here fails the walk below.
WHO_MAY: dict[tuple[str, str], tuple[str | None, str]] = {
    ("POST", "/v1/agents/{agent_id}/memories"): ("write", "path"),
    ("GET", "/v1/agents/{agent_id}/memories"): ("read", "path"),
    ("GET", "/v1/agents/{agent_id}/memories/{memory_id}"): ("read", "path"),
    ("POST", "/v1/agents/{agent_id}/memories/{memory_id}/feedback"): ("write", "path"),
    ("GET", "/v1/agents/{agent_id}/memories/{memory_id}/history"): ("read", "path"),
    ("POST", "/v1/agents/{agent_id}/memories/{memory_id}/history/{version}/restore"): ("admin", "path"),
    ("DELETE", "/v1/agents/{agent_id}/memories/{memory_id}"): ("forget", "path"),
    ("DELETE", "/v1/agents/{agent_id}/memories"): ("forget", "path"),
    ("GET", "/v1/agents/{agent_id}/audit"): ("read", "path"),
    ("GET", "/v1/agents/{agent_id}/stats"): ("read", "path"),
    ("POST", "/v1/agents/{agent_id}/memories/search"): ("read", "path"),
    ("POST", "/v1/agents/{agent_id}/context"): ("read", "path"),
    ("GET", "/v1/agents"): ("read", "own"),
    ("GET", "/v1/agents/{agent_id}/timeline"): ("read", "path"),
    ("GET", "/v1/agents/{agent_id}/periods/{grain}/{time_key}"): ("read", "path"),
    ("GET", "/v1/agents/{agent_id}/stats/searches"): ("read", "path"),
    ("GET", "/v1/topics"): ("read", "shared"),
    ("GET", "/v1/topics/proposals"): ("read", "shared"),
    ("PUT", "/v1/admin/topics"): ("admin", "tenant"),
    ("PUT", "/v1/knowledge/documents/{doc_id}"): ("knowledge", "tenant"),
    ("GET", "/v1/knowledge/documents"): ("read", "shared"),
    ("GET", "/v1/knowledge/documents/{doc_id}"): ("read", "shared"),
    ("GET", "/v1/knowledge/documents/{doc_id}/passages"): ("read", "shared"),
    ("DELETE", "/v1/knowledge/documents/{doc_id}"): ("knowledge", "tenant"),
    ("POST", "/v1/admin/summarize"): ("admin", "tenant"),
    ("POST", "/v1/admin/retention"): ("admin", "tenant"),
    ("POST", "/v1/admin/patterns"): ("admin", "body"),
    ("PUT", "/v1/admin/agents/{agent_id}/readers/{reader_id}"): ("admin", "path"),
    ("DELETE", "/v1/admin/agents/{agent_id}/readers/{reader_id}"): ("admin", "path"),
    ("GET", "/v1/admin/agents/{agent_id}/readers"): ("admin", "path"),
    ("GET", "/v1/admin/settings"): ("admin", "tenant"),
    ("GET", "/v1/admin/settings/history"): ("admin", "tenant"),
    ("PUT", "/v1/admin/settings"): ("admin", "tenant"),
    ("POST", "/v1/admin/exports"): ("admin", "body"),
    ("GET", "/v1/admin/exports"): ("admin", "own"),
    ("GET", "/v1/admin/exports/{export_id}"): ("admin", "own"),
    ("GET", "/v1/admin/exports/{export_id}/download"): ("admin", "own"),
    ("GET", "/v1/admin/webhooks"): ("admin", "tenant"),
    ("PUT", "/v1/admin/webhooks"): ("admin", "tenant"),
    ("DELETE", "/v1/admin/webhooks"): ("admin", "tenant"),
    ("GET", "/v1/openapi.json"): (None, "shared"),
}

OWN_AGENT, OTHER_AGENT = "bot-a", "bot-b"
SCOPE_SETS = ("read", "write", "forget", "knowledge", "admin", "read write forget")
#: (name, agents the key is bound to, agents it was granted to read)
BINDINGS = (("tenant-wide", "", ""), ("bound", OWN_AGENT, ""), ("bound+grant", OWN_AGENT, OTHER_AGENT))
KEYS = [
    pytest.param(scopes, agents, reads, id=f"{name}:{scopes.replace(' ', '+')}")
    for scopes in SCOPE_SETS
    for name, agents, reads in BINDINGS
]
PLACEHOLDERS = {
    "memory_id": "mem_0",
    "version": "1",
    "grain": "daily",
    "time_key": "2026-11-20",
    "doc_id": "adr-1",
    "export_id": "exp_" + "a" * 26,
}


def _allowed(
    scopes: set[str], agents: set[str], reads: set[str], route: tuple[str, str], named: list[str]
) -> bool:
    """What the plain table says of one key on one request naming ``named`` agents."""
    scope, touches = WHO_MAY[route]
    if scope is not None and scope not in scopes and "admin" not in scopes:
        return False
    if not agents or touches in ("shared", "own"):
        return True
    if touches == "tenant" or not named:
        return False
    return all(a in agents or (scope == "read" and a in reads) for a in named)


def _request(method: str, path: str, target: str) -> tuple[str, Any, list[str]]:
    """A request of the route touching ``target``: its path, a body that fails validation when
    the route runs at all (nothing is changed), and the agents it names."""
    values = {
        **PLACEHOLDERS,
        "agent_id": target,
        "reader_id": OWN_AGENT if target == OTHER_AGENT else OTHER_AGENT,
    }
    concrete = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)
    named = [values[p] for p in ("agent_id", "reader_id") if "{" + p + "}" in path]
    body: Any = None
    if WHO_MAY[(method, path)][1] == "body":
        body, named = {"agent_id": target, "not_a_field": True}, [target]
    elif method in ("POST", "PUT"):
        body = {"not_a_field": True}
    return concrete, body, named


def test_every_route_of_the_table_has_a_line_in_the_reference_table() -> None:
    # WHEN / THEN
    assert {(r.method, r.path) for r in ROUTES} == set(WHO_MAY)


@pytest.mark.parametrize(("scopes", "agents", "reads"), KEYS)
def test_each_kind_of_key_is_allowed_or_refused_on_every_route_as_the_reference_table_says(
    local_env: object, scopes: str, agents: str, reads: str
) -> None:
    # GIVEN a key of this kind
    authorizer = {"tenant_id": "acme", "key_id": "k1", "scopes": scopes, "agents": agents, "reads": reads}
    key = (set(scopes.split()), set(agents.split()), set(reads.split()))
    wrong = []

    # WHEN it calls every route of the table, on its own agent and on another
    for route in ROUTES:
        for target in (OWN_AGENT, OTHER_AGENT):
            path, body, named = _request(route.method, route.path, target)
            status, answer = call_api(api_event(route.method, path, body, authorizer))
            refused = status == 403 and answer["error"]["code"] == "forbidden"
            if status >= 500 or refused == _allowed(*key, (route.method, route.path), named):
                wrong.append((route.method, path, status, answer.get("error", {}).get("message")))

    # THEN each answer is a 403 exactly where the reference table refuses, and never a 5xx
    assert wrong == []


def test_a_request_served_without_the_tables_rule_is_refused(local_env: object) -> None:
    # GIVEN an admin's request handed to the routes without the entry point's decision
    event = api_event("GET", "/v1/admin/settings", authorizer={"tenant_id": "acme", "scopes": "admin"})

    # WHEN the resolver serves it
    result = api.app.resolve(event, LocalContext())

    # THEN no route answers it unchecked
    assert result["statusCode"] == 403, result
    assert json.loads(result["body"])["error"]["code"] == "forbidden"
