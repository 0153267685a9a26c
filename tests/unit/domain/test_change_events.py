"""Change events: their envelope and ids (the same change is the same event), what a tenant that
chose ids only receives, and the delivery signature a receiver checks (tampering, old
timestamps, a second secret during a rotation)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fakes import utc
from tests.payloads import memory_record

from agent_memory.feed.rules.events import (
    ChangeType,
    SignatureError,
    memory_created,
    memory_forgotten,
    memory_updated,
    parse_event,
    signature,
    summary_made,
    user_erased,
    verify_signature,
)
from agent_memory.model.grains import Grain

SECRET = "whsec_" + "k" * 40
NOW = 1_800_000_000


def test_a_created_event_carries_ids_in_data_and_words_in_content() -> None:
    # GIVEN
    record = memory_record(
        "mem_aaaaaaaaaaaaaaaa",
        "Alice moved the launch to March 3.",
        user_id="u-7",
        tags=["launch"],
        topic="launch",
    )
    # WHEN
    event = memory_created(record)
    # THEN
    assert (event.type, event.tenant_id, event.agent_id) == (ChangeType.MEMORY_CREATED, "t1", "a1")
    assert event.data["memory_id"] == record.id and event.data["user_id"] == "u-7"
    assert "Alice" not in json.dumps(event.data)
    assert event.content == {"content": record.content, "topic": "launch", "tags": ["launch"]}


def test_the_same_change_is_the_same_event_and_another_change_another() -> None:
    # GIVEN a memory, and the same memory written again after it was forgotten
    first = memory_record("mem_aaaaaaaaaaaaaaaa", "The launch is on March 3.")
    again = first.model_copy(update={"created_at": utc(2026, 12, 1)})
    # WHEN
    ids = [memory_created(first).id, memory_created(first).id, memory_created(again).id]
    # THEN
    assert ids[0] == ids[1] != ids[2]
    assert ids[0].startswith("evt_")


def test_ids_only_leaves_the_content_out_of_the_body() -> None:
    # GIVEN
    event = memory_created(memory_record("mem_aaaaaaaaaaaaaaaa", "Vault combination 4417."))
    # WHEN
    bare, full = json.loads(event.delivered(False).body()), json.loads(event.delivered(True).body())
    # THEN
    assert "content" not in bare and "4417" not in json.dumps(bare)
    assert full["content"]["content"] == "Vault combination 4417."
    assert bare["id"] == full["id"] == event.id


def test_every_type_has_its_ids_and_no_words_outside_content() -> None:
    # GIVEN
    record = memory_record("mem_aaaaaaaaaaaaaaaa", "Secret words.", user_id="u-7")
    summary = memory_record(
        "sum_aaaaaaaaaaaaaaaa",
        "Secret words, summarized.",
        grain=Grain.DAILY,
        time_key="2026-11-20",
        source_ids=[record.id],
        metadata={"input_hash": "h1"},
    )
    # WHEN
    events = [
        memory_forgotten(record, utc(2026, 11, 21), "key_1", ["sum_x"]),
        user_erased("t1", "a1", "u-7", utc(2026, 11, 21), "key_1", [record.id], []),
        memory_updated(
            "t1", "a1", record.id, "feedback", utc(2026, 11, 21), key="fb_1", detail={"outcome": "confirmed"}
        ),
        summary_made(summary, "h1"),
    ]
    # THEN
    assert [e.type for e in events] == [
        ChangeType.MEMORY_FORGOTTEN,
        ChangeType.USER_ERASED,
        ChangeType.MEMORY_UPDATED,
        ChangeType.SUMMARY_MADE,
    ]
    assert all("Secret" not in json.dumps(e.data) for e in events)
    assert events[1].data["memory_ids"] == [record.id]
    assert events[3].data["source_ids"] == [record.id] and events[3].content == {"content": summary.content}
    assert len({e.id for e in events}) == 4


def test_an_eventbridge_event_is_read_as_the_change_event_it_carries() -> None:
    # GIVEN what SQS holds after the bus's rule: the EventBridge event, the change in its detail
    event = memory_created(memory_record("mem_aaaaaaaaaaaaaaaa", "Hello."))
    wrapped = {
        "version": "0",
        "id": "x",
        "detail-type": event.type.value,
        "source": "agent-memory",
        "detail": json.loads(event.body()),
    }
    # WHEN / THEN
    assert parse_event(json.dumps(wrapped)) == parse_event(event.body()) == event


# --- signatures ---------------------------------------------------------------------------------


def test_a_signed_body_verifies_and_returns_its_timestamp() -> None:
    # GIVEN
    body = b'{"id": "evt_1"}'
    # WHEN
    header = signature(SECRET, body, NOW)
    # THEN
    assert header.startswith(f"t={NOW},v1=")
    assert verify_signature(SECRET, body, header, now=NOW + 10) == NOW


@pytest.mark.parametrize(
    ("body", "secret", "now"),
    [
        (b'{"id": "evt_2"}', SECRET, NOW),  # the body changed
        (b'{"id": "evt_1"}', "whsec_" + "x" * 40, NOW),  # another secret
        (b'{"id": "evt_1"}', SECRET, NOW + 301),  # replayed after the tolerance
        (b'{"id": "evt_1"}', SECRET, NOW - 301),  # from the future
    ],
    ids=["tampered body", "wrong secret", "too old", "too far ahead"],
)
def test_a_tampered_body_another_secret_or_an_old_timestamp_is_refused(
    body: bytes, secret: str, now: int
) -> None:
    # GIVEN
    header = signature(SECRET, b'{"id": "evt_1"}', NOW)
    # WHEN / THEN
    with pytest.raises(SignatureError):
        verify_signature(secret, body, header, now=now)


@pytest.mark.parametrize("header", [None, "", "v1=abc", "t=1", "t=x,v1=abc", f"t={NOW},v2=abc"])
def test_a_missing_or_malformed_header_is_refused(header: str | None) -> None:
    # WHEN / THEN
    with pytest.raises(SignatureError):
        verify_signature(SECRET, b"{}", header, now=NOW)


def test_a_timestamp_changed_in_the_header_breaks_the_signature() -> None:
    # GIVEN a captured delivery whose timestamp an attacker moves forward to pass the tolerance
    header = signature(SECRET, b"{}", NOW)
    moved = header.replace(f"t={NOW}", f"t={NOW + 1000}")
    # WHEN / THEN
    with pytest.raises(SignatureError, match="does not match"):
        verify_signature(SECRET, b"{}", moved, now=NOW + 1000)


def test_any_of_several_v1_signatures_may_match() -> None:
    # GIVEN a header with a stale signature first (as during a secret rotation)
    good = signature(SECRET, b"{}", NOW).split(",")[1]
    header = f"t={NOW},v1={'0' * 64},{good}"
    # WHEN / THEN
    assert verify_signature(SECRET, b"{}", header, now=NOW) == NOW


@given(st.binary(max_size=200), st.integers(0, 2**40))
def test_every_body_signed_verifies_and_no_flipped_byte_does(body: bytes, at: int) -> None:
    """A signature verifies its own body at its own time, and never the body with a byte changed."""
    header = signature(SECRET, body, at)
    assert verify_signature(SECRET, body, header, now=at) == at
    if body:
        flipped = bytes([body[0] ^ 1]) + body[1:]
        with pytest.raises(SignatureError):
            verify_signature(SECRET, flipped, header, now=at)


def test_a_summary_of_thousands_lists_the_first_thousand_sources_and_counts_them_all() -> None:
    # GIVEN a busy day's summary of 5,000 memories
    sources = [f"mem_{i:016d}" for i in range(5_000)]
    summary = memory_record(
        "sum_aaaaaaaaaaaaaaaa", "A busy day.", grain=Grain.DAILY, time_key="2026-11-20", source_ids=sources
    )
    # WHEN
    event = summary_made(summary, "h1")
    # THEN it stays well within an EventBridge entry (256 KiB)
    assert event.data["source_ids"] == sources[:1_000] and event.data["source_count"] == 5_000
    assert len(event.body()) < 64 * 1024
