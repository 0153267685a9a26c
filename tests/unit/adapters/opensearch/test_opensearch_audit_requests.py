"""Request shapes of the OpenSearch store's stale marks and audit trail (what forget relies on).

Uses the transport double of test_opensearch_requests.py: real client, recorded requests.
"""

from __future__ import annotations

from typing import Any

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    NOW,
    Cluster,
    bulk_ok,
    search_response,
    store,
)

from agent_memory.adapters.opensearch.opensearch_cursors import encode_cursor
from agent_memory.adapters.opensearch.opensearch_events import AppendOrder
from agent_memory.adapters.opensearch.opensearch_scripts import STALE_SCRIPT
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.ports import AuditAction, AuditEvent, AuditQuery

SUMMARY = "sum_dddddddddddddddd"


def stale(at: Any = NOW) -> AuditEvent:
    return AuditEvent("t1", "a1", SUMMARY, AuditAction.STALE, "key:dev", at, {"because": "mem_a"})


def test_mark_stale_is_a_routed_scripted_update_then_the_audit_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply({"_index": "mem-v1", "_id": f"t1:a1:{SUMMARY}", "result": "updated"})
    # WHEN
    cluster.reply(bulk_ok(1))

    # THEN
    assert store(client).mark_stale("t1", "a1", SUMMARY, stale()) is True

    update, audit = cluster.sent
    assert (update.method, update.path) == ("POST", f"/mem/_update/t1:a1:{SUMMARY}")
    assert update.params == {"routing": "t1:a1", "retry_on_conflict": "3"}
    assert update.body["script"]["source"] == STALE_SCRIPT
    assert update.body["script"]["params"] == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "at": "2026-11-22T12:00:00.000000Z",
    }
    action, doc = audit.lines
    assert action["create"]["_index"] == "mem-events" and action["create"]["routing"] == "t1:a1"
    assert action["create"]["_id"] == f"audit:t1:a1:{SUMMARY}:stale:2026-11-22T12:00:00.000000Z"
    assert doc["detail"] == {"because": "mem_a"} and doc["action"] == "stale"
    assert isinstance(doc["seq"], int) and doc["seq"] > 0
    cluster.done()


def test_a_mark_the_summary_already_carries_still_counts(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    # noop: the summary is stale since this instant or later (a retried forget)
    cluster.reply({"_index": "mem-v1", "_id": f"t1:a1:{SUMMARY}", "result": "noop"})
    # WHEN
    cluster.reply(bulk_ok(1))
    # THEN
    assert store(client).mark_stale("t1", "a1", SUMMARY, stale()) is True
    cluster.done()


def test_marking_an_unknown_summary_writes_no_audit(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply({"error": {"type": "document_missing_exception", "reason": "missing"}}, status=404)
    assert store(client).mark_stale("t1", "a1", SUMMARY, stale()) is False
    assert len(cluster.sent) == 1


def test_the_stale_script_only_moves_the_mark_later_and_only_on_the_callers_record() -> None:
    for clause in (
        "s.tenant_id != params.tenant_id",
        "s.agent_id != params.agent_id",
        "s.deleted_at.compareTo(params.at) < 0",
        "ctx.op = 'noop'",
    ):
        assert clause in STALE_SCRIPT


def test_audit_events_are_a_routed_filtered_search_of_the_events_index(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    source = {
        "doc_type": "audit",
        "tenant_id": "t1",
        "agent_id": "a1",
        "record_id": SUMMARY,
        "action": "remade",
        "actor": "summarizer:x",
        "at": "2026-11-22T12:00:00.000000Z",
        "detail": {"dropped": ["mem_a"]},
    }
    sort = [1795348800000, 17, SUMMARY, "remade"]
    # a second hit beyond the limit makes a next page
    cluster.reply(
        search_response(
            {"_index": "mem-events-v1", "_id": "e1", "_source": source, "sort": sort},
            {"_index": "mem-events-v1", "_id": "e2", "_source": source, "sort": [1, 1, "x", "forget"]},
        )
    )

    # WHEN
    page = store(client).audit_events(AuditQuery("t1", "a1", record_id=SUMMARY, limit=1))

    # THEN
    (sent,) = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/mem-events/_search")
    assert sent.params == {"routing": "t1:a1"}
    assert sent.body["size"] == 2
    assert sent.body["query"]["bool"]["filter"] == [
        {"term": {"doc_type": "audit"}},
        {"term": {"tenant_id": "t1"}},
        {"term": {"agent_id": "a1"}},
        {"term": {"record_id": SUMMARY}},
    ]
    assert sent.body["sort"] == [
        {"at": "desc"},
        {"seq": {"order": "desc", "missing": "_last"}},
        {"record_id": "desc"},
        {"action": "desc"},
    ]
    (event,) = page.events
    assert (event.action, event.detail, event.at) == ("remade", {"dropped": ["mem_a"]}, NOW)
    assert page.next_cursor is not None

    cluster.reply(search_response())
    store(client).audit_events(AuditQuery("t1", "a1", record_id=SUMMARY, limit=1, cursor=page.next_cursor))
    assert cluster.sent[-1].body["search_after"] == sort


def test_an_audit_cursor_bound_to_another_agent_is_refused_without_a_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cursor = encode_cursor({"t": "t1", "a": "a1", "r": None, "k": "audit", "s": [1, "x", "forget"]})
    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        store(client).audit_events(AuditQuery("t2", "a1", cursor=cursor))
    with pytest.raises(ValidationFailedError):
        store(client).audit_events(
            AuditQuery(
                "t1", "a1", cursor=encode_cursor({"t": "t1", "a": "a1", "r": None, "k": "audit", "s": "x"})
            )
        )
    assert cluster.sent == []


def test_an_audit_event_already_written_is_not_a_failure_but_another_error_is(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the events index answering that the event exists (a retried forget), then a refusal
    conflict = {"status": 409, "error": {"type": "version_conflict_engine_exception", "reason": "exists"}}
    refused = {"status": 400, "error": {"type": "strict_dynamic_mapping_exception", "reason": "no seq"}}
    cluster.reply({"took": 1, "errors": True, "items": [{"create": conflict}]})
    cluster.reply({"took": 1, "errors": True, "items": [{"create": refused}]})

    # WHEN / THEN the first keeps the event as first written; the second raises what it says
    store(client).append_audit([stale()])
    with pytest.raises(ConfigurationError, match="400 no seq"):
        store(client).append_audit([stale()])


def test_the_append_order_grows_even_when_the_clock_stands_still_or_goes_back() -> None:
    # GIVEN a clock that stands still, then goes back
    ticks = iter([100, 100, 50])
    order = AppendOrder(clock=lambda: next(ticks))
    # WHEN / THEN every number is above every number given before
    assert order.take(3) == [100, 101, 102]
    assert order.take(1) == [103]
    assert order.take(2) == [104, 105]
