"""Request shapes of the OpenSearch store's retention primitives, field by field.

`retention_candidates`, `delete_records`, `purge`, `delete_older_than` and `agents_with_records`
are what the daily retention run sends to the cluster. Pinned here: which documents each one can
reach (tenant and agent filters, routing), the ``_delete_by_query`` parameters (slices, conflicts,
waiting, timeout), the cutoff range fields, the paging, and that a second run of the same step
sends the same request and reports nothing more to do.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses shaped like the OpenSearch documentation's.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    NOW,
    Cluster,
    bulk_ok,
    hit,
    record,
    search_response,
    source_of,
    store,
)

from agent_memory.adapters.opensearch.opensearch_documents import doc_id, ts
from agent_memory.adapters.opensearch.opensearch_retention_queries import DELETE_PAGE, MAINTENANCE_TIMEOUT_S
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.model.grains import Grain, period_bounds
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports import PeriodScan

CUTOFF = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
FORGOTTEN_BEFORE = NOW - timedelta(days=7)
SLICED = {"slices": "auto", "conflicts": "proceed", "wait_for_completion": "true"}
NO_VECTOR = {"excludes": ["vector", "spaces"]}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FAR = datetime(9000, 1, 1, tzinfo=UTC)


# ------------------------------------------------------------------------------------------------
# Responses, as the OpenSearch documentation shows them
# ------------------------------------------------------------------------------------------------


def by_query_response(deleted: int, failures: list[Any] | None = None) -> dict[str, Any]:
    """``_delete_by_query`` with ``wait_for_completion``: totals over every slice."""
    return {
        "took": 147,
        "timed_out": False,
        "total": deleted,
        "deleted": deleted,
        "batches": 1 if deleted else 0,
        "version_conflicts": 0,
        "noops": 0,
        "retries": {"bulk": 0, "search": 0},
        "throttled_millis": 0,
        "requests_per_second": -1.0,
        "throttled_until_millis": 0,
        "failures": failures or [],
    }


def delete_item(_id: str, result: str = "deleted", status: int = 200, **extra: Any) -> dict[str, Any]:
    return {
        "delete": {"_index": "mem-v1", "_id": _id, "_version": 2, "result": result, "status": status, **extra}
    }


def bulk_deletes(*items: dict[str, Any]) -> dict[str, Any]:
    errors = any("error" in item["delete"] for item in items)
    return {"took": 30, "errors": errors, "items": list(items)}


def candidate_hit(r: MemoryRecord, ms: int) -> dict[str, Any]:
    """A hit of `retention_candidates`: its sort values are (span_end ms, id, agent_id)."""
    return hit(r, 0.0, sort=[ms, r.id, r.agent_id])


def decode(cursor: str) -> Any:
    """The position a retention cursor holds (its payload also names the listing it is bound to)."""
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["s"]


# ------------------------------------------------------------------------------------------------
# retention_candidates: one page of a tenant's records past a grain's cutoff
# ------------------------------------------------------------------------------------------------


def test_candidates_are_one_unrouted_search_of_the_tenants_grain_ending_before_the_cutoff(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN two old records of two agents of the tenant, one forgotten and one expired
    old = record("mem_a", agent="a1", deleted_at=NOW - timedelta(days=9))
    older = record("mem_b", agent="a2", expires_at=NOW - timedelta(days=1))
    cluster.reply(search_response(candidate_hit(old, 1), candidate_hit(older, 2)))

    # WHEN retention reads the tenant's working memory past the cutoff
    page = store(client).retention_candidates("t1", Grain.WORKING, CUTOFF, limit=50)

    # THEN one search over every shard (no routing), scoped to the tenant only, vectors left out
    cluster.done()
    (sent,) = cluster.sent
    assert (sent.method, sent.path, sent.params) == ("POST", "/mem/_search", {})
    assert sent.timeout == MAINTENANCE_TIMEOUT_S
    assert sent.body == {
        "size": 50,
        "_source": NO_VECTOR,
        "query": {
            "bool": {
                "filter": [
                    {"term": {"tenant_id": "t1"}},
                    {"term": {"grain": "working"}},
                    {"range": {"span_end": {"lt": "2026-11-20T12:00:00.000000Z"}}},
                ]
            }
        },
        "sort": [{"span_end": {"order": "asc"}}, {"id": {"order": "asc"}}, {"agent_id": {"order": "asc"}}],
    }
    # no liveness filter: forgotten and expired records are retention's too, of every agent
    assert [(r.agent_id, r.id) for r in page.records] == [("a1", "mem_a"), ("a2", "mem_b")]
    assert page.records[0].deleted_at == NOW - timedelta(days=9)
    assert page.records[1].expires_at == NOW - timedelta(days=1)
    assert page.next_cursor is None  # a short page is the last one


@pytest.mark.parametrize("grain", list(Grain))
def test_candidates_filter_the_grain_they_are_asked_for(
    client: OpenSearch, cluster: Cluster, grain: Grain
) -> None:
    # GIVEN
    cluster.reply(search_response())

    # WHEN
    page = store(client).retention_candidates("t1", grain, CUTOFF)

    # THEN
    filters = cluster.sent[0].body["query"]["bool"]["filter"]
    assert {"term": {"grain": grain.value}} in filters
    assert cluster.sent[0].body["size"] == 1000  # the port's default page
    assert page.records == [] and page.next_cursor is None


def test_a_summary_is_a_candidate_once_its_whole_period_has_ended() -> None:
    """The cutoff compares the stored span end, which is the period's end minus 1 microsecond."""
    # GIVEN
    start, end = period_bounds(Grain.DAILY, "2026-11-09")
    summary = record(
        "sum_9th", grain=Grain.DAILY, time_key="2026-11-09", period_start=start, period_end=end,
        kind=MemoryKind.SUMMARY, occurred_at=start,
    )  # fmt: skip

    # WHEN
    stored_end = source_of(summary)["span_end"]

    # THEN
    assert stored_end == "2026-11-09T23:59:59.999999Z"
    assert stored_end < ts(end)  # lt midnight of the 10th: a candidate at that cutoff
    assert not stored_end < ts(end - timedelta(seconds=1))  # not a second earlier


def test_candidates_page_with_search_after_on_the_last_hits_sort_values(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN three candidates, two per page
    a, b, c = (record(f"mem_{x}", agent=f"a{i}") for i, x in enumerate("abc"))
    cluster.reply(search_response(candidate_hit(a, 10), candidate_hit(b, 20)))
    cluster.reply(search_response(candidate_hit(c, 30)))
    s = store(client)

    # WHEN paging through
    first = s.retention_candidates("t1", Grain.DAILY, CUTOFF, limit=2)
    second = s.retention_candidates("t1", Grain.DAILY, CUTOFF, cursor=first.next_cursor, limit=2)

    # THEN the second request is the first one resumed after (span end, id, agent) of its last hit
    cluster.done()
    assert first.next_cursor is not None and decode(first.next_cursor) == [20, "mem_b", "a1"]
    resumed = dict(cluster.sent[1].body)
    assert resumed.pop("search_after") == [20, "mem_b", "a1"]
    assert resumed == cluster.sent[0].body
    assert "search_after" not in cluster.sent[0].body
    assert [r.id for r in first.records + second.records] == ["mem_a", "mem_b", "mem_c"]
    assert second.next_cursor is None


def test_a_full_last_page_costs_one_more_empty_search(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN exactly one page of candidates
    a = record("mem_a")
    cluster.reply(search_response(candidate_hit(a, 10))).reply(search_response())
    s = store(client)

    # WHEN retention walks the pages until there is no cursor
    first = s.retention_candidates("t1", Grain.WORKING, CUTOFF, limit=1)
    second = s.retention_candidates("t1", Grain.WORKING, CUTOFF, cursor=first.next_cursor, limit=1)

    # THEN it cannot know the page was the last (it asks for `limit`, not limit + 1)
    cluster.done()
    assert first.next_cursor is not None
    assert second.records == [] and second.next_cursor is None


def test_a_candidate_of_another_tenant_is_never_returned(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    mine, theirs = record("mem_a"), record("mem_b", tenant="t2")
    cluster.reply(search_response(candidate_hit(mine, 1), candidate_hit(theirs, 2)))

    # WHEN
    page = store(client).retention_candidates("t1", Grain.WORKING, CUTOFF)

    # THEN
    assert [(r.tenant_id, r.id) for r in page.records] == [("t1", "mem_a")]


def test_an_undecodable_candidates_cursor_is_a_validation_error_without_a_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    with pytest.raises(ValidationFailedError):
        store(client).retention_candidates("t1", Grain.WORKING, CUTOFF, cursor="not a cursor!")

    assert cluster.sent == []


def test_reading_candidates_twice_sends_the_same_request(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(search_response()).reply(search_response())
    s = store(client)

    # WHEN
    s.retention_candidates("t1", Grain.WEEKLY, CUTOFF, limit=7)
    s.retention_candidates("t1", Grain.WEEKLY, CUTOFF, limit=7)

    # THEN
    assert cluster.sent[0].body == cluster.sent[1].body


def test_a_candidates_limit_below_one_is_a_validation_error(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(search_response())  # what the cluster answers to size 0

    with pytest.raises(ValidationFailedError):
        store(client).retention_candidates("t1", Grain.WORKING, CUTOFF, limit=0)


def test_a_candidates_cursor_of_another_tenant_is_a_validation_error(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(search_response(candidate_hit(record("mem_a"), 1))).reply(search_response())
    s = store(client)
    cursor = s.retention_candidates("t1", Grain.WORKING, CUTOFF, limit=1).next_cursor

    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        s.retention_candidates("t2", Grain.WORKING, CUTOFF, cursor=cursor, limit=1)


# ------------------------------------------------------------------------------------------------
# delete_records: hard-delete chosen records of one agent
# ------------------------------------------------------------------------------------------------


def test_delete_records_is_one_routed_bulk_of_deletes_by_document_id(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply(bulk_deletes(delete_item("t1:a1:mem_a"), delete_item("t1:a1:mem_b")))

    # WHEN two ids (one given twice) of agent a1 are deleted
    deleted = store(client).delete_records("t1", "a1", ["mem_a", "mem_b", "mem_a"])

    # THEN one bulk of deletes: the agent's scoped document ids, routed to its shard
    cluster.done()
    (sent,) = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/_bulk")
    assert sent.params == {"require_alias": "true"}
    assert sent.lines == [
        {"delete": {"_index": "mem", "_id": "t1:a1:mem_a", "routing": "t1:a1"}},
        {"delete": {"_index": "mem", "_id": "t1:a1:mem_b", "routing": "t1:a1"}},
    ]
    assert deleted == 2


def test_deleting_the_same_records_again_deletes_nothing_and_is_not_an_error(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(bulk_deletes(delete_item("t1:a1:mem_a"), delete_item("t1:a1:mem_b")))
    cluster.reply(
        bulk_deletes(
            delete_item("t1:a1:mem_a", result="not_found", status=404),
            delete_item("t1:a1:mem_b", result="not_found", status=404),
        )
    )
    s = store(client)

    # WHEN
    first = s.delete_records("t1", "a1", ["mem_a", "mem_b"])
    second = s.delete_records("t1", "a1", ["mem_a", "mem_b"])

    # THEN
    assert (first, second) == (2, 0)
    assert cluster.sent[0].lines == cluster.sent[1].lines


def test_delete_records_sends_bounded_bulks(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    ids = [f"mem_{i:05d}" for i in range(2 * DELETE_PAGE + 500)]
    for size in (DELETE_PAGE, DELETE_PAGE, 500):
        cluster.reply(bulk_deletes(*(delete_item(str(i)) for i in range(size))))

    # WHEN
    deleted = store(client).delete_records("t1", "a1", ids)

    # THEN
    cluster.done()
    assert [len(s.lines) for s in cluster.sent] == [DELETE_PAGE, DELETE_PAGE, 500]
    assert [line["delete"]["_id"] for s in cluster.sent for line in s.lines] == [
        doc_id("t1", "a1", i) for i in ids
    ]
    assert deleted == len(ids)


def test_delete_records_of_no_ids_sends_nothing(client: OpenSearch, cluster: Cluster) -> None:
    assert store(client).delete_records("t1", "a1", []) == 0
    assert cluster.sent == []


def test_delete_records_reaches_only_the_named_agents_documents(client: OpenSearch, cluster: Cluster) -> None:
    # an id that another agent also uses: only this agent's document id is addressed
    cluster.reply(bulk_deletes(delete_item("t1:a2:mem_a")))

    store(client).delete_records("t1", "a2", ["mem_a"])

    assert cluster.sent[0].lines == [{"delete": {"_index": "mem", "_id": "t1:a2:mem_a", "routing": "t1:a2"}}]


@pytest.mark.parametrize(("refresh", "sent"), [(True, "true"), ("wait_for", "wait_for")])
def test_delete_records_passes_the_configured_refresh(
    client: OpenSearch, cluster: Cluster, refresh: Any, sent: str
) -> None:
    cluster.reply(bulk_deletes(delete_item("t1:a1:mem_a")))

    store(client, refresh=refresh).delete_records("t1", "a1", ["mem_a"])

    assert cluster.sent[0].params == {"require_alias": "true", "refresh": sent}


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_delete_the_cluster_could_not_make_is_a_dependency_error(
    client: OpenSearch, cluster: Cluster, status: int
) -> None:
    failure = {"type": "es_rejected_execution_exception", "reason": "rejected"}
    cluster.reply(
        bulk_deletes(
            delete_item("t1:a1:mem_a"), delete_item("t1:a1:mem_b", result="", status=status, error=failure)
        )
    )

    with pytest.raises(DependencyError):
        store(client).delete_records("t1", "a1", ["mem_a", "mem_b"])


def test_deleting_from_a_missing_index_is_a_configuration_error(client: OpenSearch, cluster: Cluster) -> None:
    missing = {"type": "index_not_found_exception", "reason": "no such index [mem]", "index": "mem"}
    cluster.reply(bulk_deletes(delete_item("t1:a1:mem_a", result="", status=404, error=missing)))

    with pytest.raises(ConfigurationError):
        store(client).delete_records("t1", "a1", ["mem_a"])


# ------------------------------------------------------------------------------------------------
# purge: expired and long-forgotten records of a tenant
# ------------------------------------------------------------------------------------------------


PURGE_QUERY = {
    "query": {
        "bool": {
            "filter": [{"term": {"tenant_id": "t1"}}],
            "should": [
                {"range": {"expires_at": {"lte": "2026-11-22T12:00:00.000000Z"}}},
                {"range": {"deleted_at": {"lt": "2026-11-15T12:00:00.000000Z"}}},
            ],
            "minimum_should_match": 1,
        }
    }
}


EXPIRED_QUERY = {
    "bool": {
        "filter": [{"term": {"tenant_id": "t1"}}, {"range": {"expires_at": {"lte": ts(NOW)}}}],
        "must_not": [{"exists": {"field": "deleted_at"}}],
    }
}


def test_purge_audits_the_expired_records_it_is_about_to_delete(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN one page of expired live records, then none
    hits = [{"_id": "t1:a0:mem_0", "_source": {"id": "mem_0", "agent_id": "a0"}, "sort": ["mem_0", "a0"]}]
    cluster.reply(search_response(*hits)).reply(bulk_ok(1)).reply(search_response())
    cluster.reply(by_query_response(1))

    # WHEN
    store(client).purge("t1", NOW, FORGOTTEN_BEFORE)

    # THEN the expired ids are read (ids only), an audit event per record, then the delete
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("POST", "/mem/_search"),
        ("POST", "/_bulk"),
        ("POST", "/mem/_search"),
        ("POST", "/mem/_delete_by_query"),
    ]
    assert cluster.sent[0].body["query"] == EXPIRED_QUERY
    assert cluster.sent[0].body["_source"] == ["id", "agent_id"]
    event = cluster.sent[1].lines[1]
    assert (event["record_id"], event["agent_id"], event["action"], event["detail"]) == (
        "mem_0",
        "a0",
        "retention",
        {"rule": "expired"},
    )
    assert cluster.sent[2].body["search_after"] == ["mem_0", "a0"]


def test_purge_is_a_sliced_delete_by_query_over_every_agent_of_the_tenant(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply(search_response()).reply(by_query_response(5))

    # WHEN
    purged = store(client).purge("t1", NOW, FORGOTTEN_BEFORE)

    # THEN no routing (every agent), parallel slices, conflicts skipped for the next run, no max_docs
    cluster.done()
    _, sent = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/mem/_delete_by_query")
    assert sent.params == SLICED
    assert sent.timeout == MAINTENANCE_TIMEOUT_S
    # expired at now (inclusive: not live at now) or forgotten before the end of the grace period
    assert sent.body == PURGE_QUERY
    assert purged == 5


def test_purging_again_sends_the_same_request_and_purges_nothing(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(search_response()).reply(by_query_response(5))
    cluster.reply(search_response()).reply(by_query_response(0))
    s = store(client)

    # WHEN / THEN
    assert (s.purge("t1", NOW, FORGOTTEN_BEFORE), s.purge("t1", NOW, FORGOTTEN_BEFORE)) == (5, 0)
    assert cluster.sent[1].body == cluster.sent[3].body == PURGE_QUERY
    assert cluster.sent[1].params == cluster.sent[3].params


@pytest.mark.parametrize("refresh", [True, "wait_for"])
def test_purge_refreshes_with_true_only(client: OpenSearch, cluster: Cluster, refresh: Any) -> None:
    """``_delete_by_query`` takes refresh=true/false; wait_for is refused by the cluster."""
    cluster.reply(search_response()).reply(by_query_response(0))

    store(client, refresh=refresh).purge("t1", NOW, FORGOTTEN_BEFORE)

    assert cluster.sent[1].params == {**SLICED, "refresh": "true"}


def test_purge_with_failures_raises_so_the_next_run_takes_the_rest(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply(search_response())
    cluster.reply(by_query_response(3, failures=[{"index": "mem-v1", "id": "x", "cause": {"type": "x"}}]))

    with pytest.raises(DependencyError, match="safe to run again"):
        store(client).purge("t1", NOW, FORGOTTEN_BEFORE)


def test_a_throttled_purge_is_a_dependency_error(client: OpenSearch, cluster: Cluster) -> None:
    throttled = {"error": {"type": "es_rejected_execution_exception", "reason": "queue full"}, "status": 429}
    for _ in range(4):  # the first try and the transport's retries
        cluster.reply(throttled, status=429)

    with pytest.raises(DependencyError):
        store(client).purge("t1", NOW, FORGOTTEN_BEFORE)


# ------------------------------------------------------------------------------------------------
# delete_older_than: a grain's records past a cutoff, without looking at them
# ------------------------------------------------------------------------------------------------


def test_delete_older_than_twice_sends_the_same_request_and_deletes_nothing_more(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(by_query_response(4)).reply(by_query_response(0))
    s = store(client)
    cutoff = datetime(2026, 11, 20, 12, 0, 0, 123456, tzinfo=UTC)

    # WHEN / THEN
    assert (
        s.delete_older_than("t1", Grain.MONTHLY, cutoff),
        s.delete_older_than("t1", Grain.MONTHLY, cutoff),
    ) == (
        4,
        0,
    )

    for sent in cluster.sent:
        assert (sent.path, sent.params) == ("/mem/_delete_by_query", SLICED)
        assert sent.body["query"]["bool"]["filter"] == [
            {"term": {"tenant_id": "t1"}},  # every agent of the tenant: no agent filter, no routing
            {"term": {"grain": "monthly"}},
            {"range": {"span_end": {"lt": "2026-11-20T12:00:00.123456Z"}}},  # the cutoff to the microsecond
        ]
    assert cluster.sent[0].body == cluster.sent[1].body


@pytest.mark.parametrize("refresh", [True, "wait_for"])
def test_delete_older_than_refreshes_with_true_only(
    client: OpenSearch, cluster: Cluster, refresh: Any
) -> None:
    cluster.reply(by_query_response(0))

    store(client, refresh=refresh).delete_older_than("t1", Grain.DAILY, CUTOFF)

    assert cluster.sent[0].params == {**SLICED, "refresh": "true"}


# ------------------------------------------------------------------------------------------------
# agents_with_records: how retention finds the tenants with records
# ------------------------------------------------------------------------------------------------


def agents_response(pairs: list[tuple[str, str]], after: tuple[str, str] | None) -> dict[str, Any]:
    agg: dict[str, Any] = {
        "buckets": [{"key": {"tenant_id": t, "agent_id": a}, "doc_count": 3} for t, a in pairs]
    }
    if after is not None:
        agg["after_key"] = {"tenant_id": after[0], "agent_id": after[1]}
    return {**search_response(), "aggregations": {"agents": agg}}


def test_agents_over_all_time_is_an_unrouted_cross_tenant_aggregation_of_live_records(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the span retention asks for: all of time
    cluster.reply(agents_response([("t1", "a1"), ("t2", "a9")], after=("t2", "a9")))

    # WHEN
    page = store(client).agents_with_records(PeriodScan(Grain.WORKING, EPOCH, FAR))

    # THEN no tenant or agent filter (this is how tenants are found), not routed, ids only
    (sent,) = cluster.sent
    assert (sent.path, sent.params) == ("/mem/_search", {})
    assert sent.body["size"] == 0
    filters = sent.body["query"]["bool"]["filter"]
    assert filters == [
        {"term": {"grain": "working"}},
        {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}},
        {"range": {"span_start": {"lt": "9000-01-01T00:00:00.000000Z"}}},
        {"range": {"span_end": {"gte": "1970-01-01T00:00:00.000000Z"}}},
    ]
    assert not any("tenant_id" in json.dumps(f) or "agent_id" in json.dumps(f) for f in filters)
    assert sent.body["aggs"]["agents"]["composite"]["size"] == 500  # the port's default page
    assert [(a.tenant_id, a.agent_id) for a in page.agents] == [("t1", "a1"), ("t2", "a9")]
    assert page.next_cursor is None  # fewer buckets than the page size: the last page


def test_an_agents_page_resumes_after_the_after_key_of_the_same_span(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(agents_response([("t1", "a1")], after=("t1", "a1")))
    cluster.reply(agents_response([], after=None))
    s = store(client)

    # WHEN
    first = s.agents_with_records(PeriodScan(Grain.DAILY, EPOCH, FAR, page_size=1))
    second = s.agents_with_records(PeriodScan(Grain.DAILY, EPOCH, FAR, cursor=first.next_cursor, page_size=1))

    # THEN
    assert cluster.sent[1].body["aggs"]["agents"]["composite"]["after"] == {
        "tenant_id": "t1",
        "agent_id": "a1",
    }
    assert cluster.sent[1].body["query"] == cluster.sent[0].body["query"]
    assert second.agents == [] and second.next_cursor is None


def test_an_agents_cursor_of_another_span_is_a_validation_error_without_a_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(agents_response([("t1", "a1")], after=("t1", "a1")))
    s = store(client)
    cursor = s.agents_with_records(PeriodScan(Grain.WORKING, EPOCH, FAR, page_size=1)).next_cursor

    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        s.agents_with_records(PeriodScan(Grain.WORKING, EPOCH, NOW, cursor=cursor, page_size=1))

    assert len(cluster.sent) == 1


def test_an_agents_page_size_below_one_is_a_validation_error(client: OpenSearch, cluster: Cluster) -> None:
    with pytest.raises(ValidationFailedError):
        store(client).agents_with_records(PeriodScan(Grain.WORKING, EPOCH, FAR, page_size=0))

    assert cluster.sent == []


def test_forgotten_records_do_not_make_an_agent_but_expired_ones_do(
    client: OpenSearch, cluster: Cluster
) -> None:
    """The listing has no clock: expiry is not applied (documented), forgetting is."""
    # GIVEN
    cluster.reply(agents_response([], after=None))

    # WHEN
    store(client).agents_with_records(PeriodScan(Grain.WORKING, EPOCH, FAR))

    # THEN
    body = json.dumps(cluster.sent[0].body)
    assert "deleted_at" in body
    assert "expires_at" not in body


def test_a_stored_document_carries_the_fields_retention_filters_on() -> None:
    """tenant_id, grain, span_end, expires_at and deleted_at: what the requests above filter."""
    # GIVEN
    r = record("mem_a", expires_at=NOW, deleted_at=NOW - timedelta(days=8))

    # WHEN
    doc = source_of(r)

    # THEN
    assert (doc["tenant_id"], doc["agent_id"], doc["grain"]) == ("t1", "a1", "working")
    assert doc["span_end"] == ts(r.occurred_at)
    assert doc["expires_at"] == "2026-11-22T12:00:00.000000Z"
    assert doc["deleted_at"] == "2026-11-14T12:00:00.000000Z"
