"""Exports (admin scope, decided from the route table before any route runs; a key bound to
agents exports only one of them): start an export of one end user's or one agent's memory,
follow its progress, fetch the file.

Every route takes the tenant from the caller's key alone: an export id of another tenant is not
found, exactly as an id that exists nowhere. The file is fetched where the deployment keeps it:
a pre-signed S3 URL (the download route redirects to it), or, on the local runtime, the download
route itself, which the local server answers by streaming the file (`FILE_HEADER`).
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from agent_memory import container
from agent_memory.contract.v1 import ErrorResponse
from agent_memory.contract.v1_exports import ExportOut, ExportRequest, ExportsResponse
from agent_memory.governance.rules.export_jobs import EXPORT_ID_PATTERN, ExportState
from agent_memory.handlers.route_support import caller_of, json_response

router = Router()

ExportPath = Annotated[str, Path(pattern=EXPORT_ID_PATTERN, description="An export id as returned on start.")]
#: The response header by which the download route hands a local file to the local server, which
#: streams it and never passes the header on (API Gateway never sees it: deployed, the route
#: redirects to S3).
FILE_HEADER = "X-Agent-Memory-File"
DOWNLOAD = "/v1/admin/exports/{export_id}/download"


@router.post("/v1/admin/exports", status_code=202)
def start_export(body: ExportRequest) -> Response[ExportOut]:
    """Start exporting one end user's memory (every agent of the tenant) or one agent's, as JSON
    Lines: every live memory with its metadata and versions, the summaries that hold it, the
    audit events about it. 202 with the export's id; follow it with `GET .../exports/{id}`."""
    caller = caller_of(router)
    state = container.export_service().start(caller, body.to_scope())
    return json_response(202, ExportOut.of(state))


@router.get("/v1/admin/exports")
def list_exports(limit: Annotated[int, Query(ge=1, le=100)] = 20) -> Response[ExportsResponse]:
    """The tenant's exports, newest first, with their progress."""
    caller = caller_of(router)
    states = container.export_service().recent(caller, limit)
    return json_response(200, ExportsResponse(items=[_out(s) for s in states]))


@router.get("/v1/admin/exports/<export_id>")
def get_export(export_id: ExportPath) -> Response[ExportOut]:
    """An export's progress and, when done, where to fetch it."""
    caller = caller_of(router)
    return json_response(200, _out(container.export_service().get(caller, export_id), with_link=True))


@router.get(
    "/v1/admin/exports/<export_id>/download",
    responses={
        200: {
            "description": "The export file, JSON Lines (the local runtime).",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        },
        303: {"description": "Deployed: the file's pre-signed URL in `Location` (fetch it without the key)."},
        409: {
            "description": "The export is not done yet.",
            "content": {"application/json": {"model": ErrorResponse}},
        },
    },
)
def download_export(export_id: ExportPath) -> Response[Any]:
    """The finished export's file: streamed by the local runtime, or a redirect to its pre-signed
    S3 URL; 409 while it is not done."""
    caller = caller_of(router)
    location = container.export_service().location(caller, export_id)
    if location.url is not None:
        return Response(status_code=303, headers={"Location": location.url}, body="")
    headers = {
        FILE_HEADER: str(location.path),
        "Content-Disposition": f'attachment; filename="{export_id}.jsonl"',
    }
    return Response(status_code=200, content_type="application/x-ndjson", headers=headers, body="")


def _out(state: ExportState, with_link: bool = False) -> ExportOut:
    """The contract's view; a done export's link (a pre-signed URL is made only when asked for)."""
    if state.status != "done":
        return ExportOut.of(state)
    if not with_link:
        return ExportOut.of(state, DOWNLOAD.format(export_id=state.id))
    location = container.export_service().location_of(state)
    if location is None or location.url is None:
        return ExportOut.of(state, DOWNLOAD.format(export_id=state.id))
    return ExportOut.of(state, location.url, location.expires_at)
