"""Request shapes of the OpenSearch store's export reads (`opensearch_export`): an export's pages,
their count, and the audit trail of a page of records.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    ALIAS,
    NOW,
    T0,
    Cluster,
    assert_scoped,
    hit,
    record,
    search_response,
    store,
)

from agent_memory.adapters.opensearch.opensearch_events import audit_document
from agent_memory.adapters.opensearch.opensearch_export import EXPORT_ORDER
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditEvent
from agent_memory.ports.export_store import ExportQuery


def test_an_agents_export_is_routed_sorted_and_paged_with_search_after(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN two pages of one record
    a, b = record("mem_a"), record("mem_b", occurred_at=T0 + timedelta(seconds=1))
    cluster.reply(search_response(hit(a, 0.0, sort=["a1", 1, "mem_a"]), hit(b, 0.0, sort=["a1", 2, "mem_b"])))
    cluster.reply(search_response(hit(b, 0.0, sort=["a1", 2, "mem_b"])))

    # WHEN the agent's export is read a record a page
    query = ExportQuery("t1", NOW, agent_id="a1", limit=1)
    first = store(client).export_records(query)
    second = store(client).export_records(
        ExportQuery("t1", NOW, agent_id="a1", limit=1, cursor=first.next_cursor)
    )

    # THEN each page is one routed search of the agent's live records, by agent, time and id
    cluster.done()
    one, two = cluster.sent
    assert (one.path, one.params) == (f"/{ALIAS}/_search", {"routing": "t1:a1"})
    assert one.body["sort"] == EXPORT_ORDER and one.body["size"] == 2
    assert_scoped(one.body["query"]["bool"]["filter"])
    assert {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}} in one.body["query"]["bool"][
        "filter"
    ]
    assert "search_after" not in one.body
    assert two.body["search_after"] == ["a1", 1, "mem_a"]
    assert ([r.id for r in first.records], [r.id for r in second.records]) == (["mem_a"], ["mem_b"])
    assert second.next_cursor is None


def test_an_end_users_export_spans_the_tenants_agents_unrouted(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(search_response(hit(record("mem_a", user_id="u1"), 0.0, sort=["a1", 1, "mem_a"])))
    # WHEN u1's working memories in a window are read
    query = ExportQuery("t1", NOW, user_id="u1", grains=(Grain.WORKING,), start=T0, end=NOW)
    page = store(client).export_records(query)
    # THEN the search is not routed, and filters the tenant, the user, the grain and the span
    (sent,) = cluster.sent
    filters = sent.body["query"]["bool"]["filter"]
    assert sent.params == {}
    assert {"term": {"tenant_id": "t1"}} in filters and {"term": {"user_id": "u1"}} in filters
    assert not any("agent_id" in str(f) for f in filters)
    assert {"terms": {"grain": ["working"]}} in filters
    assert {"range": {"span_start": {"lte": "2026-11-22T12:00:00.000000Z"}}} in filters
    assert {"range": {"span_end": {"gte": "2026-11-20T14:03:00.123456Z"}}} in filters
    assert [r.id for r in page.records] == ["mem_a"]


def test_a_record_of_another_tenant_in_an_answer_is_dropped(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN an answer holding another tenant's document (a defect elsewhere)
    cluster.reply(search_response(hit(record("mem_x", tenant="t2"), 0.0, sort=["a1", 1, "mem_x"])))
    # WHEN / THEN
    assert store(client).export_records(ExportQuery("t1", NOW, user_id="u1")).records == []


def test_a_cursor_of_another_export_is_refused_before_any_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a cursor of t1's export of agent a1
    a, b = record("mem_a"), record("mem_b")
    cluster.reply(search_response(hit(a, 0.0, sort=["a1", 1, "mem_a"]), hit(b, 0.0, sort=["a1", 2, "mem_b"])))
    cursor = store(client).export_records(ExportQuery("t1", NOW, agent_id="a1", limit=1)).next_cursor

    # WHEN / THEN another tenant's or user's export refuses it, asking the cluster nothing
    for other in (
        ExportQuery("t2", NOW, agent_id="a1", cursor=cursor),
        ExportQuery("t1", NOW, user_id="u1", cursor=cursor),
    ):
        with pytest.raises(ValidationFailedError):
            store(client).export_records(other)
    assert len(cluster.sent) == 1


def test_the_count_is_one_count_request_with_the_same_filters(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply({"count": 42})
    # WHEN
    count = store(client).count_records(ExportQuery("t1", NOW, agent_id="a1"))
    # THEN
    (sent,) = cluster.sent
    assert (sent.path, sent.params) == (f"/{ALIAS}/_count", {"routing": "t1:a1"})
    assert_scoped(sent.body["query"]["bool"]["filter"])
    assert count == 42


def test_the_audit_of_records_is_one_terms_query_of_the_agents_events_oldest_first(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the events index answering two events, and one of another tenant
    events = [
        AuditEvent("t1", "a1", "mem_a", "feedback", "k", NOW, {"n": 2}),
        AuditEvent("t1", "a1", "mem_b", "merged", "writer", NOW - timedelta(minutes=1), {"n": 1}),
        AuditEvent("t2", "a1", "mem_a", "feedback", "k", NOW, {}),
    ]
    hits = [{"_id": str(i), "_source": audit_document(e, i), "sort": [i]} for i, e in enumerate(events)]
    cluster.reply(search_response(*hits))

    # WHEN
    found = store(client).audit_of_records("t1", "a1", ["mem_a", "mem_b"])

    # THEN one routed search of the events index for those records, the caller's events only
    (sent,) = cluster.sent
    assert (sent.path, sent.params) == (f"/{ALIAS}-events/_search", {"routing": "t1:a1"})
    filters = sent.body["query"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"terms": {"record_id": ["mem_a", "mem_b"]}} in filters
    assert sent.body["sort"][:2] == [{"at": "asc"}, {"seq": {"order": "asc", "missing": "_first"}}]
    assert [(e.record_id, e.detail) for e in found] == [("mem_b", {"n": 1}), ("mem_a", {"n": 2})]
