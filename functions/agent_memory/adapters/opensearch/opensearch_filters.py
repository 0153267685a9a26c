"""The filters of the store's queries: whose records, which are live, which match a query.

Apart from the request bodies because the same filter list goes into several requests (the k-NN
clause and the BM25 query of one search, the pages of one listing), and apart from the I/O so
tests can read them. Routing is placement, not security: every query *also* filters
``tenant_id`` and ``agent_id`` terms. OpenSearch ``date`` fields index milliseconds, so these
filters compare at millisecond precision (`opensearch_documents.ts` writes microseconds).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.ports import Neighbourhood, StoreQuery

#: Words of a lexical query that are searched (as in the SQLite store).
MAX_QUERY_WORDS = 64
_WORD = re.compile(r"\w+")


def paged_body(
    size: int,
    query: dict[str, Any],
    sort: list[dict[str, Any]],
    after: list[Any] | None,
    source: Any = None,
) -> dict[str, Any]:
    """One page of a sorted search: ``size`` hits of ``query`` in ``sort`` order, after ``after``
    (the previous page's last sort values; None on the first page), with ``source`` as its
    ``_source`` when given. One shape for every listing the store pages with ``search_after``
    (records, audit events, expired records), so a page is asked for alike everywhere."""
    body: dict[str, Any] = {"size": size}
    if source is not None:
        body["_source"] = source
    body["query"] = query
    body["sort"] = sort
    if after is not None:
        body["search_after"] = after
    return body


def term(field: str, value: str) -> dict[str, Any]:
    return {"term": {field: value}}


def absent(field: str) -> dict[str, Any]:
    """The field has no value."""
    return {"bool": {"must_not": [{"exists": {"field": field}}]}}


def not_deleted() -> dict[str, Any]:
    return absent("deleted_at")


def neighbourhood_filters(within: Neighbourhood) -> list[dict[str, Any]]:
    """`Neighbourhood` as filters: a field equal to a value, or absent when the value is None."""
    filters: list[dict[str, Any]] = []
    for wanted, name, value in (
        (within.match_user, "user_id", within.user_id),
        (within.match_conversation, "conversation_id", within.conversation_id),
    ):
        if wanted and value is not None:
            filters.append(term(name, value))
        elif wanted:
            filters.append(absent(name))
    bounds: dict[str, Any] = {}
    if within.since is not None:
        bounds["gte"] = ts(within.since)
    if within.until is not None:
        bounds["lt"] = ts(within.until)
    if bounds:
        filters.append({"range": {"occurred_at": bounds}})
    return filters


def live_filters(tenant_id: str, agent_id: str, now: datetime) -> list[dict[str, Any]]:
    """The caller's records that are neither forgotten nor expired at ``now``."""
    tenant, *rest = tenant_live_filters(tenant_id, now)
    return [tenant, term("agent_id", agent_id), *rest]


def tenant_live_filters(tenant_id: str, now: datetime) -> list[dict[str, Any]]:
    """The tenant's records, of every agent, that are neither forgotten nor expired at ``now``."""
    return [
        term("tenant_id", tenant_id),
        not_deleted(),
        {
            "bool": {
                "should": [
                    absent("expires_at"),
                    {"range": {"expires_at": {"gt": ts(now)}}},
                ],
                "minimum_should_match": 1,
            }
        },
    ]


def query_filters(query: StoreQuery) -> list[dict[str, Any]]:
    """Every filter of a `StoreQuery`; the same list goes into the k-NN and the BM25 request."""
    filters = live_filters(query.tenant_id, query.agent_id, query.now)
    if query.grains:
        filters.append({"terms": {"grain": [Grain(g).value for g in query.grains]}})
    if query.end is not None:
        filters.append({"range": {"span_start": {"lte": ts(query.end)}}})
    if query.start is not None:
        filters.append({"range": {"span_end": {"gte": ts(query.start)}}})
    if query.kinds:
        filters.append({"terms": {"kind": [MemoryKind(k).value for k in query.kinds]}})
    if query.min_confidence is not None:  # only experiences have one: the rest never pass
        filters.append({"range": {"experience.confidence": {"gte": float(query.min_confidence)}}})
    if query.tags:
        filters.append({"terms": {"tags": list(query.tags)}})  # any of the tags
    if query.user_id is not None:
        filters.append(term("user_id", query.user_id))
    return filters


def overlapping(start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Records whose span overlaps ``[start, end)``."""
    return [
        {"range": {"span_start": {"lt": ts(end)}}},
        {"range": {"span_end": {"gte": ts(start)}}},
    ]


def ended_before(tenant_id: str, grain: Grain, cutoff: datetime) -> list[dict[str, Any]]:
    """The tenant's ``grain`` records, of every agent, whose span ended before ``cutoff``."""
    return [
        term("tenant_id", tenant_id),
        term("grain", Grain(grain).value),
        {"range": {"span_end": {"lt": ts(cutoff)}}},
    ]


def query_words(text: str | None) -> str | None:
    """The distinct words of ``text`` (at most `MAX_QUERY_WORDS`), or None when it has none."""
    if not text:
        return None
    words: dict[str, None] = {}
    for word in _WORD.findall(text):
        words.setdefault(word.lower(), None)
        if len(words) >= MAX_QUERY_WORDS:
            break
    return " ".join(words) or None
