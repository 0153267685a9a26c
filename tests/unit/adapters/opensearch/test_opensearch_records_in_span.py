"""Request shape of `OpenSearchStore.records_in_span`: the summarizer's read of one period.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    ALIAS,
    DIM,
    MODEL,
    NOW,
    Cluster,
    assert_scoped,
    hit,
    record,
    search_response,
)

from agent_memory.adapters.opensearch.opensearch_records import SPAN_PAGE
from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.errors import DependencyError
from agent_memory.model.grains import Grain

DAY = datetime(2026, 11, 20, tzinfo=UTC)


def store(client: OpenSearch) -> OpenSearchStore:
    return OpenSearchStore(client, ALIAS, DIM, MODEL, check=False, refresh=False)


def at(seconds: int) -> datetime:
    return DAY + timedelta(seconds=seconds)


def test_one_routed_sorted_filtered_search_reads_a_small_period(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a period with two records
    a, b = record("mem_a", occurred_at=at(10)), record("mem_b", occurred_at=at(20))
    cluster.reply(search_response(hit(a, 0.0, sort=[1, "mem_a"]), hit(b, 0.0, sort=[2, "mem_b"])))

    # WHEN the working memory of the 20th is read
    found = store(client).records_in_span("t1", "a1", Grain.WORKING, DAY, DAY + timedelta(days=1), NOW)

    # THEN one search, routed to the agent, filtered to live records of the grain overlapping
    # [start, end), oldest first, without vectors
    cluster.done()
    (sent,) = cluster.sent
    assert (sent.method, sent.path, sent.params) == ("POST", f"/{ALIAS}/_search", {"routing": "t1:a1"})
    assert sent.body["size"] == SPAN_PAGE
    assert sent.body["_source"] == {"excludes": ["vector", "spaces"]}
    assert sent.body["sort"] == [{"occurred_at": {"order": "asc"}}, {"id": {"order": "asc"}}]
    assert "search_after" not in sent.body
    filters = sent.body["query"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}} in filters
    assert {"range": {"expires_at": {"gt": "2026-11-22T12:00:00.000000Z"}}} in filters[3]["bool"]["should"]
    assert {"term": {"grain": "working"}} in filters
    assert {"range": {"span_start": {"lt": "2026-11-21T00:00:00.000000Z"}}} in filters  # end excluded
    assert {"range": {"span_end": {"gte": "2026-11-20T00:00:00.000000Z"}}} in filters
    assert [r.id for r in found] == ["mem_a", "mem_b"]


def test_a_full_page_is_followed_with_search_after_until_a_short_page(
    client: OpenSearch, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN pages of two: a full one, then a short one
    monkeypatch.setattr("agent_memory.adapters.opensearch.opensearch_records.SPAN_PAGE", 2)
    r1, r2, r3 = (record(f"mem_{i}", occurred_at=at(i)) for i in (1, 2, 3))
    cluster.reply(search_response(hit(r1, 0.0, sort=[1, "mem_1"]), hit(r2, 0.0, sort=[2, "mem_2"])))
    cluster.reply(search_response(hit(r3, 0.0, sort=[3, "mem_3"])))

    # WHEN
    found = store(client).records_in_span("t1", "a1", Grain.WORKING, DAY, DAY + timedelta(days=1), NOW)

    # THEN the second request continues after the last sort values of the first, same query
    cluster.done()
    first, second = cluster.sent
    assert second.body["search_after"] == [2, "mem_2"]
    assert second.body["query"] == first.body["query"]
    assert [r.id for r in found] == ["mem_1", "mem_2", "mem_3"]


def test_records_within_one_millisecond_come_back_in_microsecond_order(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    # OpenSearch sorts dates by the millisecond: ties are broken by id, not by time
    late = record("mem_a", occurred_at=DAY + timedelta(microseconds=900))
    early = record("mem_b", occurred_at=DAY + timedelta(microseconds=100))
    cluster.reply(search_response(hit(late, 0.0, sort=[0, "mem_a"]), hit(early, 0.0, sort=[0, "mem_b"])))

    # WHEN
    found = store(client).records_in_span("t1", "a1", Grain.WORKING, DAY, DAY + timedelta(days=1), NOW)

    # THEN
    assert [r.id for r in found] == ["mem_b", "mem_a"]


def test_a_document_of_another_agent_is_never_returned(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    mine, theirs = record("mem_a", occurred_at=at(1)), record("mem_b", agent="a2", occurred_at=at(2))
    cluster.reply(search_response(hit(mine, 0.0, sort=[1, "mem_a"]), hit(theirs, 0.0, sort=[2, "mem_b"])))

    # WHEN
    found = store(client).records_in_span("t1", "a1", Grain.WORKING, DAY, DAY + timedelta(days=1), NOW)

    # THEN
    assert [r.id for r in found] == ["mem_a"]


def test_an_unavailable_cluster_is_a_dependency_error(client: OpenSearch, cluster: Cluster) -> None:
    unavailable = {"error": {"type": "unavailable", "reason": "down"}, "status": 503}
    for _ in range(10):
        cluster.reply(unavailable, status=503)

    with pytest.raises(DependencyError):
        store(client).records_in_span("t1", "a1", Grain.WORKING, DAY, DAY + timedelta(days=1), NOW)
