"""Routes that recall: search, and a context block for a prompt. They embed a query, so the
route table (`handlers/routes.py`) gives them to the Search function (more memory, its own
concurrency and latency)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_memory import container
from agent_memory.contract.v1 import ContextRequest, ContextResponse, SearchRequest, SearchResponse
from agent_memory.handlers.route_support import AgentPath, caller_of, json_response

router = Router()


@router.post("/v1/agents/<agent_id>/memories/search")
def search_memories(agent_id: AgentPath, body: SearchRequest) -> Response[SearchResponse]:
    caller = caller_of(router)
    hits = container.api_services().search.search(caller.tenant_id, agent_id, body.to_query())
    return json_response(200, SearchResponse.of(hits))


@router.post("/v1/agents/<agent_id>/context")
def recall_context(agent_id: AgentPath, body: ContextRequest) -> Response[ContextResponse]:
    """One block of prompt context: the most relevant memories and summaries, dated and tagged with
    their grain, packed to ``token_budget`` (least relevant dropped first)."""
    caller = caller_of(router)
    context = container.api_services().context.context(caller.tenant_id, agent_id, body.to_query())
    return json_response(200, ContextResponse.of(context))
