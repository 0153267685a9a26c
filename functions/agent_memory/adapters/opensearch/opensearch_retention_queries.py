"""The request bodies and parameters of retention: what it reads, and what it deletes.

Retention reads and deletes across every agent of a tenant, so none of these requests is
routed: they reach every shard. Deletes are ``_delete_by_query`` in parallel slices. Pure
functions, apart from the store's I/O, so the shapes can be tested without a cluster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.adapters.opensearch.opensearch_filters import ended_before, paged_body, term
from agent_memory.adapters.opensearch.opensearch_queries import NO_VECTOR
from agent_memory.model.grains import Grain

#: Documents per page of what retention reads (the expired records it audits) and per ``_bulk``
#: of deletes by id.
DELETE_PAGE = 1000
#: Seconds a maintenance call (retention) may wait for the cluster, beyond the client timeout.
MAINTENANCE_TIMEOUT_S = 300


def candidates_body(tenant_id: str, grain: Grain, cutoff: datetime, limit: int) -> dict[str, Any]:
    """The tenant's ``grain`` records ending before ``cutoff``, sorted by (span end, id, agent):
    the first page (the next ones add the last hit's sort values as ``search_after``)."""
    return {
        "size": limit,
        "_source": NO_VECTOR,
        "query": {"bool": {"filter": ended_before(tenant_id, grain, cutoff)}},
        "sort": [
            {"span_end": {"order": "asc"}},
            {"id": {"order": "asc"}},
            {"agent_id": {"order": "asc"}},
        ],
    }


def older_than_query(tenant_id: str, grain: Grain, cutoff: datetime) -> dict[str, Any]:
    """`delete_older_than`'s records: the tenant's ``grain`` records ending before ``cutoff``."""
    return {"bool": {"filter": ended_before(tenant_id, grain, cutoff)}}


def purge_query(tenant_id: str, now: datetime, forgotten_before: datetime) -> dict[str, Any]:
    """The tenant's records expired at ``now`` or forgotten before ``forgotten_before``."""
    return {
        "bool": {
            "filter": [term("tenant_id", tenant_id)],
            "should": [
                {"range": {"expires_at": {"lte": ts(now)}}},
                {"range": {"deleted_at": {"lt": ts(forgotten_before)}}},
            ],
            "minimum_should_match": 1,
        }
    }


def delete_by_query_params(refresh: bool) -> dict[str, Any]:
    """Parallel slices (``slices=auto``: one per shard), waiting for the result, skipping
    documents that changed meanwhile (``conflicts=proceed``: the next run takes them)."""
    params: dict[str, Any] = {
        "slices": "auto",
        "conflicts": "proceed",
        "wait_for_completion": "true",
        "request_timeout": MAINTENANCE_TIMEOUT_S,
    }
    if refresh:
        params["refresh"] = "true"  # delete-by-query takes true/false only
    return params


def expired_page_body(tenant_id: str, now: datetime, after: list[Any] | None) -> dict[str, Any]:
    """One page of the tenant's live records expired at ``now`` (id and agent only): the ones
    `purge` audits before it deletes them."""
    query = {
        "bool": {
            "filter": [term("tenant_id", tenant_id), {"range": {"expires_at": {"lte": ts(now)}}}],
            "must_not": [{"exists": {"field": "deleted_at"}}],
        }
    }
    by_id = [{"id": {"order": "asc"}}, {"agent_id": {"order": "asc"}}]
    return paged_body(DELETE_PAGE, query, by_id, after, source=["id", "agent_id"])
