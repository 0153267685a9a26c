"""The API's OpenAPI document: Powertools' schema of the routes, told the contract's error story.

Powertools generates the paths, parameters and bodies from the same pydantic models the routes
validate with. What it cannot know is how this API answers failures: it documents a 422 with its
own body for every route, while the contract maps validation failures to 400 and answers every
error with ``{"error": {"code", "message", "details"}}``. So the generated document is completed
here, from the code that decides it (`domain.api.ErrorResponse`, the auth scheme), and nothing
else is written by hand. ``docs/openapi.json`` is this document, committed; a test keeps the two
equal, so it cannot drift from the routes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

from agent_memory.contract.v1 import ErrorResponse

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

TITLE = "agent-memory"
VERSION = "1.0.0"
DESCRIPTION = (
    "Long-term memory for AI agents: write what happened, search it by meaning and time. Every "
    'route needs `Authorization: Bearer <api key>`; errors are `{"error": {"code", "message", '
    '"details"}}`. Contract details: docs/api.md.'
)
SECURITY_SCHEME = "apiKey"
#: The response header a replayed idempotent write carries.
REPLAYED_HEADER = "Idempotent-Replayed"
IDEMPOTENCY_HEADER = "Idempotency-Key"

_REF = "#/components/schemas/{model}"
#: Errors any route can answer, and what each means here.
_COMMON_ERRORS = {
    "400": "The request is invalid (`validation_error` with the failing fields, or `invalid_json`).",
    "401": "No API key, or one that is unknown or revoked.",
    "403": "The key lacks the scope, or is bound to other agents.",
    "404": "No such memory for this tenant and agent, or no such route.",
    "429": "Throttled (the deployed API's stage limits).",
    "500": "An unexpected error; nothing is echoed back.",
    "503": "A dependency (store, queue, model, idempotency store) is unavailable; retry later.",
}
_BODY_ERRORS = {
    "413": "The request body is larger than 2 MiB.",
    "415": "The request body is not sent as `application/json`.",
}
_IDEMPOTENCY_ERRORS = {
    "409": "The Idempotency-Key was used with a different request, or its first request is still running.",
}
#: Powertools' validation models, which this API never answers with.
_UNUSED = ("HTTPValidationError", "ValidationError", "ResponseValidationError")


def document(app: APIGatewayRestResolver) -> dict[str, Any]:
    """The completed OpenAPI document of ``app``'s routes."""
    doc: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(
            title=TITLE,
            version=VERSION,
            description=DESCRIPTION,
            security_schemes={SECURITY_SCHEME: HTTPBearer(bearerFormat="API key (amk_...)")},
            security=[{SECURITY_SCHEME: []}],
        )
    )
    schemas: dict[str, Any] = doc.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorResponse.model_json_schema(ref_template=_REF)
    schemas.update(error_schema.pop("$defs", {}))
    schemas[ErrorResponse.__name__] = error_schema
    error_ref = {"$ref": _REF.format(model=ErrorResponse.__name__)}

    for operations in doc.get("paths", {}).values():
        for method, operation in operations.items():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            responses.pop("422", None)  # Powertools' validation error: answered as a 400 here
            errors = dict(_COMMON_ERRORS)
            if method in {"post", "put", "patch"}:
                errors.update(_BODY_ERRORS)
            headers = {p["name"].lower() for p in operation.get("parameters", []) if p.get("in") == "header"}
            if IDEMPOTENCY_HEADER.lower() in headers:
                errors.update(_IDEMPOTENCY_ERRORS)
                for code, response in responses.items():
                    if code.startswith("2"):
                        response.setdefault("headers", {})[REPLAYED_HEADER] = {
                            "description": "`true` when this is the first answer to this key, replayed.",
                            "schema": {"type": "string", "enum": ["true"]},
                        }
            for code, description in sorted(errors.items()):
                responses.setdefault(
                    code, {"description": description, "content": {"application/json": {"schema": error_ref}}}
                )
            operation["responses"] = dict(sorted(responses.items()))

    used = json.dumps(doc["paths"])
    for name in _UNUSED:
        if f'"{_REF.format(model=name)}"' not in used:
            schemas.pop(name, None)
    doc["components"]["schemas"] = dict(sorted(schemas.items()))
    return doc


def render(app: APIGatewayRestResolver) -> str:
    """The document as committed in ``docs/openapi.json`` (2-space indent, trailing newline)."""
    return json.dumps(document(app), indent=2, ensure_ascii=False) + "\n"
