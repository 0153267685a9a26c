"""The route table (handlers/routes.py) is what the routers register and what each deployed
function serves: one router per capability, and a function answers only its own routes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Router

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


def _event(method: str, path: str, body: Any = None) -> dict[str, Any]:
    return {
        "httpMethod": method,
        "path": path,
        "resource": path,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body) if body is not None else None,
        "requestContext": {
            "authorizer": {"tenant_id": "acme", "key_id": "k1", "scopes": "read write forget"},
            "requestId": "r-1",
        },
        "queryStringParameters": None,
        "pathParameters": None,
    }


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
    result = getattr(api, entry_point)(_event(method, path, body), LocalContext())

    # THEN it is no route there: nothing ran
    assert result["statusCode"] == 404
    assert json.loads(result["body"])["error"]["code"] == "not_found"
