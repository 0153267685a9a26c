"""The change feed onto EventBridge (botocore Stubber): each event an entry of the bus with its
type as detail-type, in calls of at most 10 entries and 256 KiB; refused entries sent once more;
and nothing raised, whatever the bus does (the change is stored; losing its event is counted)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from tests.payloads import memory_record

from agent_memory.adapters.eventbridge_feed import EventBridgeChangeFeed
from agent_memory.feed.rules.events import ChangeEvent, memory_created

BUS = "agent-memory-dev-changes"


@pytest.fixture
def stubbed() -> Iterator[tuple[EventBridgeChangeFeed, Stubber]]:
    client = boto3.client("events", region_name="us-east-1")
    with Stubber(client) as stub:
        yield EventBridgeChangeFeed(BUS, client=client), stub
        stub.assert_no_pending_responses()


def _events(n: int, size: int = 10) -> list[ChangeEvent]:
    return [
        memory_created(memory_record(f"mem_{i:016d}".replace("0", "a"), "x" * size + str(i)))
        for i in range(n)
    ]


def _ok(n: int) -> dict[str, Any]:
    return {"FailedEntryCount": 0, "Entries": [{"EventId": f"e{i}"} for i in range(n)]}


def test_each_event_is_an_entry_of_the_bus_with_its_type_and_its_whole_body(
    stubbed: tuple[EventBridgeChangeFeed, Stubber],
) -> None:
    # GIVEN
    feed, stub = stubbed
    [event] = _events(1)
    entry = {
        "Source": "agent-memory",
        "DetailType": "memory.created",
        "Detail": event.body().decode(),
        "Time": event.time,
        "EventBusName": BUS,
    }
    stub.add_response("put_events", _ok(1), {"Entries": [entry]})
    # WHEN / THEN (the stub checks the request)
    feed.publish([event])
    assert json.loads(entry["Detail"])["content"]["content"].startswith("x")  # type: ignore[arg-type]


def test_events_go_in_calls_of_at_most_ten_entries(stubbed: tuple[EventBridgeChangeFeed, Stubber]) -> None:
    # GIVEN 23 events
    feed, stub = stubbed
    for n in (10, 10, 3):
        stub.add_response("put_events", _ok(n), {"Entries": [ANY] * n})
    # WHEN / THEN three calls
    feed.publish(_events(23))


def test_events_published_one_at_a_time_while_batched_go_in_one_call_on_leaving(
    stubbed: tuple[EventBridgeChangeFeed, Stubber],
) -> None:
    # GIVEN a writer's batch: twelve stored writes, each publishing its own event
    feed, stub = stubbed
    events = _events(12)
    # WHEN the batch runs, nothing is sent; on leaving, two calls carry all twelve
    with feed.batched():
        for event in events:
            feed.publish([event])
        with feed.batched():  # nested: still held
            pass
        stub.assert_no_pending_responses()
        for n in (10, 2):
            stub.add_response("put_events", _ok(n), {"Entries": [ANY] * n})
    # THEN (the stub checks the calls) and, after the batch, a publish is sent at once again
    stub.add_response("put_events", _ok(1), {"Entries": [ANY]})
    feed.publish(_events(1))


def test_large_events_go_in_calls_of_at_most_256_kib() -> None:
    # GIVEN ten events of 60 KB each
    batches = EventBridgeChangeFeed._batches(
        [{"Detail": e.body().decode()} for e in _events(10, size=60_000)]
    )
    # WHEN / THEN four to a call at most
    assert [len(b) for b in batches] == [4, 4, 2]


def test_refused_entries_are_sent_once_more(stubbed: tuple[EventBridgeChangeFeed, Stubber]) -> None:
    # GIVEN the bus refuses the second of three entries, then takes it
    feed, stub = stubbed
    events = _events(3)
    refused = {
        "FailedEntryCount": 1,
        "Entries": [
            {"EventId": "e0"},
            {"ErrorCode": "InternalFailure", "ErrorMessage": "x"},
            {"EventId": "e2"},
        ],
    }
    stub.add_response("put_events", refused, {"Entries": [ANY] * 3})
    second = {"Entries": [{**_entry(events[1])}]}
    stub.add_response("put_events", _ok(1), second)
    # WHEN / THEN
    feed.publish(events)


def _entry(event: ChangeEvent) -> dict[str, Any]:
    return {
        "Source": "agent-memory",
        "DetailType": event.type.value,
        "Detail": event.body().decode(),
        "Time": event.time,
        "EventBusName": BUS,
    }


def test_a_bus_that_fails_never_raises_into_the_change(
    stubbed: tuple[EventBridgeChangeFeed, Stubber],
) -> None:
    # GIVEN a call that fails, and entries refused twice
    feed, stub = stubbed
    stub.add_client_error("put_events", "AccessDeniedException", "no")
    refused = {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "ThrottlingException", "ErrorMessage": "x"}]}
    stub.add_response("put_events", refused, {"Entries": [ANY]})
    stub.add_response("put_events", refused, {"Entries": [ANY]})
    # WHEN / THEN both publishes return
    feed.publish(_events(1))
    feed.publish(_events(1))
