"""Routes of one agent's memories: write, read, list, forget, erase, the audit trail, counts.

Each route validates with the contract, calls one use case with domain values, and maps the
answer back to the contract (`contract/v1.py`); the route table (`handlers/routes.py`) says
which function serves them.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from agent_memory import container
from agent_memory.contract.v1 import (
    AuditResponse,
    EraseResponse,
    ForgetResponse,
    ListResponse,
    MemoryOut,
    StatsResponse,
    WriteRequest,
    WriteResponse,
)
from agent_memory.contract.v1_experience import FeedbackRequest, FeedbackResponse
from agent_memory.contract.v1_history import MemoryHistoryResponse, MemoryVersionOut, RestoreResponse
from agent_memory.handlers.route_support import AgentPath, CursorQuery, LimitQuery, caller_of, json_response
from agent_memory.model.grains import Grain
from agent_memory.model.types import MemoryId, UserId

router = Router()

MemoryPath = Annotated[MemoryId, Path(description="A memory id as returned on write.")]
IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=r"^[!-~]{1,255}$",
        description="Makes any retry safe: the same key and request get the first answer again (24 h); "
        "the same key with another request is a 409.",
    ),
]


@router.post("/v1/agents/<agent_id>/memories", status_code=202)
def write_memories(
    agent_id: AgentPath, body: WriteRequest, idempotency_key: IdempotencyKeyHeader = None
) -> Response[WriteResponse]:
    caller = caller_of(router)
    redact = container.api_services().redaction.for_tenant(caller.tenant_id)
    if redact is not None:  # before anything is queued, fingerprinted or logged
        body = body.redacted(redact)
    done = container.api_services().idempotent_write.accept(
        caller, agent_id, body.to_new_memories(), idempotency_key, body.fingerprint(agent_id)
    )
    response = json_response(202, WriteResponse.of(done.ids))
    if done.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@router.get("/v1/agents/<agent_id>/memories/<memory_id>")
def get_memory(agent_id: AgentPath, memory_id: MemoryPath) -> Response[MemoryOut]:
    caller = caller_of(router)
    return json_response(
        200, MemoryOut.of(container.api_services().memories.get(caller.tenant_id, agent_id, memory_id))
    )


@router.post("/v1/agents/<agent_id>/memories/<memory_id>/feedback", status_code=202)
def memory_feedback(
    agent_id: AgentPath, memory_id: MemoryPath, body: FeedbackRequest
) -> Response[FeedbackResponse]:
    """Report what happened when the agent used an experience: its confidence moves by the rule
    in docs/api.md (counted by the writer in order with the agent's writes; in the audit trail)."""
    caller = caller_of(router)
    redact = container.api_services().redaction.for_tenant(caller.tenant_id)
    note = redact(body.note) if redact is not None and body.note else body.note
    feedback_id = container.api_services().feedback.accept(caller, agent_id, memory_id, body.outcome, note)
    return json_response(202, FeedbackResponse(id=memory_id, feedback_id=feedback_id, outcome=body.outcome))


@router.get("/v1/agents/<agent_id>/memories/<memory_id>/history")
def memory_history(agent_id: AgentPath, memory_id: MemoryPath) -> Response[MemoryHistoryResponse]:
    """Every change to the memory as a version, oldest first, with who or what made it."""
    caller = caller_of(router)
    record, versions = container.api_services().history.history(caller.tenant_id, agent_id, memory_id)
    return json_response(200, MemoryHistoryResponse.of(record, versions))


@router.post("/v1/agents/<agent_id>/memories/<memory_id>/history/<version>/restore")
def restore_memory_version(
    agent_id: AgentPath,
    memory_id: MemoryPath,
    version: Annotated[int, Path(ge=1, le=1_000_000, description="The version to bring back.")],
) -> Response[RestoreResponse]:
    """An admin brings a version back (what it said, whether it held); in the audit trail."""
    caller = caller_of(router)
    history = container.api_services().history
    made = history.restore(caller.tenant_id, agent_id, memory_id, version, actor=caller.key_id)
    return json_response(
        200,
        RestoreResponse(
            id=memory_id,
            restored=version,
            version=MemoryVersionOut.of(made.version),
            text_pending=made.text_pending,
        ),
    )


@router.get("/v1/agents/<agent_id>/memories")
def list_memories(
    agent_id: AgentPath,
    grain: Annotated[Grain | None, Query()] = None,
    cursor: CursorQuery = None,
    limit: LimitQuery = 50,
) -> Response[ListResponse]:
    caller = caller_of(router)
    page = container.api_services().memories.list(caller.tenant_id, agent_id, grain, limit, cursor)
    return json_response(200, ListResponse.of(page))


@router.delete("/v1/agents/<agent_id>/memories/<memory_id>")
def forget_memory(agent_id: AgentPath, memory_id: MemoryPath) -> Response[ForgetResponse]:
    """Forget one memory at once; the summaries made from it are hidden and re-made without it."""
    caller = caller_of(router)
    result = container.api_services().forget.forget(
        caller.tenant_id, agent_id, memory_id, actor=caller.key_id
    )
    return json_response(200, ForgetResponse(id=memory_id, stale_summaries=result.stale_summaries))


@router.delete("/v1/agents/<agent_id>/memories")
def erase_user(
    agent_id: AgentPath,
    user_id: Annotated[UserId, Query(description="The end user whose memories are all forgotten.")],
) -> Response[EraseResponse]:
    """Right to erasure: forget every memory of one end user of the agent, summaries included."""
    caller = caller_of(router)
    result = container.api_services().forget.erase_user(
        caller.tenant_id, agent_id, user_id, actor=caller.key_id
    )
    return json_response(
        200,
        EraseResponse(
            user_id=user_id, forgotten=len(result.forgotten), stale_summaries=result.stale_summaries
        ),
    )


@router.get("/v1/agents/<agent_id>/audit")
def audit_trail(
    agent_id: AgentPath,
    record_id: Annotated[MemoryId | None, Query(description="Only this record's events.")] = None,
    cursor: CursorQuery = None,
    limit: LimitQuery = 50,
) -> Response[AuditResponse]:
    """The agent's audit trail, newest first: forgets, erasures, and the summaries they re-made."""
    caller = caller_of(router)
    page = container.api_services().memories.audit(caller.tenant_id, agent_id, record_id, limit, cursor)
    return json_response(200, AuditResponse.of(page))


@router.get("/v1/agents/<agent_id>/stats")
def agent_stats(agent_id: AgentPath) -> Response[StatsResponse]:
    caller = caller_of(router)
    stats = container.api_services().memories.stats(caller.tenant_id, agent_id)
    return json_response(200, StatsResponse.model_validate(stats, from_attributes=True))
