"""The operator's view of a tenant's agents: which agents have memory, an agent's timeline, one
period opened up, and how its searches went (the console reads these)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from agent_memory import container
from agent_memory.contract.v1 import AgentsResponse, PeriodResponse, SearchStatsResponse, TimelineResponse
from agent_memory.handlers.route_support import AgentPath, CursorQuery, LimitQuery, caller_of, json_response
from agent_memory.model.grains import Grain
from agent_memory.recall.search_stats import MAX_SEARCH_STATS_DAYS

router = Router()


@router.get("/v1/agents")
def list_agents(
    cursor: CursorQuery = None,
    limit: LimitQuery = 50,
) -> Response[AgentsResponse]:
    """The tenant's agents that have memories (the console's agent picker)."""
    caller = caller_of(router)
    page = container.api_services().agents.list(caller.tenant_id, limit, cursor, only=caller.agents)
    return json_response(200, AgentsResponse.of(page))


@router.get("/v1/agents/<agent_id>/timeline")
def agent_timeline(
    agent_id: AgentPath,
    since: Annotated[date | None, Query(description="First local day (default: 4 weeks to until).")] = None,
    until: Annotated[date | None, Query(description="Last local day, included (default: today).")] = None,
) -> Response[TimelineResponse]:
    """One lane per grain: working memories per local day, and each summary with what it folded."""
    caller = caller_of(router)
    timeline = container.api_services().timeline.timeline(caller.tenant_id, agent_id, since, until)
    return json_response(200, TimelineResponse.model_validate(timeline, from_attributes=True))


@router.get("/v1/agents/<agent_id>/periods/<grain>/<time_key>")
def agent_period(
    agent_id: AgentPath,
    grain: Annotated[Grain, Path(description="A summary grain: daily ... yearly.")],
    time_key: Annotated[str, Path(max_length=16, description="The period, e.g. 2026-11-20, 2026-W47.")],
) -> Response[PeriodResponse]:
    """One period: its summary, the children it folds, and the sources that are gone since."""
    caller = caller_of(router)
    period = container.api_services().timeline.period(caller.tenant_id, agent_id, grain, time_key)
    return json_response(200, PeriodResponse.of(period))


@router.get("/v1/agents/<agent_id>/stats/searches")
def search_stats(
    agent_id: AgentPath,
    days: Annotated[int, Query(ge=1, le=MAX_SEARCH_STATS_DAYS)] = 30,
) -> Response[SearchStatsResponse]:
    """Searches per UTC day over the last ``days`` days, and how many found nothing."""
    caller = caller_of(router)
    activity = container.api_services().search_stats.stats(caller.tenant_id, agent_id, days)
    return json_response(200, SearchStatsResponse.of(activity))
