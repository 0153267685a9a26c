"""What every router of the HTTP API needs: the caller, from the authorizer's context, and a
typed JSON response.

The caller is never read from the body or the query: tenant, key, scopes and bound agents come
only from what the authorizer put in the request context (`handlers.authorizer`).
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel

from agent_memory.errors import ForbiddenError
from agent_memory.model.caller import Caller
from agent_memory.model.limits import MAX_LIST_LIMIT
from agent_memory.model.types import AgentId
from agent_memory.observability import logger

#: The authorizer-context key naming the route table's route a request was authorized for.
AUTHORIZED_ROUTE = "authorized_route"
#: The agent path parameter of every per-agent route.
AgentPath = Annotated[AgentId, Path(description="The agent whose memory this is.")]
#: The paging parameters of every listing route: one definition, so the pages' bounds agree.
CursorQuery = Annotated[str | None, Query(max_length=1024)]
LimitQuery = Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)]


def caller_of(router: BaseRouter) -> Caller:
    """The caller of the request ``router`` is answering. Whether it may use the route (its
    scope, its agents) was decided before the route ran, once for every route, from the route
    table (`handlers.api.authorize`): no route decides for itself."""
    context = (router.current_event.raw_event.get("requestContext") or {}).get("authorizer")
    caller = Caller.from_authorizer(context)
    if not (context or {}).get(AUTHORIZED_ROUTE):  # served without the table's rule: never
        raise ForbiddenError("no authorization rule covers this request")
    logger.append_keys(tenant_id=caller.tenant_id, key_id=caller.key_id)
    return caller


def json_response(status: int, model: BaseModel) -> Response[Any]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=model)
