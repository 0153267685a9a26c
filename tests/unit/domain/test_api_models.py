"""The HTTP contract's request models: what a client may send, and every limit it runs into."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from tests.payloads import CONTRACT_ITEM, CONTRACT_SEARCH

from agent_memory.contract.v1 import ConversationMessage, SearchRequest, WriteItem, WriteRequest
from agent_memory.model.grains import Grain
from agent_memory.model.limits import (
    MAX_CONTENT_BYTES,
    MAX_ITEMS_PER_REQUEST,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_RESULTS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TTL_DAYS,
)
from agent_memory.model.records import Link, MemoryKind, Source


def item(**fields: Any) -> dict[str, Any]:
    return {"content": "Alice moved the launch to March 3.", **fields}


def write(**fields: Any) -> WriteRequest:
    return WriteRequest.model_validate({"items": [item(**fields)]})


def refused(model: Any, body: Any) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    return caught.value


# --- the contract's own examples -----------------------------------------------------------------


def test_the_contract_example_item_validates_field_by_field() -> None:
    # GIVEN the example body of the contract, sent as JSON
    request = WriteRequest.model_validate_json(json.dumps({"items": [CONTRACT_ITEM]}))
    # WHEN it is parsed THEN every field arrives typed and intact
    (got,) = request.to_items()
    assert got.content == CONTRACT_ITEM["content"]
    assert got.role == "user"
    assert got.occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)
    assert got.conversation_id == "c-42"
    assert got.topic == "launch date"
    assert got.importance == 0.8
    assert got.kind is MemoryKind.DECISION
    assert got.tags == ["launch"]
    assert got.ttl_days == 30
    assert got.user_id == "u-7"
    assert got.source == Source(platform="slack", channel_id="C1", message_id="m-9")
    assert got.links == [Link(entity_type="person", entity_id="alice", weight=1.0)]
    assert got.metadata == {"any": "json"}


def test_only_content_is_required() -> None:
    # WHEN
    (got,) = WriteRequest.model_validate({"items": [{"content": "hi"}]}).to_items()
    # THEN
    assert got.occurred_at is None  # the service fills in "now"
    assert (got.kind, got.role, got.importance, got.ttl_days, got.user_id) == (None, None, None, None, None)
    assert (got.tags, got.links, got.metadata) == ([], [], {})
    with pytest.raises(ValidationError):
        WriteItem.model_validate({"role": "user"})


def test_content_is_kept_verbatim() -> None:
    # GIVEN
    text = "  Alice\tmoved the launch.\n"
    # WHEN / THEN
    assert write(content=text).to_items()[0].content == text


def test_conversation_form_carries_its_ids_into_each_item() -> None:
    # GIVEN the conversation form with a shared conversation and user
    body = {
        "conversation_id": "c-42",
        "user_id": "u-7",
        "messages": [
            {"role": "user", "content": "When is the launch?", "occurred_at": "2026-11-20T14:03:00Z"},
            {"role": "assistant", "content": "March 3."},
        ],
    }
    # WHEN it is turned into items
    items = WriteRequest.model_validate(body).to_items()
    # THEN each message is one conversation item that keeps its role, order, and time
    assert [i.content for i in items] == ["When is the launch?", "March 3."]
    assert [i.role for i in items] == ["user", "assistant"]
    assert all(i.conversation_id == "c-42" and i.user_id == "u-7" for i in items)
    assert all(i.kind is MemoryKind.CONVERSATION for i in items)
    assert items[0].occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)
    assert items[1].occurred_at is None


def test_conversation_form_without_ids_is_allowed() -> None:
    # WHEN
    items = WriteRequest.model_validate({"messages": [{"role": "tool", "content": "42"}]}).to_items()
    # THEN
    assert items[0].conversation_id is None
    assert items[0].user_id is None


def test_conversation_messages_need_a_known_role() -> None:
    # WHEN / THEN
    refused(WriteRequest, {"messages": [{"content": "hi"}]})
    refused(WriteRequest, {"messages": [{"role": "robot", "content": "hi"}]})


def test_the_contract_example_search_validates() -> None:
    # WHEN
    request = SearchRequest.model_validate_json(json.dumps(CONTRACT_SEARCH))
    # THEN
    assert request.query == "when is the launch?"
    assert request.grain is Grain.WORKING
    assert (request.min_days_ago, request.max_days_ago, request.max_results) == (0, 365, 10)
    assert request.as_of == datetime(2026, 11, 22, tzinfo=UTC)
    assert request.kinds == [MemoryKind.DECISION]
    assert request.user_id is None


def test_search_defaults() -> None:
    # WHEN
    request = SearchRequest.model_validate({})
    # THEN
    assert request.query is None
    assert request.grain == "all"
    assert request.min_days_ago == 0
    assert request.max_days_ago is None
    assert request.max_results == 10
    assert request.as_of is None


# --- content size ----------------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["a", "\u00e9", "\u20ac", "\U0001f600"])  # 1, 2, 3 and 4 UTF-8 bytes
def test_content_limit_counts_utf8_bytes_not_characters(char: str) -> None:
    # GIVEN content made of one character repeated up to exactly 16 KiB of UTF-8
    width = len(char.encode("utf-8"))
    fits = char * (MAX_CONTENT_BYTES // width) + "a" * (MAX_CONTENT_BYTES % width)
    assert len(fits.encode("utf-8")) == MAX_CONTENT_BYTES
    # WHEN / THEN it is accepted, and one more byte (or one more character) is refused
    assert write(content=fits).to_items()[0].content == fits
    refused(WriteRequest, {"items": [item(content=fits + "a")]})
    refused(WriteRequest, {"items": [item(content=fits[:-1] + char + char)]})
    refused(WriteRequest, {"messages": [{"role": "user", "content": fits + "a"}]})


def test_content_of_few_characters_but_many_bytes_is_refused() -> None:
    # GIVEN fewer than 16384 characters that need more than 16384 bytes
    content = "\u20ac" * (MAX_CONTENT_BYTES // 3 + 1)
    assert len(content) < MAX_CONTENT_BYTES
    # WHEN / THEN it is refused, naming the limit in bytes
    error = refused(WriteRequest, {"items": [item(content=content)]})
    assert "16384" in str(error)


@pytest.mark.parametrize("content", ["", " ", "\n\t  ", "\u3000"])
def test_blank_content_is_refused(content: str) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(content=content)]})
    refused(ConversationMessage, {"role": "user", "content": content})


def test_content_that_utf8_cannot_encode_is_refused_not_crashed() -> None:
    # GIVEN a lone surrogate, which json.loads accepts from "\\ud800"
    body = json.loads('{"items": [{"content": "x\\ud800"}]}')
    # WHEN / THEN it is refused (a 400), not a crash
    refused(WriteRequest, body)


# --- request shape ---------------------------------------------------------------------------------


def test_item_count_is_bounded() -> None:
    # WHEN / THEN
    assert len(WriteRequest.model_validate({"items": [item()] * MAX_ITEMS_PER_REQUEST}).to_items()) == 100
    refused(WriteRequest, {"items": [item()] * (MAX_ITEMS_PER_REQUEST + 1)})
    refused(WriteRequest, {"items": []})
    message = {"role": "user", "content": "hi"}
    assert len(WriteRequest.model_validate({"messages": [message] * MAX_ITEMS_PER_REQUEST}).to_items()) == 100
    refused(WriteRequest, {"messages": [message] * (MAX_ITEMS_PER_REQUEST + 1)})
    refused(WriteRequest, {"messages": []})


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"conversation_id": "c-42"},
        {"items": None, "messages": None},
        {"items": [{"content": "a"}], "messages": [{"role": "user", "content": "b"}]},
        {"items": [{"content": "a"}], "conversation_id": "c-42"},
        {"items": [{"content": "a"}], "user_id": "u-7"},
        [],
        "items",
        None,
    ],
)
def test_exactly_one_form_is_required(body: Any) -> None:
    # WHEN / THEN
    refused(WriteRequest, body)


@pytest.mark.parametrize(
    "body",
    [
        {"items": [{"content": "a"}], "extra": 1},
        {"items": [{"content": "a", "contents": "b"}]},
        {"items": [{"content": "a", "id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa"}]},
        {"items": [{"content": "a", "tenant_id": "other"}]},
        {"items": [{"content": "a", "source": {"platform": "slack", "team": "T1"}}]},
        {"items": [{"content": "a", "links": [{"entity_type": "p", "entity_id": "x", "w": 1}]}]},
        {"messages": [{"role": "user", "content": "a", "kind": "fact"}]},
    ],
)
def test_unknown_fields_are_refused_at_every_level(body: dict[str, Any]) -> None:
    # WHEN
    error = refused(WriteRequest, body)
    # THEN
    assert any(e["type"] == "extra_forbidden" for e in error.errors())


def test_unknown_search_fields_are_refused() -> None:
    # WHEN / THEN
    refused(SearchRequest, {"query": "x", "agent_id": "someone-else"})
    refused(SearchRequest, {"query": "x", "tenant_id": "other"})


# --- tags, metadata, numbers ---------------------------------------------------------------------


def test_tags_are_bounded_in_count_and_length() -> None:
    # WHEN / THEN
    assert write(tags=[f"t{i}" for i in range(MAX_TAGS)]).to_items()[0].tags[-1] == "t19"
    refused(WriteRequest, {"items": [item(tags=[f"t{i}" for i in range(MAX_TAGS + 1)])]})
    assert write(tags=["x" * MAX_TAG_CHARS]).to_items()[0].tags == ["x" * 64]
    refused(WriteRequest, {"items": [item(tags=["x" * (MAX_TAG_CHARS + 1)])]})


def test_tags_are_trimmed_and_must_not_be_blank() -> None:
    # WHEN / THEN
    assert write(tags=["  launch  ", "q4 plan"]).to_items()[0].tags == ["launch", "q4 plan"]
    refused(WriteRequest, {"items": [item(tags=[""])]})
    refused(WriteRequest, {"items": [item(tags=["   "])]})


@pytest.mark.parametrize("tag", ["a\x00b", "a\nb", "a\tb", "a\x1bb", "a\x7fb", "a\x85b", "a\x9bb"])
def test_tags_with_control_characters_are_refused(tag: str) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(tags=[tag])]})
    refused(SearchRequest, {"tags": [tag]})


def test_tags_may_be_any_printable_unicode() -> None:
    # WHEN / THEN
    assert write(tags=["caf\u00e9", "\u65e5\u672c", "a/b:c"]).to_items()[0].tags == [
        "caf\u00e9",
        "\u65e5\u672c",
        "a/b:c",
    ]


def test_metadata_is_bounded_in_encoded_bytes() -> None:
    # GIVEN metadata whose compact JSON is exactly 8 KiB: {"k":"..."} is 8 bytes plus the value
    room = MAX_METADATA_BYTES - len('{"k":""}')
    # WHEN / THEN it is accepted, and one byte more is refused
    assert write(metadata={"k": "x" * room}).to_items()[0].metadata == {"k": "x" * room}
    refused(WriteRequest, {"items": [item(metadata={"k": "x" * (room + 1)})]})
    # AND multibyte text counts in UTF-8 bytes, not characters
    assert write(metadata={"k": "\u00e9" * (room // 2)}).to_items()[0].metadata
    refused(WriteRequest, {"items": [item(metadata={"k": "\u00e9" * (room // 2 + 1)})]})


def _nested(depth: int) -> dict[str, Any]:
    value: Any = "leaf"
    for level in range(depth):
        value = {f"l{level}": value} if level % 2 == 0 else [value]
    return value if isinstance(value, dict) else {"top": value}


def test_metadata_is_bounded_in_depth() -> None:
    # GIVEN
    ok = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    # WHEN / THEN
    assert write(metadata=ok).to_items()[0].metadata == ok
    refused(WriteRequest, {"items": [item(metadata={"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}})]})
    # lists count as levels too
    assert write(metadata={"a": [[[[1]]]]}).to_items()[0].metadata == {"a": [[[[1]]]]}
    refused(WriteRequest, {"items": [item(metadata={"a": [[[[[1]]]]]})]})
    refused(WriteRequest, {"items": [item(metadata=_nested(MAX_METADATA_DEPTH + 3))]})


def test_metadata_must_be_an_object() -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(metadata=["a"])]})
    refused(WriteRequest, {"items": [item(metadata="a")]})


@pytest.mark.parametrize("importance", [-0.01, 1.01, 2, -1, float("nan"), float("inf"), "high"])
def test_importance_must_be_between_0_and_1(importance: Any) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(importance=importance)]})


@pytest.mark.parametrize("importance", [0, 0.0, 0.5, 1, 1.0])
def test_importance_bounds_are_inclusive(importance: float) -> None:
    # WHEN / THEN
    assert write(importance=importance).to_items()[0].importance == importance


def test_ttl_days_is_at_least_one_day() -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(ttl_days=0)]})
    refused(WriteRequest, {"items": [item(ttl_days=-1)]})
    refused(WriteRequest, {"items": [item(ttl_days=MAX_TTL_DAYS + 1)]})
    refused(WriteRequest, {"items": [item(ttl_days=1.5)]})
    assert write(ttl_days=1).to_items()[0].ttl_days == 1
    assert write(ttl_days=MAX_TTL_DAYS).to_items()[0].ttl_days == MAX_TTL_DAYS


def test_summaries_cannot_be_written_by_clients() -> None:
    # WHEN
    error = refused(WriteRequest, {"items": [item(kind="summary")]})
    # THEN
    assert "summar" in str(error)
    refused(WriteRequest, {"items": [item(kind="gossip")]})
    kinds = {k.value for k in MemoryKind} - {"summary"}
    for kind in kinds:
        assert write(kind=kind).to_items()[0].kind == kind


def test_roles_are_a_closed_set() -> None:
    # WHEN / THEN
    for role in ("user", "assistant", "system", "tool"):
        assert write(role=role).to_items()[0].role == role
    refused(WriteRequest, {"items": [item(role="admin")]})


def test_topic_length_is_bounded() -> None:
    # WHEN / THEN
    assert write(topic="t" * 256).to_items()[0].topic == "t" * 256
    refused(WriteRequest, {"items": [item(topic="t" * 257)]})


def test_links_are_validated() -> None:
    # WHEN / THEN
    refused(
        WriteRequest, {"items": [item(links=[{"entity_type": "person", "entity_id": "a", "weight": 1.5}])]}
    )
    refused(WriteRequest, {"items": [item(links=[{"entity_type": "a b", "entity_id": "a"}])]})
    refused(WriteRequest, {"items": [item(links=[{"entity_type": "person", "entity_id": ""}])]})
    refused(WriteRequest, {"items": [item(links=[{"entity_type": "p", "entity_id": "x"}] * 51)]})
    assert write(links=[{"entity_type": "person", "entity_id": "alice"}]).to_items()[0].links[0].weight == 1.0


# --- ids -----------------------------------------------------------------------------------------


BAD_IDS = ["../x", "..", ".hidden", "a/b", "a\\b", "a b", "", " ", "-a", "_a", "a" * 129, "a\n", "\u00e9"]


@pytest.mark.parametrize("bad", [*BAD_IDS, "a:b", "tenant:agent"])
def test_user_ids_cannot_be_paths_or_contain_separators(bad: str) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(user_id=bad)]})
    refused(WriteRequest, {"messages": [{"role": "user", "content": "hi"}], "user_id": bad})
    refused(SearchRequest, {"user_id": bad})


@pytest.mark.parametrize("bad", BAD_IDS)
def test_conversation_ids_cannot_be_paths(bad: str) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(conversation_id=bad)]})
    refused(WriteRequest, {"messages": [{"role": "user", "content": "hi"}], "conversation_id": bad})


@pytest.mark.parametrize("good", ["u-7", "U.7_x", "7", "a" * 128])
def test_user_ids_accept_the_documented_alphabet(good: str) -> None:
    # WHEN / THEN
    assert write(user_id=good).to_items()[0].user_id == good
    assert SearchRequest.model_validate({"user_id": good}).user_id == good


@pytest.mark.parametrize("good", ["c-42", "slack:C1:1712345.678", "alice@example.com", "a" * 128])
def test_conversation_ids_may_carry_platform_references(good: str) -> None:
    # WHEN / THEN
    assert write(conversation_id=good).to_items()[0].conversation_id == good


# --- times ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("2026-11-20T14:03:00Z", datetime(2026, 11, 20, 14, 3, tzinfo=UTC)),
        ("2026-11-20T14:03:00", datetime(2026, 11, 20, 14, 3, tzinfo=UTC)),  # naive is read as UTC
        ("2026-11-20T19:33:00+05:30", datetime(2026, 11, 20, 14, 3, tzinfo=UTC)),
        ("2026-11-20T09:03:00-05:00", datetime(2026, 11, 20, 14, 3, tzinfo=UTC)),
        ("1999-01-01T00:00:00Z", datetime(1999, 1, 1, tzinfo=UTC)),  # history imports are fine
    ],
)
def test_times_are_read_as_utc(sent: str, stored: datetime) -> None:
    # WHEN
    got = write(occurred_at=sent).to_items()[0].occurred_at
    # THEN
    assert got == stored
    assert got is not None and got.utcoffset() == timedelta(0)
    as_of = SearchRequest.model_validate({"as_of": sent}).as_of
    assert as_of == stored
    assert as_of is not None and as_of.utcoffset() == timedelta(0)
    message = WriteRequest.model_validate(
        {"messages": [{"role": "user", "content": "x", "occurred_at": sent}]}
    )
    assert message.to_items()[0].occurred_at == stored


def test_python_datetimes_are_converted_to_utc_too() -> None:
    # GIVEN
    naive = SearchRequest(as_of=datetime(2026, 11, 22, 0, 0))
    aware = SearchRequest(
        as_of=datetime(2026, 11, 22, 5, 30, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    )
    # WHEN / THEN
    assert naive.as_of == aware.as_of == datetime(2026, 11, 22, tzinfo=UTC)
    assert aware.as_of is not None and aware.as_of.tzinfo is UTC


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01T00:00:00Z", "2026-11-20T25:00:00Z", ""])
def test_unreadable_times_are_refused(bad: str) -> None:
    # WHEN / THEN
    refused(WriteRequest, {"items": [item(occurred_at=bad)]})
    refused(SearchRequest, {"as_of": bad})


# --- search --------------------------------------------------------------------------------------


@pytest.mark.parametrize("grain", ["working", "daily", "weekly", "monthly", "quarterly", "yearly"])
def test_search_accepts_every_grain(grain: str) -> None:
    # WHEN / THEN
    assert SearchRequest.model_validate({"grain": grain}).grain is Grain(grain)


def test_search_accepts_all_grains_at_once() -> None:
    # WHEN / THEN
    assert SearchRequest.model_validate({"grain": "all"}).grain == "all"


@pytest.mark.parametrize("grain", ["hourly", "ALL", "Daily", "", None, 1])
def test_search_refuses_unknown_grains(grain: Any) -> None:
    # WHEN / THEN
    refused(SearchRequest, {"grain": grain})


def test_max_results_is_bounded() -> None:
    # WHEN / THEN
    refused(SearchRequest, {"max_results": 0})
    refused(SearchRequest, {"max_results": MAX_RESULTS + 1})
    refused(SearchRequest, {"max_results": -5})
    assert SearchRequest.model_validate({"max_results": 1}).max_results == 1
    assert SearchRequest.model_validate({"max_results": MAX_RESULTS}).max_results == 100


def test_day_window_must_be_non_negative_and_ordered() -> None:
    # WHEN / THEN
    refused(SearchRequest, {"min_days_ago": -1})
    refused(SearchRequest, {"max_days_ago": -0.5})
    refused(SearchRequest, {"min_days_ago": 10, "max_days_ago": 9})
    refused(SearchRequest, {"min_days_ago": float("nan")})
    refused(SearchRequest, {"max_days_ago": float("inf")})
    refused(SearchRequest, {"max_days_ago": 36_501})
    same = SearchRequest.model_validate({"min_days_ago": 7, "max_days_ago": 7})
    assert (same.min_days_ago, same.max_days_ago) == (7, 7)
    fractional = SearchRequest.model_validate({"min_days_ago": 0.5, "max_days_ago": 1.25})
    assert (fractional.min_days_ago, fractional.max_days_ago) == (0.5, 1.25)


@pytest.mark.parametrize("query", ["", " ", "\n\t", "\u3000"])
def test_blank_query_means_no_query(query: str) -> None:
    # WHEN / THEN
    assert SearchRequest.model_validate({"query": query}).query is None


def test_query_is_kept_verbatim_and_bounded() -> None:
    # WHEN / THEN
    assert SearchRequest.model_validate({"query": " launch? "}).query == " launch? "
    assert SearchRequest.model_validate({"query": "q" * 4000}).query == "q" * 4000
    refused(SearchRequest, {"query": "q" * 4001})


def test_search_filters_by_kind_including_summaries() -> None:
    # WHEN
    request = SearchRequest.model_validate({"kinds": ["summary", "fact"], "tags": [" launch "]})
    # THEN
    assert request.kinds == [MemoryKind.SUMMARY, MemoryKind.FACT]
    assert request.tags == ["launch"]
    refused(SearchRequest, {"kinds": ["gossip"]})
    refused(SearchRequest, {"tags": [f"t{i}" for i in range(MAX_TAGS + 1)]})


def test_min_score_is_a_score() -> None:
    # WHEN / THEN
    assert SearchRequest.model_validate({"min_score": 0.3}).min_score == 0.3
    refused(SearchRequest, {"min_score": 1.5})
    refused(SearchRequest, {"min_score": -0.1})


# --- robustness ----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and infinities too: Python's json.loads accepts them
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
item_keys = st.sampled_from([*WriteItem.model_fields, "contents", ""])
#: Mostly valid values, so that a good share of the bodies validate and their invariants are checked.
plausible = {
    "role": st.sampled_from(["user", "assistant", "system", "tool"]),
    "occurred_at": st.sampled_from(["2026-11-20T14:03:00Z", "2026-11-20T14:03:00", "2026-11-20T09:03-05:00"]),
    "conversation_id": st.sampled_from(["c-42", "slack:C1:1.5", "a@b"]),
    "importance": st.floats(min_value=0, max_value=1),
    "kind": st.sampled_from([k.value for k in MemoryKind]),
    "tags": st.lists(
        st.text(st.characters(codec="utf-8", min_codepoint=0x20), min_size=1, max_size=8), max_size=5
    ),
    "ttl_days": st.integers(min_value=1, max_value=MAX_TTL_DAYS),
    "user_id": st.sampled_from(["u-7", "U.8", "9"]),
    "metadata": st.dictionaries(st.text(max_size=8), json_values, max_size=4),
}
items = (
    st.dictionaries(item_keys, json_values, max_size=8)
    | st.fixed_dictionaries(
        {"content": st.text(max_size=30)},
        optional={key: value | json_values for key, value in plausible.items()},
    )
    | st.fixed_dictionaries({"content": st.text(min_size=1, max_size=30)}, optional=plausible)
)
messages = st.fixed_dictionaries(
    {"role": plausible["role"], "content": st.text(max_size=30)},
    optional={"occurred_at": plausible["occurred_at"] | json_values, "extra": json_values},
)
bodies = (
    st.dictionaries(
        st.sampled_from([*WriteRequest.model_fields, "extra"]),
        json_values | st.lists(items, max_size=3),
        max_size=4,
    )
    | st.fixed_dictionaries({"items": st.lists(items, max_size=3)})
    | st.fixed_dictionaries(
        {"messages": st.lists(messages, max_size=3)},
        optional={"conversation_id": plausible["conversation_id"], "user_id": plausible["user_id"]},
    )
)


@settings(max_examples=200, deadline=None)
@given(body=bodies)
def test_arbitrary_json_is_either_a_valid_request_or_a_validation_error(body: dict[str, Any]) -> None:
    # GIVEN any JSON-shaped body WHEN validated THEN the only failure is a ValidationError (a 400)
    try:
        request = WriteRequest.model_validate(body)
    except ValidationError:
        return
    # AND whatever validates honours the contract's limits
    written = request.to_items()
    assert 1 <= len(written) <= MAX_ITEMS_PER_REQUEST
    for got in written:
        assert got.content.strip()
        assert len(got.content.encode("utf-8")) <= MAX_CONTENT_BYTES
        assert got.kind is not MemoryKind.SUMMARY
        assert len(got.tags) <= MAX_TAGS


@settings(max_examples=100, deadline=None)
@given(body=st.dictionaries(st.sampled_from([*SearchRequest.model_fields, "x"]), json_values, max_size=5))
def test_arbitrary_json_search_is_either_valid_or_a_validation_error(body: dict[str, Any]) -> None:
    # WHEN
    try:
        request = SearchRequest.model_validate(body)
    except ValidationError:
        return
    # THEN
    assert 1 <= request.max_results <= MAX_RESULTS
    assert request.max_days_ago is None or request.max_days_ago >= request.min_days_ago
    assert request.query is None or request.query.strip()
