"""The API against its own OpenAPI document, by schemathesis, through the local server on loopback.

Schemathesis generates requests from `docs/openapi.json` (valid ones, and ones that break the
schema on purpose) for every operation, sends them with an admin key of a fresh tenant, and checks
each answer: never a 5xx, a status the document lists, the documented content type and headers,
a body that matches the response schema, and invalid requests refused. The examples are bounded
and derandomized, so the run is the same on every machine and ends by itself.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from tests.strategies import examples

from agent_memory.handlers.api import openapi_json
from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

SCHEMA = schemathesis.openapi.from_dict(json.loads(openapi_json()))
#: What every answer must satisfy. Left out on purpose: ``positive_data_acceptance`` (schema-valid
#: is not always valid: cursors are opaque, and rules across fields such as max_days_ago >=
#: min_days_ago are not JSON Schema's to say), ``negative_data_rejection`` (parsing is lenient by
#: design where it is harmless: unknown query parameters are ignored, a number is read as a
#: timestamp), and ``unsupported_method`` (an undeclared method is a 404 "no such route", as API
#: Gateway answers it, not a 405). Schema-violating requests are still sent: they must get a
#: documented, well-formed answer and never a 5xx.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES = examples(15)


@pytest.fixture(scope="module")
def admin_key(runtime: LocalRuntime) -> str:
    _, key = runtime.keys.create(NewKey("schemathesis", "pro", admin=True))
    return key


@SCHEMA.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented(case: Any, runtime: LocalRuntime, admin_key: str) -> None:
    # WHEN / THEN
    case.call_and_validate(
        base_url=runtime.url,
        headers={"Authorization": f"Bearer {admin_key}"},
        checks=CHECKS,
        timeout=30,
    )


# --- what the runs above found, pinned --------------------------------------------------------


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS", "TRACE", "QUERY"])
def test_a_method_no_route_has_is_a_404_with_the_documented_body(runtime: LocalRuntime, method: str) -> None:
    # WHEN a method the API has nowhere is sent (the standard library answered 501 with a page)
    conn = http.client.HTTPConnection("127.0.0.1", int(runtime.url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request(method, "/v1/agents/bot/memories")
        response = conn.getresponse()
        status, body = response.status, response.read()
    finally:
        conn.close()

    # THEN it is answered as API Gateway answers it: 404 "no such route"
    assert status == 404
    if method != "HEAD":
        assert json.loads(body)["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "multipart/form-data", "application/x-www-form-urlencoded", "application/xml"],
)
def test_a_body_that_is_not_json_is_a_415(runtime: LocalRuntime, admin_key: str, content_type: str) -> None:
    # GIVEN a valid write, labelled as something else (multipart without a boundary was a 500)
    conn = http.client.HTTPConnection("127.0.0.1", int(runtime.url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request(
            "POST",
            "/v1/agents/bot/memories",
            body=json.dumps({"items": [{"content": "x"}]}),
            headers={"Authorization": f"Bearer {admin_key}", "Content-Type": content_type},
        )
        response = conn.getresponse()
        status, body = response.status, json.loads(response.read())
    finally:
        conn.close()

    # WHEN / THEN it is refused as an unsupported media type, with the documented body
    assert status == 415
    assert body == {
        "error": {
            "code": "unsupported_media_type",
            "message": "the request body must be application/json",
            "details": [],
        }
    }


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_json_nested_past_the_parsers_limit_is_a_400(
    runtime: LocalRuntime, admin_key: str, depth: int
) -> None:
    # GIVEN a body within the size limit whose arrays nest deeper than the JSON parser recurses
    body = '{"items": ' + "[" * depth + "]" * depth + "}"
    conn = http.client.HTTPConnection("127.0.0.1", int(runtime.url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request(
            "POST",
            "/v1/agents/bot/memories",
            body=body,
            headers={"Authorization": f"Bearer {admin_key}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        conn.close()

    # WHEN / THEN it is a 400 (it was a 500), and nothing is echoed back
    assert status == 400
    assert answer["error"]["code"] in {"invalid_json", "validation_error"}
    assert len(json.dumps(answer)) < 2_000
