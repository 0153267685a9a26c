"""The OpenSearch store's request builders on their own: pure functions, no client, no cluster.

The request-shape suites (test_opensearch_requests.py and its siblings) pin what the store puts
on the wire through a real client; these pin the builders those requests are made of.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory.adapters.opensearch.opensearch_cursors import (
    encode_cursor,
    list_after,
    next_page_cursor,
)
from agent_memory.adapters.opensearch.opensearch_events import audit_events_body
from agent_memory.adapters.opensearch.opensearch_filters import live_filters, term
from agent_memory.adapters.opensearch.opensearch_queries import (
    LEXICAL_FIELDS,
    NEAREST_K,
    NEWEST_FIRST,
    knn_body,
    lexical_body,
    nearest_body,
    records_page_body,
)
from agent_memory.adapters.opensearch.opensearch_retention_queries import (
    candidates_body,
    delete_by_query_params,
    older_than_query,
)
from agent_memory.adapters.opensearch.opensearch_scripts import SEARCH_COUNT_SCRIPT, search_count_body
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import Neighbourhood

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
UNIT = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def test_a_knn_body_filters_inside_the_knn_clause_and_never_returns_vectors() -> None:
    # GIVEN
    filters = [term("tenant_id", "t1")]

    # WHEN
    body = knn_body(UNIT, 7, filters)

    # THEN
    assert body["size"] == 7
    assert body["_source"] == {"excludes": ["vector", "spaces"]}
    assert body["query"]["knn"]["vector"] == {
        "vector": [1.0, 0.0, 0.0, 0.0],
        "k": 7,
        "filter": {"bool": {"filter": filters}},
    }


def test_the_nearest_body_asks_one_hit_of_a_wider_beam_within_the_neighbourhood() -> None:
    # GIVEN
    within = Neighbourhood(user_id="u1", match_user=True, match_conversation=True)

    # WHEN
    body = nearest_body("t1", "a1", Grain.WORKING, UNIT, NOW, within)

    # THEN
    knn = body["query"]["knn"]["vector"]
    assert (body["size"], knn["k"]) == (1, NEAREST_K)
    filters = knn["filter"]["bool"]["filter"]
    assert filters[: len(live_filters("t1", "a1", NOW))] == live_filters("t1", "a1", NOW)
    assert term("grain", "working") in filters
    assert term("user_id", "u1") in filters
    assert {"bool": {"must_not": [{"exists": {"field": "conversation_id"}}]}} in filters


def test_a_lexical_body_is_one_cross_fields_match_of_the_words_with_the_filters() -> None:
    body = lexical_body("launch alice", 5, [term("agent_id", "a1")])

    assert body["query"]["bool"] == {
        "must": [
            {"multi_match": {"query": "launch alice", "fields": list(LEXICAL_FIELDS), "type": "cross_fields"}}
        ],
        "filter": [term("agent_id", "a1")],
    }


def test_a_page_body_continues_after_sort_values_only_when_given_some() -> None:
    # GIVEN
    first = records_page_body([], 3, NEWEST_FIRST)
    # WHEN
    next_page = records_page_body([], 3, NEWEST_FIRST, [1, "mem_1"])

    # THEN
    assert "search_after" not in first
    assert next_page == {**first, "search_after": [1, "mem_1"]}


def test_a_list_cursor_carries_its_position_and_refuses_another_binding_or_a_bool() -> None:
    # GIVEN
    binding = {"t": "t1", "a": "a1", "g": None}
    hits = [{"sort": [3, "mem_3"]}, {"sort": [2, "mem_2"]}, {"sort": [1, "mem_1"]}]

    # WHEN
    cursor = next_page_cursor(binding, hits, 2)

    # THEN
    assert cursor is not None and list_after(cursor, binding) == [2, "mem_2"]
    assert next_page_cursor(binding, hits[:2], 2) is None  # no extra hit: the last page
    with pytest.raises(ValidationFailedError):
        list_after(cursor, {**binding, "a": "a2"})
    with pytest.raises(ValidationFailedError):
        list_after(encode_cursor({**binding, "s": [True, "mem_1"]}), binding)


def test_audit_events_body_reads_one_more_than_the_page_of_one_record() -> None:
    # WHEN
    body = audit_events_body("t1", "a1", "mem_1", 10, ["x", "mem_1", "forget"])

    # THEN
    assert body["size"] == 11
    assert term("record_id", "mem_1") in body["query"]["bool"]["filter"]
    assert body["search_after"] == ["x", "mem_1", "forget"]


def test_retention_reads_and_deletes_the_same_records() -> None:
    # GIVEN
    cutoff = NOW - timedelta(days=30)

    # WHEN
    candidates = candidates_body("t1", Grain.DAILY, cutoff, 100)

    # THEN
    assert candidates["query"] == older_than_query("t1", Grain.DAILY, cutoff)
    assert "search_after" not in candidates


@pytest.mark.parametrize(("refresh", "expected"), [(False, None), (True, "true")])
def test_delete_by_query_refreshes_with_true_only(refresh: bool, expected: str | None) -> None:
    params = delete_by_query_params(refresh)

    assert params.get("refresh") == expected
    assert params["slices"] == "auto" and params["conflicts"] == "proceed"


def test_a_search_count_counts_a_zero_hit_search_as_one() -> None:
    # GIVEN
    day = datetime(2026, 11, 22, tzinfo=UTC)

    # WHEN
    body = search_count_body("t1", "a1", day, hits=0)

    # THEN
    assert body["scripted_upsert"] is True
    assert body["script"]["source"] == SEARCH_COUNT_SCRIPT
    assert body["script"]["params"] == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "day": "2026-11-22T00:00:00.000000Z",
        "zero_hits": 1,
    }
