"""Operator actions of a tenant's admin: summarize periods now, run retention now, both for the
caller's tenant only (an admin key never starts work on, nor learns counts of, another tenant's
memory; the schedules run them for every tenant); recognise patterns now; and read grants, which
other agents may read an agent's memory.

The scope and the agents each route may touch are in the route table, decided before any route
runs: a key bound to agents may not act on every agent, nor on another agent's read grants."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from agent_memory import container
from agent_memory.contract.v1 import (
    AuditResponse,
    ErrorResponse,
    RetentionResponse,
    RetentionRunResponse,
    SummarizeRequest,
    SummarizeResponse,
)
from agent_memory.contract.v1_experience import PatternRunRequest, PatternRunResponse
from agent_memory.contract.v1_grants import ReadersResponse, ReadGrantResponse
from agent_memory.contract.v1_settings import SettingsResponse, SettingsUpdate
from agent_memory.derived.rules.patterns import PatternReport
from agent_memory.handlers.route_support import AgentPath, CursorQuery, LimitQuery, caller_of, json_response
from agent_memory.model.types import AgentId

ReaderPath = Annotated[AgentId, Path(description="The agent that may read agent_id's memory.")]

router = Router()


@router.post("/v1/admin/summarize", status_code=202)
def admin_summarize(body: SummarizeRequest) -> Response[SummarizeResponse]:
    """Summarize (or re-summarize) periods for every agent of the caller's tenant with activity
    in them (admin scope, decided from the route table): one job per agent-period is queued; 202 with how
    many."""
    tenant = caller_of(router).tenant_id
    report = container.dispatch_service().dispatch(body, tenant_id=tenant)
    return json_response(202, SummarizeResponse.model_validate(report, from_attributes=True))


@router.post("/v1/admin/retention", status_code=202)
def admin_retention() -> Response[RetentionRunResponse]:
    """Run retention now for the caller's tenant (admin scope, decided from the route table), as the daily
    schedule does; idempotent, so a run beside the scheduled one only finds less to do.
    Deployed, the run is handed to the retention function (its 15 minutes, not this one's 20 s)."""
    tenant = caller_of(router).tenant_id
    starter = container.retention_starter()
    if starter is not None:
        starter.start("admin", [tenant])
        return json_response(202, RetentionRunResponse(status="started"))
    report = RetentionResponse.model_validate(container.retention_service().run([tenant]).as_dict())
    return json_response(202, RetentionRunResponse(status="done", report=report))


@router.post("/v1/admin/patterns", status_code=202)
def admin_patterns(body: PatternRunRequest) -> Response[PatternRunResponse]:
    """Recognise patterns now (admin scope): for one agent (``agent_id``) or every agent of the
    caller's tenant with memory in the pattern window, one job each on the job queue, as the
    daily schedule does; 202 with how many. Jobs are idempotent: a run beside the scheduled one
    changes nothing it would not."""
    caller = caller_of(router)
    dispatch = container.api_services().pattern_dispatch
    if body.agent_id is not None:
        queued = dispatch.queue_agent(caller.tenant_id, body.agent_id, "admin")
    else:
        queued = dispatch.dispatch(tenant_id=caller.tenant_id)
    return json_response(202, PatternRunResponse.of(PatternReport(queued=queued)))


@router.put("/v1/admin/agents/<agent_id>/readers/<reader_id>")
def grant_read(agent_id: AgentPath, reader_id: ReaderPath) -> Response[ReadGrantResponse]:
    """Let keys bound to ``reader_id`` read (search, get, list) ``agent_id``'s memory, never write
    or forget it; recorded in ``agent_id``'s audit trail. Effective when the key caches expire."""
    caller = caller_of(router)
    changed = container.api_services().read_grants.grant(caller, agent_id, reader_id)
    return json_response(
        200, ReadGrantResponse(agent_id=agent_id, reader_id=reader_id, granted=True, changed=changed)
    )


@router.delete("/v1/admin/agents/<agent_id>/readers/<reader_id>")
def revoke_read(agent_id: AgentPath, reader_id: ReaderPath) -> Response[ReadGrantResponse]:
    """Take back ``reader_id``'s read access to ``agent_id``'s memory (in the audit trail too)."""
    caller = caller_of(router)
    changed = container.api_services().read_grants.revoke(caller, agent_id, reader_id)
    return json_response(
        200, ReadGrantResponse(agent_id=agent_id, reader_id=reader_id, granted=False, changed=changed)
    )


@router.get("/v1/admin/agents/<agent_id>/readers")
def list_readers(agent_id: AgentPath) -> Response[ReadersResponse]:
    """The agents granted read access to ``agent_id``'s memory."""
    caller = caller_of(router)
    readers = container.api_services().read_grants.readers(caller.tenant_id, agent_id)
    return json_response(200, ReadersResponse(agent_id=agent_id, readers=readers))


@router.get("/v1/admin/settings")
def admin_settings() -> Response[SettingsResponse]:
    """The caller's tenant's settings (admin scope): models, retention within the plan, TTLs by
    kind, the per-agent bound, ranking defaults, merging; of the provider key only its last four
    characters and when it was set."""
    caller = caller_of(router)
    return json_response(200, SettingsResponse.of(container.api_services().tenant_settings.view(caller)))


@router.get("/v1/admin/settings/history")
def admin_settings_history(cursor: CursorQuery = None, limit: LimitQuery = 50) -> Response[AuditResponse]:
    """The caller's tenant's settings changes, newest first (admin scope): each one's key id, time,
    the fields it changed before and after, and whether it set or cleared the provider key."""
    caller = caller_of(router)
    page = container.api_services().tenant_settings.history(caller, limit, cursor)
    return json_response(200, AuditResponse.of(page))


@router.put(
    "/v1/admin/settings",
    responses={
        200: {
            "description": "Stored: the new settings.",
            "content": {"application/json": {"model": SettingsResponse}},
        },
        409: {
            "description": "The settings changed since the version given was read: read them again.",
            "content": {"application/json": {"model": ErrorResponse}},
        },
    },
)
def admin_put_settings(body: SettingsUpdate) -> Response[SettingsResponse]:
    """Replace the caller's tenant's settings (admin scope), naming the version read (409 when
    another change came first); set or clear its provider key. Audited, the key never."""
    caller = caller_of(router)
    key = body.provider_key.get_secret_value() if body.provider_key is not None else None
    view = container.api_services().tenant_settings.update(
        caller, body.settings, body.version, provider_key=key, clear_provider_key=body.clear_provider_key
    )
    return json_response(200, SettingsResponse.of(view))
