"""The stored memory record: what it speaks about, when it may be returned, what it may hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agent_memory.model.grains import Grain, period_bounds
from agent_memory.model.ids import content_hash, summary_id
from agent_memory.model.limits import MAX_METADATA_BYTES, MAX_METADATA_DEPTH
from agent_memory.model.records import MemoryKind, MemoryRecord, check_metadata, normalise_topic

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def record(**fields: Any) -> MemoryRecord:
    content = fields.pop("content", "Alice moved the launch to March 3.")
    values: dict[str, Any] = {
        "id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa",
        "tenant_id": "t1",
        "agent_id": "a1",
        "content": content,
        "content_hash": content_hash(content),
        "created_at": NOW,
        "updated_at": NOW,
        "occurred_at": datetime(2026, 11, 20, 14, 3, tzinfo=UTC),
    }
    return MemoryRecord.model_validate({**values, **fields})


def summary(key: str = "2026-11-21", tz: str = "UTC", **fields: Any) -> MemoryRecord:
    start, end = period_bounds(Grain.DAILY, key, tz)
    return record(
        id=summary_id("t1", "a1", "daily", key),
        grain=Grain.DAILY,
        time_key=key,
        kind=MemoryKind.SUMMARY,
        period_start=start,
        period_end=end,
        occurred_at=start,
        **fields,
    )


# --- span ----------------------------------------------------------------------------------------


def test_working_memory_spans_the_moment_it_occurred() -> None:
    # GIVEN a working-memory record WHEN its span is asked for THEN it is one instant
    got = record()
    assert got.grain is Grain.WORKING
    assert got.span == (got.occurred_at, got.occurred_at)


def test_a_summary_spans_its_whole_period() -> None:
    # GIVEN
    got = summary("2026-11-21")
    # WHEN / THEN
    assert got.span == (datetime(2026, 11, 21, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC))


def test_a_local_period_is_stored_in_utc() -> None:
    # GIVEN a summary of a New York day WHEN stored THEN its span is the same instants, in UTC
    got = summary("2026-11-21", tz="America/New_York")
    assert got.span == (datetime(2026, 11, 21, 5, tzinfo=UTC), datetime(2026, 11, 22, 5, tzinfo=UTC))
    assert got.period_start is not None and got.period_start.tzinfo is UTC


def test_a_half_given_period_falls_back_to_the_moment() -> None:
    # WHEN
    got = record(period_start=datetime(2026, 11, 21, tzinfo=UTC))
    # THEN
    assert got.span == (got.occurred_at, got.occurred_at)


# --- liveness ------------------------------------------------------------------------------------


def test_a_plain_record_is_live() -> None:
    # WHEN / THEN
    assert record().is_live(NOW)


def test_a_forgotten_record_is_never_live() -> None:
    # WHEN
    forgotten = record(deleted_at=NOW - timedelta(days=1), expires_at=NOW + timedelta(days=30))
    # THEN
    assert not forgotten.is_live(NOW)
    assert not forgotten.is_live(NOW - timedelta(days=365))


def test_a_record_expires_at_its_expiry_instant() -> None:
    # GIVEN a record that expires at noon
    expiring = record(expires_at=NOW)
    # WHEN / THEN it is live just before, and not at or after that instant
    assert expiring.is_live(NOW - timedelta(microseconds=1))
    assert not expiring.is_live(NOW)
    assert not expiring.is_live(NOW + timedelta(days=1))


def test_expiry_compares_instants_not_wall_clocks() -> None:
    expiring = record(expires_at=NOW)
    # GIVEN "now" expressed in another offset, one minute before the expiry instant
    tokyo = timezone(timedelta(hours=9))
    # WHEN / THEN it is live a minute before the instant, and not at it, in that offset too
    assert expiring.is_live((NOW - timedelta(minutes=1)).astimezone(tokyo))
    assert not expiring.is_live(NOW.astimezone(tokyo))


# --- fields --------------------------------------------------------------------------------------


def test_defaults_describe_a_fresh_working_note() -> None:
    # GIVEN
    got = record()
    # WHEN / THEN
    assert (got.grain, got.kind, got.importance, got.access_count) == (Grain.WORKING, MemoryKind.NOTE, 0.5, 0)
    assert got.time_key is None
    assert got.deleted_at is None
    assert got.expires_at is None


def test_times_are_normalised_to_utc() -> None:
    # GIVEN
    got = record(
        occurred_at="2026-11-20T09:03:00-05:00",
        created_at=datetime(2026, 11, 22, 12, 0),
        expires_at="2026-12-22T17:30:00+05:30",
    )
    # WHEN / THEN
    assert got.occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)
    assert got.created_at == NOW
    assert got.expires_at == datetime(2026, 12, 22, 12, 0, tzinfo=UTC)
    assert all(t.tzinfo is UTC for t in (got.occurred_at, got.created_at, got.expires_at) if t is not None)


@pytest.mark.parametrize("field", ["tenant_id", "agent_id", "user_id"])
@pytest.mark.parametrize("bad", ["a:b", "../x", "a/b", "", "a" * 129])
def test_owner_ids_cannot_carry_separators_or_paths(field: str, bad: str) -> None:
    # WHEN / THEN
    # tenant and agent ids are joined with ':' into FIFO groups and routing keys
    with pytest.raises(ValidationError):
        record(**{field: bad})


def test_unknown_fields_are_refused() -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        record(score=0.9)


@pytest.mark.parametrize(
    ("field", "value"), [("importance", 1.5), ("importance", -0.1), ("access_count", -1)]
)
def test_numbers_are_bounded(field: str, value: float) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        record(**{field: value})


# --- topics --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "topic"),
    [
        ("launch date", "launch date"),
        ("  Launch   Date ", "launch date"),
        ("LAUNCH\tDATE\n", "launch date"),
        ("Stra\u00dfe", "strasse"),
        ("Q4\u00a0Plan", "q4 plan"),
        (None, None),
        ("", None),
        ("   \n", None),
    ],
)
def test_topics_match_regardless_of_case_and_spacing(raw: str | None, topic: str | None) -> None:
    # WHEN / THEN
    assert normalise_topic(raw) == topic


@settings(max_examples=150, deadline=None)
@given(raw=st.text(max_size=30))
def test_topic_normalisation_is_idempotent(raw: str) -> None:
    # GIVEN
    once = normalise_topic(raw)
    # WHEN / THEN
    assert normalise_topic(once) == once
    assert once is None or (once == once.strip() and "  " not in once)


# --- metadata ------------------------------------------------------------------------------------


def test_metadata_within_bounds_is_kept_as_is() -> None:
    # GIVEN
    metadata = {"any": "json", "n": 1, "nested": {"list": [1, 2, {"x": None}]}, "caf\u00e9": True}
    # WHEN / THEN
    assert check_metadata(metadata) is metadata
    assert record(metadata=metadata).metadata == metadata


def test_metadata_size_is_measured_as_compact_utf8_json() -> None:
    # GIVEN
    room = MAX_METADATA_BYTES - len('{"k":""}')
    # WHEN / THEN
    assert check_metadata({"k": "x" * room})
    assert check_metadata({"k": "\u20ac" * (room // 3)})
    with pytest.raises(ValueError, match="8192 bytes"):
        check_metadata({"k": "x" * (room + 1)})
    with pytest.raises(ValueError, match="8192 bytes"):
        check_metadata({"k": "\u20ac" * (room // 3 + 1)})
    with pytest.raises(ValidationError):
        record(metadata={"k": "x" * (room + 1)})


def test_metadata_depth_counts_objects_and_lists() -> None:
    # GIVEN
    deepest: Any = 1
    for level in range(MAX_METADATA_DEPTH - 1):
        deepest = [deepest] if level % 2 else {"k": deepest}
    allowed = {"top": deepest}
    # WHEN / THEN
    assert check_metadata(allowed) is allowed
    with pytest.raises(ValueError, match="deeper than 5"):
        check_metadata({"top": [deepest]})
    with pytest.raises(ValidationError):
        record(metadata={"top": {"k": deepest}})
    assert check_metadata({}) == {}
    assert check_metadata({"empty": [], "also": {}}) == {"empty": [], "also": {}}


def test_hostile_metadata_depth_is_refused_without_recursing() -> None:
    # GIVEN
    from agent_memory.model.records import check_metadata

    deep: dict[str, object] = {"a": []}
    cursor = deep["a"]
    for _ in range(5_000):  # far past Python's recursion limit
        nested: list[object] = []
        cursor.append(nested)  # type: ignore[attr-defined]
        cursor = nested
    # WHEN / THEN
    with pytest.raises(ValueError, match="nested deeper"):
        check_metadata(deep)


def test_nan_metadata_is_refused() -> None:
    # GIVEN
    from agent_memory.model.records import check_metadata

    # WHEN / THEN
    with pytest.raises(ValueError, match="NaN"):
        check_metadata({"x": float("nan")})
