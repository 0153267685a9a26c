"""Hostile input against the parsers a request meets first: request models, ids, time keys in
summarize requests and jobs.

`test_api_models.py` fuzzes the *shape* of request bodies (any JSON value in any field). This
module fuzzes the *text* inside them: unicode edge cases (lone surrogates, NUL, bidi overrides,
combining marks, non-characters), path traversal in ids, query-language syntax in tags and
topics, and text near the byte limits. Every input must end in one of two ways: refused with a
`ValidationError` (a 400), or accepted and kept verbatim. Nothing in between: no other exception,
no silent rewrite.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from tests.strategies import (
    FUZZ,
    HOSTILE_PIECES,  # noqa: F401 (test_fuzz_writer.py imports it from here)
    encodes_as_utf8,
    hostile,
    key_like,
    mutations,
    valid_keys,
)

from agent_memory.contract.v1 import SearchRequest, WriteItem, WriteRequest
from agent_memory.model.grains import Grain, parse_time_key
from agent_memory.model.jobs import SummarizeJob, SummarizeRequest
from agent_memory.model.limits import MAX_CONTENT_BYTES, MAX_TAG_CHARS, MAX_TOPIC_CHARS
from agent_memory.model.types import AgentId, ConversationId, MemoryId, TenantId, UserId, visible


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _accepts(model: Any, body: Any) -> Any | None:
    """The validated model, or None when it is refused; any other exception fails the test."""
    try:
        return model.model_validate(body)
    except ValidationError:
        return None


# --- free text: content, topic, query ------------------------------------------------------------


@FUZZ
@given(content=hostile())
@example(content="\x00")
@example(content="a\ud800b")
@example(content="\u202e\u0301")
def test_content_is_refused_or_kept_verbatim(content: str) -> None:
    # WHEN any text is sent as a write's content
    item = _accepts(WriteItem, {"content": content})
    if _has_surrogate(content) or not visible(content):
        # THEN text UTF-8 cannot carry, and blank text (only white space, control or zero-width
        # characters), are refused
        assert item is None
        return
    # THEN anything else within the limit is kept exactly as sent: no normalisation, no stripping
    assert item is not None
    assert item.content == content


@settings(max_examples=60, deadline=None)
@given(
    char=st.sampled_from(["a", "é", "€", "\U0001f4a5", "\u0301", "\x00"]),
    extra=st.integers(min_value=-3, max_value=3),
)
def test_content_near_the_limit_is_measured_in_utf8_bytes(char: str, extra: int) -> None:
    # GIVEN content of 1 to 4 bytes a character, a few characters either side of 16 KiB
    width = len(char.encode("utf-8"))
    count = MAX_CONTENT_BYTES // width + extra
    content = "x" + char * count
    size = len(content.encode("utf-8"))

    # WHEN / THEN it is accepted exactly when its UTF-8 encoding fits
    item = _accepts(WriteItem, {"content": content})
    assert (item is not None) == (size <= MAX_CONTENT_BYTES)


@FUZZ
@given(topic=hostile(surrogates=False, max_pieces=30))
def test_a_topic_follows_the_label_rule_and_is_kept_trimmed(topic: str) -> None:
    item = _accepts(WriteItem, {"content": "x", "topic": topic})
    stripped = topic.strip(UNICODE_WHITE_SPACE)
    refusable = not visible(stripped) or len(stripped) > MAX_TOPIC_CHARS or _CONTROL.search(stripped)
    # WHEN / THEN a topic is refused only as a tag is: blank, too long, or with control characters
    assert (item is None) == bool(refusable), (topic, item)
    if item is not None:
        assert item.topic == stripped


@FUZZ
@given(query=hostile())
def test_search_query_is_refused_or_kept_verbatim(query: str) -> None:
    # GIVEN
    request = _accepts(SearchRequest, {"query": query})
    # WHEN / THEN
    if _has_surrogate(query):
        assert request is None
        return
    assert request is not None
    # A blank query means "no query" (the newest records); any other is passed on unchanged
    assert request.query == (query if query.strip() else None)


# --- tags: filter values, never syntax -----------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


#: What pydantic's ``strip_whitespace`` trims: Unicode White_Space, which (unlike Python's
#: ``str.strip()``) leaves the separators U+001C..U+001F in place, to be refused as control characters.
UNICODE_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)


@FUZZ
@given(tag=hostile(max_pieces=6))
@example(tag="') OR 1=1 --")
@example(tag="*")
@example(tag='" OR ""="')
@example(tag="tenant_id:*")
def test_a_tag_is_refused_or_kept_as_one_plain_value(tag: str) -> None:
    for model, body in ((WriteItem, {"content": "x", "tags": [tag]}), (SearchRequest, {"tags": [tag]})):
        # WHEN it is sent as a tag of a write, or of a search
        parsed = _accepts(model, body)
        stripped = tag.strip(UNICODE_WHITE_SPACE)
        refusable = (
            not visible(stripped)
            or len(stripped) > MAX_TAG_CHARS
            or _CONTROL.search(stripped)
            or not encodes_as_utf8(tag)
        )
        # THEN a tag is refused only for emptiness, length, control characters or bad Unicode
        assert (parsed is None) == bool(refusable), (tag, parsed)
        if parsed is not None:
            # AND an accepted one is one value: trimmed, otherwise as sent (operators included)
            assert parsed.tags == [stripped]


# --- ids: never a path, never a separator ---------------------------------------------------------

ID_TYPES = {"tenant": TenantId, "agent": AgentId, "user": UserId}
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
traversal = st.lists(
    st.sampled_from(
        ["..", ".", "/", "\\", "%2e", "%2f", "%00", "\x00", "\uff0f", "\u2024", "a", "B", "7", "-", "_"]
    ),
    min_size=1,
    max_size=12,
).map("".join)


@FUZZ
@given(candidate=st.one_of(traversal, hostile(max_pieces=4)))
@example(candidate="..")
@example(candidate="../tenant-b")
@example(candidate="a/../../b")
@example(candidate="a\x00")
@example(candidate="acme:bot")
@example(candidate="\uff21\uff22")  # fullwidth letters
def test_ids_are_refused_unless_plain_ascii_without_separators(candidate: str) -> None:
    for name, id_type in ID_TYPES.items():
        try:
            # WHEN it is validated as each kind of id
            value = TypeAdapter(id_type).validate_python(candidate)
        except ValidationError:
            continue
        # THEN what is accepted can be neither a path nor a FIFO group / routing separator
        assert _SAFE_ID.fullmatch(value), (name, value)
        assert value == candidate
        assert not value.startswith(".") and not {"/", "\\", ":", "\x00", "%"} & set(value)


@FUZZ
@given(
    candidate=st.one_of(
        traversal, hostile(max_pieces=4), st.from_regex(r"mem_[a-z2-7]{10,70}", fullmatch=True)
    )
)
def test_memory_ids_are_refused_unless_service_shaped(candidate: str) -> None:
    # WHEN
    try:
        value = TypeAdapter(MemoryId).validate_python(candidate)
    except ValidationError:
        return
    # THEN
    assert re.fullmatch(r"[a-z]{1,8}_[a-z2-7]{16,64}", value)


@FUZZ
@given(candidate=st.one_of(traversal, hostile(max_pieces=4)))
def test_conversation_ids_may_carry_references_but_never_a_path(candidate: str) -> None:
    # WHEN
    try:
        value = TypeAdapter(ConversationId).validate_python(candidate)
    except ValidationError:
        return
    # THEN
    assert not value.startswith(".") and not {"/", "\\", "\x00", "%"} & set(value)
    assert value.isascii()


# --- JSON on the wire ----------------------------------------------------------------------------


VALID_BODY = json.dumps(
    {
        "items": [
            {
                "content": "Alice moved the launch to March 3.",
                "tags": ["launch"],
                "topic": "launch date",
                "metadata": {"k": [1, {"x": None}]},
                "occurred_at": "2026-11-20T14:03:00Z",
            }
        ]
    }
)


@settings(max_examples=200, deadline=None)
@given(raw=mutations(VALID_BODY))
def test_corrupted_json_text_is_a_request_or_a_validation_error(raw: str) -> None:
    # GIVEN the JSON text of a valid write, truncated or corrupted anywhere
    # WHEN parsed straight from the text THEN it validates or is refused, never anything else
    try:
        request = WriteRequest.model_validate_json(raw)
    except ValidationError:
        return
    for got in request.to_items():
        assert encodes_as_utf8(got.content) and got.content.strip()


# --- time keys in summarize requests (the grammar itself: test_fuzz_time_keys.py) ----------------


@FUZZ
@given(
    grain=st.one_of(st.sampled_from([g.value for g in Grain]), hostile(max_pieces=2)),
    period=st.one_of(key_like, valid_keys, hostile(max_pieces=3), st.none()),
)
def test_summarize_requests_and_jobs_with_any_period_validate_or_are_refused(grain: str, period: Any) -> None:
    # GIVEN
    body = {"grain": grain} | ({} if period is None else {"period": period})
    request = _accepts(SummarizeRequest, body)
    # WHEN / THEN
    if request is not None and request.period is not None:
        assert parse_time_key(Grain(request.grain), request.period) == period
    # The job queue's body carries a time key too; a hostile one is refused, not run
    job_body = json.dumps({"tenant_id": "acme", "agent_id": "bot", "grain": grain, "time_key": period})
    try:
        job = SummarizeJob.model_validate_json(job_body)
    except ValidationError:
        return
    assert job.grain.is_summary and parse_time_key(job.grain, job.time_key) == job.time_key


# --- metadata: lone surrogates are refused at the door --------------------------------------------


@pytest.mark.parametrize(
    "metadata",
    [{"k": "\ud800"}, {"\udc00": 1}, {"k": {"\udc01": True}}, {"k": ["ok", "\udfff"]}],
    ids=["value", "top-level key", "nested key", "list item"],
)
def test_metadata_with_a_lone_surrogate_is_refused_with_a_clear_reason(metadata: dict[str, Any]) -> None:
    # GIVEN metadata whose JSON carried a "\\ud800"-style escape without its pair (once a 500 on
    # POST: it passed validation and then failed when the record was serialized)
    # WHEN it is validated THEN it is a 400 that says why, without echoing the input
    with pytest.raises(ValidationError) as refused:
        WriteItem.model_validate({"content": "x", "metadata": metadata})
    [error] = refused.value.errors()
    assert error["loc"] == ("metadata",)
    assert "lone surrogate" in error["msg"] and "valid Unicode" in error["msg"]


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), hostile(max_pieces=4))
metadata_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile(max_pieces=2), inner, max_size=3),
    max_leaves=12,
)


@FUZZ
@given(metadata=st.dictionaries(hostile(max_pieces=2), metadata_values, max_size=4))
@example(metadata={"k": "\ud800"})
@example(metadata={"\udc00": "v"})
@example(metadata={"a": [{"b": "\U0010ffff\u202e\x00"}]})
def test_metadata_is_refused_or_round_trips_verbatim_through_json(metadata: dict[str, Any]) -> None:
    # WHEN any JSON object is sent as a write's metadata
    item = _accepts(WriteItem, {"content": "x", "metadata": metadata})
    carries_surrogate = not encodes_as_utf8(json.dumps(metadata, ensure_ascii=False))
    if carries_surrogate:
        # THEN text UTF-8 cannot carry is refused (a 400), never stored as something else
        assert item is None
        return
    if item is None:
        return  # refused for its size, like any other oversized metadata
    # THEN accepted metadata comes out of the queue message (JSON) exactly as it went in
    assert WriteItem.model_validate_json(item.model_dump_json()).metadata == metadata
