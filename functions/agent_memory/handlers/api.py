"""The HTTP API (API Gateway REST proxy): write, search, context, get, list, forget, stats.

Routes validate input with the contract's pydantic models (Powertools validation), take the
caller from the authorizer context, call one service and return a typed model. Every error
leaves through `_error`, as ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
    ResponseValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from agent_memory import container
from agent_memory.contract.v1 import (
    AgentsResponse,
    AuditResponse,
    ContextRequest,
    ContextResponse,
    EraseResponse,
    ErrorBody,
    ErrorDetail,
    ErrorResponse,
    ForgetResponse,
    ListResponse,
    MemoryOut,
    PeriodResponse,
    RetentionResponse,
    RetentionRunResponse,
    SearchRequest,
    SearchResponse,
    SearchStatsResponse,
    StatsResponse,
    TimelineResponse,
    WriteRequest,
    WriteResponse,
)
from agent_memory.domain.caller import ADMIN_SCOPE, FORGET_SCOPE, READ_SCOPE, WRITE_SCOPE, Caller
from agent_memory.domain.grains import Grain
from agent_memory.domain.limits import MAX_BODY_BYTES, MAX_LIST_LIMIT
from agent_memory.domain.summary_jobs import SummarizeRequest, SummarizeResponse
from agent_memory.domain.topic_dictionary import (
    MAX_PROPOSALS_LIMIT,
    TopicDictionaryBody,
    TopicDictionaryResponse,
    TopicProposalsResponse,
)
from agent_memory.domain.types import AgentId, MemoryId, UserId
from agent_memory.errors import AgentMemoryError, PayloadTooLargeError, ValidationFailedError
from agent_memory.handlers.cors import with_console_cors
from agent_memory.observability import logger, metrics, tracer
from agent_memory.services.search_stats import MAX_SEARCH_STATS_DAYS
from agent_memory.settings import get_settings


def _json_body(text: str) -> Any:
    """``json.loads``, with JSON nested past the parser's recursion limit refused as invalid JSON
    (Python raises RecursionError there, which would otherwise be a 500)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply", text[:64], 0) from None


app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=_json_body)

AgentPath = Annotated[AgentId, Path(description="The agent whose memory this is.")]
MemoryPath = Annotated[MemoryId, Path(description="A memory id as returned on write.")]


def _caller(agent_id: str | None = None, scope: str = READ_SCOPE) -> Caller:
    context = (app.current_event.raw_event.get("requestContext") or {}).get("authorizer")
    caller = Caller.from_authorizer(context)
    caller.require_scope(scope)
    if agent_id is not None:
        caller.require_agent(agent_id)
    logger.append_keys(tenant_id=caller.tenant_id, key_id=caller.key_id)
    return caller


def _json(status: int, model: BaseModel) -> Response[Any]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=model)


def _guard(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Refuse oversized bodies before anything parses them, and admin routes without the scope."""
    body = app.current_event.body or ""
    if len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise PayloadTooLargeError(f"request body is larger than {MAX_BODY_BYTES} bytes")
    if body.strip() and not body.lstrip().startswith("{"):
        # Powertools would read a JSON array as its first element and drop the rest.
        raise ValidationFailedError(
            "the request body must be a JSON object",
            [{"loc": ["body"], "msg": "expected a JSON object", "type": "object_type"}],
        )
    if app.current_event.path.startswith("/v1/admin"):
        _caller(scope=ADMIN_SCOPE)
    return next_middleware(app)


app.use(middlewares=[_guard])


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=r"^[!-~]{1,255}$",
        description="Makes any retry safe: the same key and request get the first answer again (24 h); "
        "the same key with another request is a 409.",
    ),
]


@app.post("/v1/agents/<agent_id>/memories", status_code=202)
def write_memories(
    agent_id: AgentPath, body: WriteRequest, idempotency_key: IdempotencyKeyHeader = None
) -> Response[WriteResponse]:
    caller = _caller(agent_id, WRITE_SCOPE)
    done = container.api_services().idempotent_write.accept(caller, agent_id, body, idempotency_key)
    response = _json(202, done.response)
    if done.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@app.post("/v1/agents/<agent_id>/memories/search")
def search_memories(agent_id: AgentPath, body: SearchRequest) -> Response[SearchResponse]:
    caller = _caller(agent_id)
    return _json(200, container.api_services().search.search(caller.tenant_id, agent_id, body))


@app.post("/v1/agents/<agent_id>/context")
def recall_context(agent_id: AgentPath, body: ContextRequest) -> Response[ContextResponse]:
    """One block of prompt context: the most relevant memories and summaries, dated and tagged with
    their grain, packed to ``token_budget`` (least relevant dropped first)."""
    caller = _caller(agent_id)
    return _json(200, container.api_services().context.context(caller.tenant_id, agent_id, body))


@app.get("/v1/agents/<agent_id>/memories/<memory_id>")
def get_memory(agent_id: AgentPath, memory_id: MemoryPath) -> Response[MemoryOut]:
    caller = _caller(agent_id)
    return _json(200, container.api_services().memories.get(caller.tenant_id, agent_id, memory_id))


@app.get("/v1/agents/<agent_id>/memories")
def list_memories(
    agent_id: AgentPath,
    grain: Annotated[Grain | None, Query()] = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = 50,
) -> Response[ListResponse]:
    caller = _caller(agent_id)
    page = container.api_services().memories.list(caller.tenant_id, agent_id, grain, limit, cursor)
    return _json(200, page)


@app.delete("/v1/agents/<agent_id>/memories/<memory_id>")
def forget_memory(agent_id: AgentPath, memory_id: MemoryPath) -> Response[ForgetResponse]:
    """Forget one memory at once; the summaries made from it are hidden and re-made without it."""
    caller = _caller(agent_id, FORGET_SCOPE)
    result = container.api_services().forget.forget(
        caller.tenant_id, agent_id, memory_id, actor=caller.key_id
    )
    return _json(200, ForgetResponse(id=memory_id, stale_summaries=result.stale_summaries))


@app.delete("/v1/agents/<agent_id>/memories")
def erase_user(
    agent_id: AgentPath,
    user_id: Annotated[UserId, Query(description="The end user whose memories are all forgotten.")],
) -> Response[EraseResponse]:
    """Right to erasure: forget every memory of one end user of the agent, summaries included."""
    caller = _caller(agent_id, FORGET_SCOPE)
    result = container.api_services().forget.erase_user(
        caller.tenant_id, agent_id, user_id, actor=caller.key_id
    )
    return _json(
        200,
        EraseResponse(
            user_id=user_id, forgotten=len(result.forgotten), stale_summaries=result.stale_summaries
        ),
    )


@app.get("/v1/agents/<agent_id>/audit")
def audit_trail(
    agent_id: AgentPath,
    record_id: Annotated[MemoryId | None, Query(description="Only this record's events.")] = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = 50,
) -> Response[AuditResponse]:
    """The agent's audit trail, newest first: forgets, erasures, and the summaries they re-made."""
    caller = _caller(agent_id)
    page = container.api_services().memories.audit(caller.tenant_id, agent_id, record_id, limit, cursor)
    return _json(200, page)


@app.get("/v1/agents/<agent_id>/stats")
def agent_stats(agent_id: AgentPath) -> Response[StatsResponse]:
    caller = _caller(agent_id)
    return _json(200, container.api_services().memories.stats(caller.tenant_id, agent_id))


@app.get("/v1/agents")
def list_agents(
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = 50,
) -> Response[AgentsResponse]:
    """The tenant's agents that have memories (the console's agent picker)."""
    caller = _caller()
    page = container.api_services().agents.list(caller.tenant_id, limit, cursor, only=caller.agents)
    return _json(200, page)


@app.get("/v1/agents/<agent_id>/timeline")
def agent_timeline(
    agent_id: AgentPath,
    since: Annotated[date | None, Query(description="First local day (default: 4 weeks to until).")] = None,
    until: Annotated[date | None, Query(description="Last local day, included (default: today).")] = None,
) -> Response[TimelineResponse]:
    """One lane per grain: working memories per local day, and each summary with what it folded."""
    caller = _caller(agent_id)
    return _json(200, container.api_services().timeline.timeline(caller.tenant_id, agent_id, since, until))


@app.get("/v1/agents/<agent_id>/periods/<grain>/<time_key>")
def agent_period(
    agent_id: AgentPath,
    grain: Annotated[Grain, Path(description="A summary grain: daily ... yearly.")],
    time_key: Annotated[str, Path(max_length=16, description="The period, e.g. 2026-11-20, 2026-W47.")],
) -> Response[PeriodResponse]:
    """One period: its summary, the children it folds, and the sources that are gone since."""
    caller = _caller(agent_id)
    period = container.api_services().timeline.period(caller.tenant_id, agent_id, grain, time_key)
    return _json(200, period)


@app.get("/v1/agents/<agent_id>/stats/searches")
def search_stats(
    agent_id: AgentPath,
    days: Annotated[int, Query(ge=1, le=MAX_SEARCH_STATS_DAYS)] = 30,
) -> Response[SearchStatsResponse]:
    """Searches per UTC day over the last ``days`` days, and how many found nothing."""
    caller = _caller(agent_id)
    return _json(200, container.api_services().search_stats.stats(caller.tenant_id, agent_id, days))


@app.get("/v1/topics")
def get_topics() -> Response[TopicDictionaryResponse]:
    """The tenant's topic dictionary: canonical terms and their synonyms (empty when it has none)."""
    caller = _caller()
    return _json(200, container.api_services().topics.get(caller.tenant_id))


@app.get("/v1/topics/proposals")
def topic_proposals(
    limit: Annotated[int, Query(ge=1, le=MAX_PROPOSALS_LIMIT)] = 100,
) -> Response[TopicProposalsResponse]:
    """Topics that writes named and the dictionary does not know, most named first: candidates
    for a canonical term or a synonym. Counted only while the tenant has a dictionary."""
    caller = _caller()
    return _json(200, container.api_services().topics.proposals(caller.tenant_id, limit))


@app.put("/v1/admin/topics")
def put_topics(body: TopicDictionaryBody) -> Response[TopicDictionaryResponse]:
    """Replace the tenant's topic dictionary (admin scope); ``{"terms": {}}`` removes it. Other
    warm functions see the change within the dictionary cache's TTL (60 s)."""
    caller = _caller(scope=ADMIN_SCOPE)
    return _json(200, container.api_services().topics.put(caller.tenant_id, body))


@app.post("/v1/admin/summarize", status_code=202)
def admin_summarize(body: SummarizeRequest) -> Response[SummarizeResponse]:
    """Summarize (or re-summarize) periods for every agent with activity in them (admin scope,
    checked by `_guard`): one job per agent-period is queued; 202 with how many."""
    return _json(202, container.dispatch_service().dispatch(body))


@app.post("/v1/admin/retention", status_code=202)
def admin_retention() -> Response[RetentionRunResponse]:
    """Run retention now for every tenant (admin scope, checked by `_guard`), as the daily
    schedule does; idempotent, so a run beside the scheduled one only finds less to do.
    Deployed, the run is handed to the retention function (its 15 minutes, not this one's 20 s)."""
    starter = container.retention_starter()
    if starter is not None:
        starter.start("admin")
        return _json(202, RetentionRunResponse(status="started"))
    report = RetentionResponse.model_validate(container.retention_service().run().as_dict())
    return _json(202, RetentionRunResponse(status="done", report=report))


# --- errors: one place turns every failure into the documented body --------------------------


def _error(status: int, code: str, message: str, details: list[ErrorDetail] | None = None) -> Response[Any]:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, details=details or []))
    return _json(status, body)


@app.exception_handler(RequestUnsupportedContentType)
def _unsupported_media_type(exc: RequestUnsupportedContentType) -> Response[Any]:
    return _error(415, "unsupported_media_type", "the request body must be application/json")


@app.exception_handler(RequestValidationError)
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


@app.exception_handler(ResponseValidationError)
def _invalid_response(exc: ResponseValidationError) -> Response[Any]:
    logger.error("response failed its own schema", extra={"errors": exc.errors()})
    return _error(500, "internal_error", "internal error")


@app.exception_handler(AgentMemoryError)
def _domain_error(exc: AgentMemoryError) -> Response[Any]:
    if exc.status >= 500:
        logger.exception("request failed", extra={"code": exc.code})
    details = [
        ErrorDetail(loc=list(d.get("loc", [])), msg=str(d.get("msg", "")), type=str(d.get("type", exc.code)))
        for d in exc.details
    ]
    return _error(exc.status, exc.code, exc.message, details)


@app.not_found
def _not_found(exc: Exception) -> Response[Any]:
    return _error(404, "not_found", "no such route")


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response[Any]:
    logger.exception("unhandled error")
    return _error(500, "internal_error", "internal error")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response = _unauthorized(event) or _not_json(event) or app.resolve(_as_json(event), context)
    return with_console_cors(response, event, get_settings().console_origin)


def _raw_error(status: int, code: str, message: str) -> dict[str, Any]:
    """The documented error body, for refusals made before the resolver runs."""
    body = ErrorResponse(error=ErrorBody(code=code, message=message))
    return {
        "statusCode": status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": body.model_dump_json(),
        "isBase64Encoded": False,
    }


def required_access(method: str, path: str) -> tuple[str, str | None] | None:
    """The scope (and agent) a request needs, from its method and path alone.

    Decided before anything reads the body or the query, so a caller that may not use a route
    gets a 403 (or 401) whatever it sent, never a 400 describing a contract it may not use. None:
    routes outside ``/v1/agents/{agent}`` and ``/v1/admin``, which check for themselves.
    """
    parts = path.strip("/").split("/")
    if parts[:2] == ["v1", "admin"]:
        return ADMIN_SCOPE, None
    if parts[:2] != ["v1", "agents"] or len(parts) < 3:
        return None
    agent = unquote(parts[2])
    if method == "DELETE":
        return FORGET_SCOPE, agent
    if method == "POST" and parts[3:] == ["memories"]:
        return WRITE_SCOPE, agent
    return READ_SCOPE, agent


def _unauthorized(event: dict[str, Any]) -> dict[str, Any] | None:
    access = required_access(str(event.get("httpMethod") or ""), str(event.get("path") or ""))
    if access is None:
        return None
    scope, agent = access
    try:
        caller = Caller.from_authorizer((event.get("requestContext") or {}).get("authorizer"))
        caller.require_scope(scope)
        if agent is not None:
            caller.require_agent(agent)
    except AgentMemoryError as exc:
        return _raw_error(exc.status, exc.code, exc.message)
    return None


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


@app.get("/v1/openapi.json")
def openapi_document() -> Response[dict[str, Any]]:
    """This API's OpenAPI document (also committed as docs/openapi.json). Any valid key may read
    it: every route, this one included, sits behind the key check."""
    Caller.from_authorizer((app.current_event.raw_event.get("requestContext") or {}).get("authorizer"))
    return Response(
        status_code=200, content_type=content_types.APPLICATION_JSON, body=json.loads(openapi_json())
    )


@cache
def openapi_json() -> str:
    """The API's OpenAPI document, generated from the same models the routes validate with."""
    from agent_memory.handlers import openapi

    return openapi.render(app)
