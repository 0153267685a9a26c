"""`ports.export_store.RecordExport` on OpenSearch: an export's records a page at a time (sorted by
agent, ``occurred_at`` and id, paged with ``search_after``), their count (``_count``), and the
audit trail of a page of records (one ``terms`` query on the events index, paged).

An agent's export is routed to the agent's shard; an end user's spans the tenant's agents, so it
is not routed (every shard answers), and the tenant is a ``term`` filter of every request, as in
every read of this store. ``occurred_at`` sorts by the millisecond: ties within one are ordered
by id, which is still one total order, so no page repeats or skips a record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_cursors import (
    decode_cursor,
    invalid_cursor,
    next_page_cursor,
)
from agent_memory.adapters.opensearch.opensearch_documents import to_record, ts
from agent_memory.adapters.opensearch.opensearch_events import AUDIT_OLDEST_FIRST, audit_event
from agent_memory.adapters.opensearch.opensearch_filters import paged_body, tenant_live_filters, term
from agent_memory.adapters.opensearch.opensearch_queries import records_page_body
from agent_memory.adapters.opensearch.opensearch_responses import hits_of
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditEvent, Page
from agent_memory.ports.export_store import ExportQuery

#: The walk's order: agent, then time, then id.
EXPORT_ORDER = [{"agent_id": {"order": "asc"}}, {"occurred_at": {"order": "asc"}}, {"id": {"order": "asc"}}]
#: Record ids per audit query, and events per page of its answer.
AUDIT_IDS = 500
AUDIT_PAGE = 1000


def export_filters(query: ExportQuery) -> list[dict[str, Any]]:
    """The filters of an export's records (`ExportQuery`)."""
    filters = tenant_live_filters(query.tenant_id, query.now)
    if query.agent_id is not None:
        filters.append(term("agent_id", query.agent_id))
    if query.user_id is not None:
        filters.append(term("user_id", query.user_id))
    if query.grains:
        filters.append({"terms": {"grain": sorted(Grain(g).value for g in query.grains)}})
    if query.end is not None:
        filters.append({"range": {"span_start": {"lte": ts(query.end)}}})
    if query.start is not None:
        filters.append({"range": {"span_end": {"gte": ts(query.start)}}})
    return filters


def export_binding(query: ExportQuery) -> dict[str, Any]:
    """What an export cursor is bound to: the query's tenant, subject, grains and window."""
    return {
        "k": "export",
        "t": query.tenant_id,
        "a": query.agent_id,
        "u": query.user_id,
        "g": sorted(Grain(g).value for g in query.grains) if query.grains else None,
        # the window ("s" is the position `next_page_cursor` adds)
        "w": [None if query.start is None else ts(query.start), None if query.end is None else ts(query.end)],
    }


def export_after(cursor: str, binding: dict[str, Any]) -> list[Any]:
    """The ``search_after`` of an export cursor: (agent id, ``occurred_at`` epoch ms, record id)."""
    after = decode_cursor(cursor, binding).get("s")
    if (
        not isinstance(after, list)
        or len(after) != 3
        or not isinstance(after[0], str)
        or not isinstance(after[1], int)
        or isinstance(after[1], bool)
        or not isinstance(after[2], str)
    ):
        raise invalid_cursor()
    return after


def audit_of_body(
    tenant_id: str, agent_id: str, record_ids: Sequence[str], after: list[Any] | None
) -> dict[str, Any]:
    """The agent's audit events about ``record_ids``, oldest first, one page."""
    filters = [
        term("doc_type", "audit"),
        term("tenant_id", tenant_id),
        term("agent_id", agent_id),
        {"terms": {"record_id": list(record_ids)}},
    ]
    return paged_body(AUDIT_PAGE, {"bool": {"filter": filters}}, AUDIT_OLDEST_FIRST, after)


class OpenSearchExport(OpenSearchBase):
    """`ports.export_store.RecordExport` (see the module docstring)."""

    def _export_route(self, query: ExportQuery) -> dict[str, str]:
        return {} if query.agent_id is None else self._route(query.tenant_id, query.agent_id)

    def export_records(self, query: ExportQuery) -> Page:
        if query.limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = export_binding(query)
        after = None if query.cursor is None else export_after(query.cursor, binding)
        body = records_page_body(export_filters(query), query.limit + 1, EXPORT_ORDER, after)
        hits = hits_of(self._search(body, "reading an export's records", **self._export_route(query)))
        page = hits[: query.limit]
        records = [to_record(h["_source"]) for h in page if h["_source"].get("tenant_id") == query.tenant_id]
        return Page(records=records, next_cursor=next_page_cursor(binding, hits, query.limit))

    def count_records(self, query: ExportQuery) -> int:
        body = {"query": {"bool": {"filter": export_filters(query)}}}
        with os_errors("counting an export's records", self.alias):
            response = self._client.count(index=self.alias, body=body, params=self._export_route(query))
        return int(response.get("count", 0))

    def audit_of_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> list[AuditEvent]:
        ids = list(dict.fromkeys(record_ids))
        events: list[AuditEvent] = []
        for i in range(0, len(ids), AUDIT_IDS):
            after: list[Any] | None = None
            while True:
                body = audit_of_body(tenant_id, agent_id, ids[i : i + AUDIT_IDS], after)
                what = "reading an export's audit trail"
                hits = hits_of(self._search_events(body, what, tenant_id, agent_id))
                events += [
                    audit_event(h["_source"])
                    for h in hits
                    if h["_source"].get("tenant_id") == tenant_id and h["_source"].get("agent_id") == agent_id
                ]
                if len(hits) < AUDIT_PAGE:
                    break
                after = hits[-1]["sort"]
        events.sort(key=lambda e: e.at)
        return events
