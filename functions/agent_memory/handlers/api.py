"""The HTTP API (API Gateway REST proxy): the resolver, what runs before every route, and the
one place every failure becomes the documented error body.

The routes themselves are in one router per capability (`memory_routes`, `recall_routes`,
`insight_routes`, `topic_routes`, `knowledge_routes`, `admin_routes`); each validates input with
the contract's pydantic models (Powertools validation), takes the caller from the authorizer
context, calls one use case and maps its answer to the contract. `handlers/routes.py` is the
table of every route and the function that serves it; CDK builds API Gateway from it. Every
error leaves through `_error`, as ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
    ResponseValidationError,
)
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.contract.v1 import (
    ErrorBody,
    ErrorDetail,
    ErrorResponse,
)
from agent_memory.errors import AgentMemoryError, PayloadTooLargeError, ValidationFailedError
from agent_memory.handlers import (
    admin_routes,
    export_routes,
    insight_routes,
    knowledge_routes,
    memory_routes,
    recall_routes,
    topic_routes,
    webhook_routes,
)
from agent_memory.handlers.cors import with_console_cors
from agent_memory.handlers.route_support import AUTHORIZED_ROUTE, json_response
from agent_memory.handlers.routes import Capability, Route, capabilities_of, route_for
from agent_memory.model.caller import ADMIN_SCOPE, Caller, Reach
from agent_memory.model.limits import MAX_BODY_BYTES
from agent_memory.observability import logger, metrics, tracer
from agent_memory.settings import get_settings

#: The one route of the API itself: its OpenAPI document.
openapi_router = Router()


#: The largest magnitude of an integer in a request body: what every store holds (SQLite's and
#: DynamoDB's integers, OpenSearch's ``long``) and what a JSON peer reads without loss of type.
MAX_BODY_INT = 2**63 - 1


def _bounded_int(digits: str) -> int:
    """An integer of a body, refused as invalid JSON when it is past ``MAX_BODY_INT``: checked on
    its digits before Python converts them, which for more than 4,300 digits raises ValueError
    (a 500), and which no store could hold past 19."""
    if len(digits.lstrip("-")) > len(str(MAX_BODY_INT)) or abs(int(digits)) > MAX_BODY_INT:
        raise json.JSONDecodeError(f"integer out of range (at most {MAX_BODY_INT} in magnitude)", "", 0)
    return int(digits)


def _json_body(text: str) -> Any:
    """``json.loads``, every body's one parser: JSON nested past the parser's recursion limit and
    integers past ``MAX_BODY_INT`` are refused as invalid JSON (a 400; Python would raise
    RecursionError, or ValueError for more than 4,300 digits, and either would be a 500)."""
    try:
        return json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply", text[:64], 0) from None


def _guard(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Refuse oversized bodies, and bodies that are not a JSON object, before anything parses them."""
    body = app.current_event.body or ""
    if len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise PayloadTooLargeError(f"request body is larger than {MAX_BODY_BYTES} bytes")
    if body.strip() and not body.lstrip().startswith("{"):
        # Powertools would read a JSON array as its first element and drop the rest.
        raise ValidationFailedError(
            "the request body must be a JSON object",
            [{"loc": ["body"], "msg": "expected a JSON object", "type": "object_type"}],
        )
    return next_middleware(app)


# --- errors: one place turns every failure into the documented body --------------------------


def _error(status: int, code: str, message: str, details: list[ErrorDetail] | None = None) -> Response[Any]:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, details=details or []))
    return json_response(status, body)


def _unsupported_media_type(exc: RequestUnsupportedContentType) -> Response[Any]:
    return _error(415, "unsupported_media_type", "the request body must be application/json")


def _invalid_request(exc: RequestValidationError) -> Response[Any]:
    details = [
        # Never echo the input back: it may be large, or hostile.
        ErrorDetail(
            loc=[str(p) for p in e.get("loc", ())], msg=str(e.get("msg", "")), type=str(e.get("type", ""))
        )
        for e in exc.errors()
    ]
    if any(d.type == "json_invalid" for d in details):
        return _error(400, "invalid_json", "the request body is not valid JSON", details)
    return _error(400, "validation_error", "the request is invalid", details)


def _invalid_response(exc: ResponseValidationError) -> Response[Any]:
    logger.error("response failed its own schema", extra={"errors": exc.errors()})
    return _error(500, "internal_error", "internal error")


def _domain_error(exc: AgentMemoryError) -> Response[Any]:
    if exc.status >= 500:
        logger.exception("request failed", extra={"code": exc.code})
    details = [
        ErrorDetail(loc=list(d.get("loc", [])), msg=str(d.get("msg", "")), type=str(d.get("type", exc.code)))
        for d in exc.details
    ]
    return _error(exc.status, exc.code, exc.message, details)


def _not_found(exc: Exception) -> Response[Any]:
    return _error(404, "not_found", "no such route")


def _unexpected(exc: Exception) -> Response[Any]:
    logger.exception("unhandled error")
    return _error(500, "internal_error", "internal error")


def _resolver(capabilities: Iterable[Capability]) -> APIGatewayRestResolver:
    """A resolver with the routers of ``capabilities``, the guard, and the error mapping."""
    resolver = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=_json_body)
    resolver.use(middlewares=[_guard])
    resolver.exception_handler(RequestUnsupportedContentType)(_unsupported_media_type)
    resolver.exception_handler(RequestValidationError)(_invalid_request)
    resolver.exception_handler(ResponseValidationError)(_invalid_response)
    resolver.exception_handler(AgentMemoryError)(_domain_error)
    resolver.exception_handler(Exception)(_unexpected)
    resolver.not_found(_not_found)
    for capability in capabilities:
        resolver.include_router(ROUTERS[capability])
    return resolver


def _entry_point(
    resolver: APIGatewayRestResolver,
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """A Lambda handler answering with ``resolver``: the key check and the media type first."""

    # Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: a body may hold a tenant's
    # provider key (PUT /v1/admin/settings) and every body holds its users' words.
    @logger.inject_lambda_context(
        correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True, log_event=False
    )
    @metrics.log_metrics
    @tracer.capture_lambda_handler
    def handle(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            event = _authorized(event)
        except AgentMemoryError as exc:
            response = _raw_error(exc.status, exc.code, exc.message)
        else:
            response = _not_json(event) or resolver.resolve(_as_json(event), context)
        return with_console_cors(response, event, get_settings().console_origin)

    return handle


def _raw_error(status: int, code: str, message: str) -> dict[str, Any]:
    """The documented error body, for refusals made before the resolver runs."""
    body = ErrorResponse(error=ErrorBody(code=code, message=message))
    return {
        "statusCode": status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": body.model_dump_json(),
        "isBase64Encoded": False,
    }


def authorize(caller: Caller, method: str, path: str, body: str | None) -> Route | None:
    """The one rule of who may call what: the request's route in the table (`routes.route_for`)
    says the scope it needs and which agents it touches, and `Caller.authorize` decides.

    Decided before anything validates the body or the query, so a caller that may not use a
    route gets a 403 whatever it sent, never a 400 describing a contract it may not use. A
    request of no route is left to the resolver's 404, except under ``/v1/admin``, which needs the
    admin scope first (a key without it learns nothing of which admin routes exist).
    """
    found = route_for(method, path)
    if found is None:
        if path.strip("/").split("/")[:2] == ["v1", "admin"]:
            caller.authorize(ADMIN_SCOPE, Reach.SHARED)
        return None
    route, parameters = found
    named = route.named_agents(parameters)
    if route.reach is Reach.BODY:
        named = _body_agent(body)
    caller.authorize(route.scope, route.reach, named)
    return route


def _body_agent(body: str | None) -> tuple[str, ...]:
    """The agent a body names (``agent_id``); none for a body that is not a JSON object naming
    one as a string, which `Caller.authorize` reads as every agent of the tenant."""
    try:
        parsed = _json_body(body or "")
    except ValueError:  # not JSON (or an integer too long to read): no agent is named
        return ()
    agent = parsed.get("agent_id") if isinstance(parsed, dict) else None
    return (agent,) if isinstance(agent, str) else ()


def _authorized(event: dict[str, Any]) -> dict[str, Any]:
    """``event``, its caller authorized (`authorize`; an `AgentMemoryError` when refused), with
    the table route it was authorized for in the authorizer context, which `caller_of` requires:
    a request the resolver would route but the table does not know is never served unchecked."""
    request = event.get("requestContext") or {}
    context = request.get("authorizer")
    caller = Caller.from_authorizer(context)
    method, path = str(event.get("httpMethod") or ""), str(event.get("path") or "")
    route = authorize(caller, method, path, event.get("body"))
    if route is None:
        return event
    marked = {**(context or {}), AUTHORIZED_ROUTE: f"{route.method} {route.path}"}
    return {**event, "requestContext": {**request, "authorizer": marked}}


def _media_type(event: dict[str, Any]) -> str:
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _not_json(event: dict[str, Any]) -> dict[str, Any] | None:
    """A 415 for a body sent as anything but JSON. Checked before the resolver, whose validation
    would parse forms and multipart bodies (one without a boundary raised a 500)."""
    media_type = _media_type(event)
    if not (event.get("body") or "").strip() or not media_type:
        return None
    if media_type == "application/json" or media_type.endswith("+json"):
        return None
    return _raw_error(415, "unsupported_media_type", "the request body must be application/json")


def _as_json(event: dict[str, Any]) -> dict[str, Any]:
    """A structured ``+json`` media type (``application/vnd.acme+json``) is JSON, as docs/api.md
    says: the resolver's validation is handed ``application/json``, which it knows."""
    media_type = _media_type(event)
    if media_type == "application/json" or not media_type.endswith("+json"):
        return event
    headers = {k: v for k, v in (event.get("headers") or {}).items() if str(k).lower() != "content-type"}
    headers["Content-Type"] = "application/json"
    multi = event.get("multiValueHeaders")
    if isinstance(multi, dict):
        multi = {k: v for k, v in multi.items() if str(k).lower() != "content-type"}
        multi["Content-Type"] = ["application/json"]
    return {**event, "headers": headers, **({"multiValueHeaders": multi} if multi is not None else {})}


@openapi_router.get("/v1/openapi.json")
def openapi_document() -> Response[dict[str, Any]]:
    """This API's OpenAPI document (also committed as docs/openapi.json). Any valid key may read
    it: every route, this one included, sits behind the key check (`authorize`)."""
    return Response(
        status_code=200, content_type=content_types.APPLICATION_JSON, body=json.loads(openapi_json())
    )


@cache
def openapi_json() -> str:
    """The API's OpenAPI document, generated from the same models the routes validate with."""
    from agent_memory.handlers import openapi

    return openapi.render(app)


#: One router per capability (`handlers/routes.py` names the capability of every route).
ROUTERS: dict[Capability, Router] = {
    "memories": memory_routes.router,
    "recall": recall_routes.router,
    "insight": insight_routes.router,
    "topics": topic_routes.router,
    "knowledge": knowledge_routes.router,
    "admin": admin_routes.router,
    "exports": export_routes.router,
    "webhooks": webhook_routes.router,
    "openapi": openapi_router,
}

#: Every route: the embedded runtime serves them all from one process, and the OpenAPI
#: document describes them all.
app = _resolver(ROUTERS)
#: The deployed functions' entry points: each serves the capabilities the route table gives it.
api_handler = _entry_point(_resolver(capabilities_of("Api")))
search_handler = _entry_point(_resolver(capabilities_of("Search")))
#: Every route behind one entry point (the local server, and tests that send any route).
handler = _entry_point(app)
