"""`agent_memory.ports.AgentDirectory` on OpenSearch: which agents have memory, and how much.

Its own module because these are the store's aggregations, not record reads: ``composite``
aggregations over agent ids, paged with ``after_key`` (never loading every agent at once), and a
``range`` aggregation per period; the bodies are built in `opensearch_queries`. The agents'
listings are not routed: an agent's memory lives on its own shard, and they read them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_cursors import agent_after, agents_after_key, encode_cursor
from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.adapters.opensearch.opensearch_queries import (
    agents_with_records_body,
    histogram_body,
    list_agents_body,
)
from agent_memory.adapters.opensearch.opensearch_responses import aggregation
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AgentPage, AgentRef, PeriodScan


class OpenSearchDirectory(OpenSearchBase):
    """`agent_memory.ports.AgentDirectory` (see the module docstring)."""

    def agents_with_records(self, scan: PeriodScan) -> AgentPage:
        """Every (tenant, agent) with records of the scan's grain overlapping its period, not forgotten.

        A ``composite`` aggregation over (tenant_id, agent_id) terms: pages in key order with
        ``after_key``, never loading every agent at once. No routing: it reads every shard.
        Expiry is not applied (the port passes no clock); an expired record at most schedules a
        summary that finds nothing to fold.
        """
        if scan.page_size < 1:
            raise ValidationFailedError("page_size must be at least 1")
        binding = {
            "g": Grain(scan.grain).value,
            "from": ts(scan.start),
            "to": ts(scan.end),
            "tn": scan.tenant_id,
        }
        after = None if scan.cursor is None else agents_after_key(scan.cursor, binding)
        body = agents_with_records_body(
            scan.grain, scan.start, scan.end, scan.page_size, after, scan.tenant_id
        )
        agg = aggregation(self._search(body, "listing agents with records"), "agents")
        buckets = agg.get("buckets", [])
        agents = [AgentRef(tenant_id=b["key"]["tenant_id"], agent_id=b["key"]["agent_id"]) for b in buckets]
        after_key = agg.get("after_key")
        next_cursor = (
            encode_cursor({**binding, "k": after_key})
            if after_key and len(buckets) == scan.page_size
            else None
        )
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents with live records: a ``composite`` aggregation over ``agent_id``
        terms, filtered by tenant, paged with ``after_key``. Not routed: agents live on
        different shards."""
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = {"t": tenant_id, "k": "agents"}
        after = None if cursor is None else agent_after(cursor, binding)
        body = list_agents_body(tenant_id, now, limit, after)
        agg = aggregation(self._search(body, "listing a tenant's agents"), "agents")
        buckets = agg.get("buckets", [])
        agents = [AgentRef(tenant_id=tenant_id, agent_id=str(b["key"]["agent_id"])) for b in buckets]
        after_key = agg.get("after_key")
        next_cursor = (
            encode_cursor({**binding, "a": after_key["agent_id"]})
            if after_key and len(buckets) == limit
            else None
        )
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> list[int]:
        """One routed request: a ``range`` aggregation on ``occurred_at`` with one range per
        period (``from`` inclusive, ``to`` exclusive), buckets in the order asked."""
        if len(edges) < 2:
            return []
        if any(b <= a for a, b in pairwise(edges)):
            raise ValidationFailedError("histogram edges must be strictly ascending")
        body = histogram_body(tenant_id, agent_id, grain, edges, now)
        response = self._search(body, "counting records per period", **self._route(tenant_id, agent_id))
        buckets = aggregation(response, "periods").get("buckets", [])
        counts = [int(b.get("doc_count", 0)) for b in buckets]
        if len(counts) != len(edges) - 1:
            raise DependencyError(f"OpenSearch answered {len(counts)} periods for {len(edges) - 1} asked")
        return counts
