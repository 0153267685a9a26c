"""Operator actions of a tenant's admin (admin scope, checked by the API's guard before any route
runs): summarize periods now, run retention now, both for the caller's tenant only: an admin key
never starts work on, nor learns counts of, another tenant's memory. The schedules run them for
every tenant."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_memory import container
from agent_memory.contract.v1 import (
    RetentionResponse,
    RetentionRunResponse,
    SummarizeRequest,
    SummarizeResponse,
)
from agent_memory.domain.caller import ADMIN_SCOPE
from agent_memory.handlers.route_support import caller_of, json_response

router = Router()


@router.post("/v1/admin/summarize", status_code=202)
def admin_summarize(body: SummarizeRequest) -> Response[SummarizeResponse]:
    """Summarize (or re-summarize) periods for every agent of the caller's tenant with activity
    in them (admin scope, checked by `_guard`): one job per agent-period is queued; 202 with how
    many."""
    tenant = caller_of(router, scope=ADMIN_SCOPE).tenant_id
    report = container.dispatch_service().dispatch(body, tenant_id=tenant)
    return json_response(202, SummarizeResponse.model_validate(report, from_attributes=True))


@router.post("/v1/admin/retention", status_code=202)
def admin_retention() -> Response[RetentionRunResponse]:
    """Run retention now for the caller's tenant (admin scope, checked by `_guard`), as the daily
    schedule does; idempotent, so a run beside the scheduled one only finds less to do.
    Deployed, the run is handed to the retention function (its 15 minutes, not this one's 20 s)."""
    tenant = caller_of(router, scope=ADMIN_SCOPE).tenant_id
    starter = container.retention_starter()
    if starter is not None:
        starter.start("admin", [tenant])
        return json_response(202, RetentionRunResponse(status="started"))
    report = RetentionResponse.model_validate(container.retention_service().run([tenant]).as_dict())
    return json_response(202, RetentionRunResponse(status="done", report=report))
