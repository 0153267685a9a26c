"""Request shapes of what the operator console reads from OpenSearch: the tenant's agents, counts
per period, and search counts per day.

Uses the transport double of test_opensearch_requests.py: real client, recorded requests.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import NOW, Cluster, store

from agent_memory.adapters.opensearch.opensearch_cursors import encode_cursor
from agent_memory.adapters.opensearch.opensearch_scripts import SEARCH_COUNT_SCRIPT
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain

DAY = timedelta(days=1)
LIVE = [
    {"term": {"tenant_id": "t1"}},
    {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}},
    {
        "bool": {
            "should": [
                {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                {"range": {"expires_at": {"gt": "2026-11-22T12:00:00.000000Z"}}},
            ],
            "minimum_should_match": 1,
        }
    },
]


def composite_response(*agents: str, after: str | None = None) -> dict[str, object]:
    agg: dict[str, object] = {"buckets": [{"key": {"agent_id": a}, "doc_count": 3} for a in agents]}
    if after is not None:
        agg["after_key"] = {"agent_id": after}
    return {"hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}, "aggregations": {"agents": agg}}


def test_list_agents_is_an_unrouted_composite_aggregation_over_the_tenants_live_records(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(composite_response("billing", "support", after="support"))

    # WHEN
    page = store(client).list_agents("t1", NOW, limit=2)

    # THEN
    (sent,) = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/mem/_search")
    assert "routing" not in sent.params  # agents live on different shards
    assert sent.body["size"] == 0
    assert sent.body["query"] == {"bool": {"filter": LIVE}}
    assert sent.body["aggs"] == {
        "agents": {"composite": {"size": 2, "sources": [{"agent_id": {"terms": {"field": "agent_id"}}}]}}
    }
    assert [(a.tenant_id, a.agent_id) for a in page.agents] == [("t1", "billing"), ("t1", "support")]
    assert page.next_cursor is not None
    cluster.done()


def test_list_agents_continues_after_the_cursors_agent_and_ends_on_a_short_page(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(composite_response("zeta", after="zeta"))
    cursor = encode_cursor({"t": "t1", "k": "agents", "a": "support"})

    # WHEN
    page = store(client).list_agents("t1", NOW, cursor=cursor, limit=2)

    # THEN
    assert cluster.sent[0].body["aggs"]["agents"]["composite"]["after"] == {"agent_id": "support"}
    assert [a.agent_id for a in page.agents] == ["zeta"] and page.next_cursor is None


def test_a_list_agents_cursor_of_another_tenant_is_refused_without_a_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    with pytest.raises(ValidationFailedError):
        store(client).list_agents("t1", NOW, cursor=encode_cursor({"t": "t2", "k": "agents", "a": "x"}))
    assert cluster.sent == []


def test_histogram_is_one_routed_range_aggregation_with_a_range_per_period(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    start = datetime(2026, 11, 18, 5, tzinfo=UTC)
    edges = [start, start + DAY, start + 2 * DAY]
    buckets = [
        {"key": "a", "from": 0, "to": 1, "doc_count": 4},
        {"key": "b", "from": 1, "to": 2, "doc_count": 0},
    ]
    cluster.reply({"hits": {"hits": []}, "aggregations": {"periods": {"buckets": buckets}}})

    # WHEN
    counts = store(client).histogram("t1", "a1", Grain.WORKING, edges, NOW)

    # THEN
    (sent,) = cluster.sent
    assert (sent.path, sent.params) == ("/mem/_search", {"routing": "t1:a1"})
    filters = sent.body["query"]["bool"]["filter"]
    assert {"term": {"agent_id": "a1"}} in filters and {"term": {"tenant_id": "t1"}} in filters
    assert {"term": {"grain": "working"}} in filters
    assert {
        "range": {"occurred_at": {"gte": "2026-11-18T05:00:00.000000Z", "lt": "2026-11-20T05:00:00.000000Z"}}
    } in filters
    assert sent.body["aggs"]["periods"]["range"] == {
        "field": "occurred_at",
        "ranges": [
            {"from": "2026-11-18T05:00:00.000000Z", "to": "2026-11-19T05:00:00.000000Z"},
            {"from": "2026-11-19T05:00:00.000000Z", "to": "2026-11-20T05:00:00.000000Z"},
        ],
    }
    assert sent.body["size"] == 0
    assert counts == [4, 0]


def test_histogram_without_a_whole_bin_or_with_unordered_edges_sends_nothing(
    client: OpenSearch, cluster: Cluster
) -> None:
    assert store(client).histogram("t1", "a1", Grain.WORKING, [NOW], NOW) == []
    with pytest.raises(ValidationFailedError):
        store(client).histogram("t1", "a1", Grain.WORKING, [NOW, NOW], NOW)
    assert cluster.sent == []


def test_record_search_is_a_routed_scripted_upsert_of_the_agents_day_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply({"_index": "mem-events-v1", "_id": "searches:t1:a1:2026-11-22", "result": "updated"})

    # WHEN
    store(client).record_search("t1", "a1", NOW, hits=0)

    # THEN
    (sent,) = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/mem-events/_update/searches:t1:a1:2026-11-22")
    assert sent.params == {"routing": "t1:a1", "retry_on_conflict": "3"}
    assert sent.body == {
        "scripted_upsert": True,
        "script": {
            "source": SEARCH_COUNT_SCRIPT,
            "lang": "painless",
            "params": {
                "tenant_id": "t1",
                "agent_id": "a1",
                "day": "2026-11-22T00:00:00.000000Z",
                "zero_hits": 1,
            },
        },
        "upsert": {},
    }


def test_the_search_count_script_makes_the_day_document_and_counts_only_the_callers() -> None:
    for clause in (
        "s.doc_type = 'searches'",
        "s.at = params.day",
        "s.tenant_id != params.tenant_id",
        "s.detail.searches += 1",
        "s.detail.zero_hits += params.zero_hits",
    ):
        assert clause in SEARCH_COUNT_SCRIPT


def test_record_search_never_raises(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a cluster that answers every try of the count with 429
    for _ in range(4):
        cluster.reply({"error": {"type": "es_rejected_execution_exception", "reason": "busy"}}, status=429)
    # WHEN the search is counted
    store(client).record_search("t1", "a1", NOW, hits=2)
    # THEN no exception came out, and the count was tried (then retried by the transport)
    assert len(cluster.sent) == 4


def test_search_days_reads_the_agents_day_documents_since_a_day_oldest_first(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    def day_doc(day: str, searches: int, zero: int, tenant: str = "t1") -> dict[str, object]:
        source = {
            "doc_type": "searches",
            "tenant_id": tenant,
            "agent_id": "a1",
            "at": f"{day}T00:00:00.000000Z",
            "detail": {"searches": searches, "zero_hits": zero},
        }
        return {"_index": "mem-events-v1", "_id": f"searches:{tenant}:a1:{day}", "_source": source}

    docs = [day_doc("2026-11-20", 5, 1), day_doc("2026-11-21", 2, 0), day_doc("2026-11-21", 9, 9, "t2")]
    cluster.reply({"hits": {"total": {"value": 3, "relation": "eq"}, "hits": docs}})

    # WHEN
    days = store(client).search_days("t1", "a1", since=date(2026, 11, 16))

    # THEN
    (sent,) = cluster.sent
    assert (sent.path, sent.params) == ("/mem-events/_search", {"routing": "t1:a1"})
    assert sent.body["query"]["bool"]["filter"] == [
        {"term": {"doc_type": "searches"}},
        {"term": {"tenant_id": "t1"}},
        {"term": {"agent_id": "a1"}},
        {"range": {"at": {"gte": "2026-11-16T00:00:00.000000Z"}}},
    ]
    assert sent.body["sort"] == [{"at": "asc"}]
    assert [(d.day, d.searches, d.zero_hits) for d in days] == [
        (date(2026, 11, 20), 5, 1),
        (date(2026, 11, 21), 2, 0),
    ]
