"""The search bodies of the records index: reads, k-NN and BM25 retrieval, the operator's counts.

Pure functions, apart from the store's I/O, so each request shape (docs/opensearch.md) can be
built and pinned by a test without a cluster; the store methods send what these return.

* **k-NN with efficient filtering.** The filters go *inside* the ``knn`` clause, so the engine
  applies them during the graph search and a filtered query still returns ``k`` hits (a
  ``bool`` post-filter around ``knn`` could return fewer, or none).
* **Lexical** is a BM25 ``multi_match`` over `LEXICAL_FIELDS` with the same filters as the k-NN
  query; the query is the text's distinct lower-cased words (`opensearch_filters.query_words`),
  never query syntax.
* Record reads never return the vector (``_source`` excludes it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_documents import ts, vector_json
from agent_memory.adapters.opensearch.opensearch_filters import (
    live_filters,
    neighbourhood_filters,
    not_deleted,
    overlapping,
    paged_body,
    tenant_live_filters,
    term,
)
from agent_memory.adapters.opensearch.opensearch_index import LEXICAL_FIELD, VECTOR_FIELD
from agent_memory.model.grains import Grain
from agent_memory.ports import Neighbourhood

#: Candidates the graph search keeps for the dedup neighbour: the lucene engine sets its search
#: beam to ``k``, so ``k=1`` would make the nearest neighbour a poor guess.
NEAREST_K = 10
#: The text field of a record's lexical search: its words, its topic, who said it and the
#: speaker-labelled turns around it, copied into one field at index time
#: (`opensearch_index.LEXICAL_FIELD`), so BM25 scores them as one text, as SQLite's FTS5 does.
LEXICAL_FIELDS = (LEXICAL_FIELD,)
NO_VECTOR = {"excludes": [VECTOR_FIELD, "spaces"]}
NEWEST_FIRST = [{"occurred_at": {"order": "desc"}}, {"id": {"order": "desc"}}]
OLDEST_FIRST = [{"occurred_at": {"order": "asc"}}, {"id": {"order": "asc"}}]


def records_page_body(
    filters: list[dict[str, Any]], size: int, sort: list[dict[str, Any]], after: list[Any] | None = None
) -> dict[str, Any]:
    """One page of records (without their vectors) matching ``filters``, after ``after``."""
    return paged_body(size, {"bool": {"filter": filters}}, sort, after, source=NO_VECTOR)


def knn_body(
    vector: npt.NDArray[np.float32], k: int, filters: list[dict[str, Any]], field: str = VECTOR_FIELD
) -> dict[str, Any]:
    """Efficient filtering: the filter is *inside* the ``knn`` clause (see module doc). ``field``:
    the space's vector field (`opensearch_spaces.space_field`)."""
    return {
        "size": k,
        "_source": NO_VECTOR,
        "query": {
            "knn": {
                field: {
                    "vector": vector_json(vector),
                    "k": k,
                    "filter": {"bool": {"filter": filters}},
                }
            }
        },
    }


def nearest_body(
    tenant_id: str,
    agent_id: str,
    grain: Grain,
    vector: npt.NDArray[np.float32],
    now: datetime,
    within: Neighbourhood | None = None,
    field: str = VECTOR_FIELD,
) -> dict[str, Any]:
    """The one live ``grain`` record nearest ``vector`` (a unit vector), ``within`` the
    neighbourhood: part of the k-NN clause's filter, searched with a beam of `NEAREST_K`."""
    filters = [*live_filters(tenant_id, agent_id, now), term("grain", Grain(grain).value)]
    if within is not None:
        filters += neighbourhood_filters(within)
    body = knn_body(vector, NEAREST_K, filters, field)
    body["size"] = 1
    return body


def lexical_body(
    words: str, size: int, filters: list[dict[str, Any]], fields: Sequence[str] = LEXICAL_FIELDS
) -> dict[str, Any]:
    """BM25 over ``fields`` (a record's `LEXICAL_FIELDS` unless told), scored as one text
    (``cross_fields``: one field, or fields of one analyzer term by term), with ``filters``: the
    records' and the knowledge passages' word search."""
    return {
        "size": size,
        "_source": NO_VECTOR,
        "query": {
            "bool": {
                "must": [
                    {
                        "multi_match": {
                            "query": words,
                            "fields": list(fields),
                            "type": "cross_fields",
                        }
                    }
                ],
                "filter": filters,
            }
        },
    }


def list_filters(tenant_id: str, agent_id: str, now: datetime, grain: Grain | None) -> list[dict[str, Any]]:
    """`list`'s records: the agent's live ones, of ``grain`` if given."""
    filters = live_filters(tenant_id, agent_id, now)
    if grain is not None:
        filters.append(term("grain", Grain(grain).value))
    return filters


def conversation_filters(
    tenant_id: str, agent_id: str, conversation_id: str, before: datetime
) -> list[dict[str, Any]]:
    """The conversation's working records not forgotten, that occurred before the end of the
    millisecond of ``before`` (OpenSearch compares dates to the millisecond: `conversation_tail`
    compares the hits to ``before`` to the microsecond)."""
    whole_ms = before.replace(microsecond=before.microsecond // 1000 * 1000) + timedelta(milliseconds=1)
    return [
        term("tenant_id", tenant_id),
        term("agent_id", agent_id),
        not_deleted(),
        term("grain", Grain.WORKING.value),
        term("conversation_id", conversation_id),
        {"range": {"occurred_at": {"lt": ts(whole_ms)}}},
    ]


def span_filters(
    tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
) -> list[dict[str, Any]]:
    """The agent's live ``grain`` records overlapping ``[start, end)``."""
    return [
        *live_filters(tenant_id, agent_id, now),
        term("grain", Grain(grain).value),
        *overlapping(start, end),
    ]


def user_summaries_filters(
    tenant_id: str, agent_id: str, user_id: str, now: datetime
) -> list[dict[str, Any]]:
    """The agent's live summaries whose ``user_ids`` name ``user_id``."""
    return [
        *live_filters(tenant_id, agent_id, now),
        {"bool": {"must_not": [term("grain", Grain.WORKING.value)]}},
        term("user_ids", user_id),
    ]


def stats_body(tenant_id: str, agent_id: str, now: datetime) -> dict[str, Any]:
    """Live records per grain (a ``terms`` aggregation) and the oldest and newest record.

    Oldest/newest come from ``top_hits`` (the stored value, exact to the µs) rather than
    ``min``/``max`` aggregations (epoch milliseconds).
    """

    def edge(order: str) -> dict[str, Any]:
        return {
            "top_hits": {
                "size": 1,
                "sort": [{"occurred_at": {"order": order}}, {"id": {"order": order}}],
                "_source": {"includes": ["occurred_at"]},
            }
        }

    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": live_filters(tenant_id, agent_id, now)}},
        "aggs": {
            "grains": {"terms": {"field": "grain", "size": len(Grain)}},
            "oldest": edge("asc"),
            "newest": edge("desc"),
        },
    }


def list_agents_body(tenant_id: str, now: datetime, limit: int, after: str | None) -> dict[str, Any]:
    """A ``composite`` aggregation over the ``agent_id`` terms of the tenant's live records,
    after the agent ``after``."""
    composite: dict[str, Any] = {
        "size": limit,
        "sources": [{"agent_id": {"terms": {"field": "agent_id"}}}],
    }
    if after is not None:
        composite["after"] = {"agent_id": after}
    return {
        "size": 0,
        "query": {"bool": {"filter": tenant_live_filters(tenant_id, now)}},
        "aggs": {"agents": {"composite": composite}},
    }


def histogram_body(
    tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
) -> dict[str, Any]:
    """A ``range`` aggregation on ``occurred_at`` with one range per period (``from`` inclusive,
    ``to`` exclusive) of ascending ``edges``, over the agent's live ``grain`` records."""
    filters = [
        *live_filters(tenant_id, agent_id, now),
        term("grain", Grain(grain).value),
        {"range": {"occurred_at": {"gte": ts(edges[0]), "lt": ts(edges[-1])}}},
    ]
    return {
        "size": 0,
        "query": {"bool": {"filter": filters}},
        "aggs": {
            "periods": {
                "range": {
                    "field": "occurred_at",
                    "ranges": [{"from": ts(a), "to": ts(b)} for a, b in pairwise(edges)],
                }
            }
        },
    }


def agents_with_records_body(
    grain: Grain,
    start: datetime,
    end: datetime,
    page_size: int,
    after: dict[str, str] | None,
    tenant_id: str | None = None,
) -> dict[str, Any]:
    """A ``composite`` aggregation over (tenant_id, agent_id) terms of the ``grain`` records
    overlapping ``[start, end)`` that are not forgotten (of ``tenant_id`` only, if given), after
    the key ``after``."""
    composite: dict[str, Any] = {
        "size": page_size,
        "sources": [
            {"tenant_id": {"terms": {"field": "tenant_id"}}},
            {"agent_id": {"terms": {"field": "agent_id"}}},
        ],
    }
    if after is not None:
        composite["after"] = after
    return {
        "size": 0,
        "query": {
            "bool": {
                "filter": [
                    term("grain", Grain(grain).value),
                    not_deleted(),
                    *overlapping(start, end),
                    *([term("tenant_id", tenant_id)] if tenant_id is not None else []),
                ]
            }
        },
        "aggs": {"agents": {"composite": composite}},
    }
