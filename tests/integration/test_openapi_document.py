"""The OpenAPI document: generated from the routes' models, committed, served, and truthful.

``docs/openapi.json`` must be exactly what the code generates, so the published contract cannot
drift from the routes (regenerate it with ``make openapi``). The document must also tell the
contract's own error story: statuses 400..503 with the ``{"error": ...}`` body, never
Powertools' 422.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.conftest import ROOT

from agent_memory.handlers import api
from agent_memory.local.lambda_context import LocalContext
from agent_memory.local.server import build_event

COMMITTED = ROOT / "docs" / "openapi.json"
AUTHORIZER = {"tenant_id": "acme", "plan": "pro", "scopes": "write", "key_id": "k1", "principalId": "k1"}


def _document() -> dict[str, Any]:
    return json.loads(api.openapi_json())  # type: ignore[no-any-return]


def test_the_committed_document_is_the_generated_one() -> None:
    # WHEN / THEN
    assert COMMITTED.read_text() == api.openapi_json(), (
        "docs/openapi.json is out of date with the routes: run `make openapi` and commit it"
    )


def test_every_route_of_the_resolver_is_documented() -> None:
    # GIVEN
    routes = {
        (r.method.lower(), re.sub(r"<(\w+)>", r"{\1}", r.path))
        for r in api.app._static_routes + api.app._dynamic_routes
    }
    documented = {(m, p) for p, ops in _document()["paths"].items() for m in ops}
    # WHEN / THEN
    assert documented == routes


def test_errors_are_the_contracts_own_and_every_route_needs_a_key() -> None:
    # GIVEN
    doc = _document()
    # WHEN / THEN
    assert "422" not in json.dumps(doc["paths"])
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    assert doc["security"] == [{"apiKey": []}]
    assert doc["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for code in ("400", "401", "403", "404", "500", "503"):
                schema = operation["responses"][code]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (method, path, code)
            assert [c for c in operation["responses"] if c.startswith("2")], (method, path)


def test_write_documents_its_202_the_idempotency_key_and_its_409() -> None:
    # GIVEN
    write = _document()["paths"]["/v1/agents/{agent_id}/memories"]["post"]
    # WHEN / THEN
    assert "202" in write["responses"] and "200" not in write["responses"]
    assert "Idempotent-Replayed" in write["responses"]["202"]["headers"]
    assert "409" in write["responses"]
    [header] = [p for p in write["parameters"] if p["in"] == "header"]
    assert header["name"].lower() == "idempotency-key" and header["required"] is False


@pytest.mark.usefixtures("local_env")
def test_the_document_is_served_to_any_key_and_to_no_one_else() -> None:
    # WHEN a key with only the write scope asks for it, THEN it gets the document
    event = build_event("GET", "/v1/openapi.json", {}, None, AUTHORIZER, "127.0.0.1")
    result = api.handler(event, LocalContext())
    assert result["statusCode"] == 200
    assert json.loads(result["body"]) == _document()

    # AND without an authorizer context it is a 401
    event = build_event("GET", "/v1/openapi.json", {}, None, {}, "127.0.0.1")
    event["requestContext"].pop("authorizer")
    result = api.handler(event, LocalContext())
    assert result["statusCode"] == 401
