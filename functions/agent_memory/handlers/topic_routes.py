"""The tenant's topic dictionary: read it, see the topics writes named that it does not know, and
replace it (admin scope)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from agent_memory import container
from agent_memory.contract.v1 import TopicDictionaryBody, TopicDictionaryResponse, TopicProposalsResponse
from agent_memory.handlers.route_support import caller_of, json_response
from agent_memory.knowledge.rules.topic_dictionary import MAX_PROPOSALS_LIMIT

router = Router()


@router.get("/v1/topics")
def get_topics() -> Response[TopicDictionaryResponse]:
    """The tenant's topic dictionary: canonical terms and their synonyms (empty when it has none)."""
    caller = caller_of(router)
    return json_response(
        200, TopicDictionaryResponse.of(container.api_services().topics.get(caller.tenant_id))
    )


@router.get("/v1/topics/proposals")
def topic_proposals(
    limit: Annotated[int, Query(ge=1, le=MAX_PROPOSALS_LIMIT)] = 100,
) -> Response[TopicProposalsResponse]:
    """Topics that writes named and the dictionary does not know, most named first: candidates
    for a canonical term or a synonym. Counted only while the tenant has a dictionary."""
    caller = caller_of(router)
    proposals = container.api_services().topics.proposals(caller.tenant_id, limit)
    return json_response(200, TopicProposalsResponse.of(proposals))


@router.put("/v1/admin/topics")
def put_topics(body: TopicDictionaryBody) -> Response[TopicDictionaryResponse]:
    """Replace the tenant's topic dictionary (admin scope); ``{"terms": {}}`` removes it. Other
    warm functions see the change within the dictionary cache's TTL (60 s)."""
    caller = caller_of(router)
    stored = container.api_services().topics.put(caller.tenant_id, body.terms)
    return json_response(200, TopicDictionaryResponse.of(stored))
