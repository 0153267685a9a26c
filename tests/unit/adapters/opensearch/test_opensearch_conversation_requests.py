"""Request shape of `OpenSearchStore.conversation_tail`: the turns a new turn is embedded with.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses. Sort values are what OpenSearch returns for a ``date``
sort: epoch milliseconds (the stored strings keep microseconds).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    ALIAS,
    DIM,
    MODEL,
    Cluster,
    hit,
    record,
    search_response,
)

from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.model.records import MemoryKind, MemoryRecord

BEFORE = datetime(2026, 11, 20, 14, 3, 0, 500_000, tzinfo=UTC)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def store(client: OpenSearch) -> OpenSearchStore:
    return OpenSearchStore(client, ALIAS, DIM, MODEL, check=False, refresh=False)


def turn(record_id: str, occurred: datetime, **fields: Any) -> MemoryRecord:
    values: dict[str, Any] = {
        "role": "user",
        "kind": MemoryKind.CONVERSATION,
        "conversation_id": "c-1",
        "occurred_at": occurred,
    }
    return record(record_id, **(values | fields))


def turn_hit(r: MemoryRecord) -> dict[str, Any]:
    """A hit as OpenSearch sorts it: (epoch milliseconds of occurred_at, id)."""
    return hit(r, 0.0, sort=[(r.occurred_at - _EPOCH) // _MS, r.id])


def newest_first(*records: MemoryRecord) -> dict[str, Any]:
    ordered = sorted(records, key=lambda r: ((r.occurred_at - _EPOCH) // _MS, r.id), reverse=True)
    return search_response(*(turn_hit(r) for r in ordered))


def test_one_routed_search_newest_first_returns_the_last_turns_oldest_first(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN three earlier turns of the conversation, and one more than the limit asked
    turns = [turn(f"mem_{i}", BEFORE - timedelta(minutes=4 - i)) for i in range(4)]
    cluster.reply(newest_first(*turns))

    # WHEN the last three turns before BEFORE are read
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 3)

    # THEN one search routed to the agent's shard, newest first, limit + 1 hits, without vectors
    cluster.done()
    (sent,) = cluster.sent
    assert (sent.method, sent.path, sent.params) == ("POST", f"/{ALIAS}/_search", {"routing": "t1:a1"})
    assert sent.body["size"] == 4
    assert sent.body["_source"] == {"excludes": ["vector", "spaces"]}
    assert sent.body["sort"] == [{"occurred_at": {"order": "desc"}}, {"id": {"order": "desc"}}]
    assert "search_after" not in sent.body
    # AND filtered to this agent's live working turns of that conversation; the range takes the
    # whole millisecond of BEFORE (dates compare to the millisecond), the store cuts to the µs
    assert sent.body["query"] == {
        "bool": {
            "filter": [
                {"term": {"tenant_id": "t1"}},
                {"term": {"agent_id": "a1"}},
                {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}},
                {"term": {"grain": "working"}},
                {"term": {"conversation_id": "c-1"}},
                {"range": {"occurred_at": {"lt": "2026-11-20T14:03:00.501000Z"}}},
            ]
        }
    }
    # AND the three newest, oldest first
    assert [r.id for r in found] == ["mem_1", "mem_2", "mem_3"]


def test_expiry_does_not_hide_a_turn(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a turn that has expired (the port passes no clock: only forgetting hides a turn)
    expired = turn("mem_old", BEFORE - timedelta(days=40), expires_at=BEFORE - timedelta(days=10))
    cluster.reply(newest_first(expired))

    # WHEN the conversation's tail is asked for
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 5)

    # THEN the expired turn is in it, and the query never filtered on expiry
    assert [r.id for r in found] == ["mem_old"]
    assert "expires_at" not in str(cluster.sent[0].body["query"])


def test_turns_in_the_millisecond_of_before_are_cut_to_the_microsecond(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN turns around BEFORE: 100µs earlier, at BEFORE exactly, 300µs later in its millisecond
    early = turn("mem_z", BEFORE - timedelta(microseconds=100))  # 14:03:00.499900
    at_before = turn("mem_e", BEFORE)  # 14:03:00.500000: the new turn's own instant
    later = turn("mem_l", BEFORE + timedelta(microseconds=300))  # 14:03:00.500300, same ms
    older = turn("mem_a", BEFORE - timedelta(seconds=5))
    first = newest_first(early, at_before, later, older)
    cluster.reply(first).reply(search_response())

    # WHEN reading the last three turns before BEFORE
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 3)

    # THEN neither the turn at BEFORE nor the later one: strictly earlier only; and as the full
    # first page held only two such turns, the next page was asked for
    assert [r.id for r in found] == ["mem_a", "mem_z"]
    cluster.done()
    assert cluster.sent[1].body["search_after"] == first["hits"]["hits"][-1]["sort"]


def test_a_millisecond_that_goes_on_past_the_page_is_read_to_its_end_and_ordered_to_the_microsecond(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN four turns in one millisecond whose ids run against their microseconds (OpenSearch
    # sorts them by id within the millisecond), and an older turn
    base = BEFORE - timedelta(seconds=1)
    same_ms = [
        turn(f"mem_{c}", base + timedelta(microseconds=us))
        for c, us in zip("dcba", (1, 2, 3, 4), strict=True)
    ]
    older = turn("mem_x", base - timedelta(seconds=1))
    page1 = newest_first(*same_ms)["hits"]["hits"][:3]  # limit 2: a page of 3, all of that ms
    page2 = newest_first(*same_ms, older)["hits"]["hits"][3:]
    cluster.reply(search_response(*page1)).reply(search_response(*page2))

    # WHEN the last two turns are read
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 2)

    # THEN the second page resumes after the first one's last sort values, and once the older
    # millisecond shows up the whole millisecond is known: the two latest by microsecond win
    cluster.done()
    assert len(cluster.sent) == 2
    assert cluster.sent[1].body["search_after"] == page1[-1]["sort"]
    assert cluster.sent[1].body["size"] == 3
    assert [r.id for r in found] == ["mem_b", "mem_a"]  # µs 3 then 4, not the id order


def test_an_extra_hit_of_an_older_millisecond_ends_the_read_in_one_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    turns = [turn(f"mem_{i}", BEFORE - timedelta(seconds=10 - i)) for i in range(10)]
    cluster.reply(search_response(*newest_first(*turns)["hits"]["hits"][:3]))

    # WHEN
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 2)

    # THEN
    cluster.done()
    assert len(cluster.sent) == 1
    assert [r.id for r in found] == ["mem_8", "mem_9"]


def test_a_short_conversation_returns_what_there_is(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(newest_first(turn("mem_1", BEFORE - timedelta(seconds=1))))

    assert [r.id for r in store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 5)] == ["mem_1"]
    assert len(cluster.sent) == 1


def test_no_turn_before_is_an_empty_list(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(search_response())

    assert store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 5) == []


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_asks_nothing(client: OpenSearch, cluster: Cluster, limit: int) -> None:
    assert store(client).conversation_tail("t1", "a1", "c-1", BEFORE, limit) == []
    assert cluster.sent == []


def test_another_agents_document_is_never_returned(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a response that (against the filters) holds a document of another agent
    mine = turn("mem_mine", BEFORE - timedelta(seconds=2))
    theirs = turn("mem_theirs", BEFORE - timedelta(seconds=1), agent="a2")
    cluster.reply(newest_first(mine, theirs))

    # WHEN the conversation's tail is asked for
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 5)

    # THEN only the agent's own turn comes back
    assert [r.id for r in found] == ["mem_mine"]


def test_turns_come_back_with_their_speaker_and_context(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    said = turn(
        "mem_1",
        BEFORE - timedelta(seconds=1),
        speaker="Bob",
        context="Bob: (this turn)\nAlice: When do we launch?",
    )
    cluster.reply(newest_first(said))

    # WHEN
    [found] = store(client).conversation_tail("t1", "a1", "c-1", BEFORE, 3)

    # THEN
    assert found == said
    assert (found.speaker, found.context) == ("Bob", "Bob: (this turn)\nAlice: When do we launch?")


def test_a_naive_before_is_read_as_utc(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(newest_first(turn("mem_1", BEFORE - timedelta(seconds=1))))

    # WHEN
    found = store(client).conversation_tail("t1", "a1", "c-1", BEFORE.replace(tzinfo=None), 3)

    # THEN
    assert [r.id for r in found] == ["mem_1"]
    assert {"range": {"occurred_at": {"lt": "2026-11-20T14:03:00.501000Z"}}} in cluster.sent[0].body["query"][
        "bool"
    ]["filter"]
