"""Loose input refused: numbers and booleans are what they say (no ``true`` for 1.0, no ``"7"``
for 7), blank is blank however it is spelt, and topic, tags and speaker follow one text rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_memory.contract.v1 import ContextRequest, SearchRequest, WriteRequest

INVISIBLE = ["\u0000", "\u200b\u200b", " \u200d\ufeff ", "\x1b", "\u2060", "\t\n"]


def write(**fields: Any) -> WriteRequest:
    return WriteRequest.model_validate({"items": [{"content": "A fine memory.", **fields}]})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("importance", True),
        ("importance", False),
        ("importance", "0.5"),
        ("importance", "1"),
        ("ttl_days", "7"),
        ("ttl_days", True),
        ("ttl_days", 7.5),
    ],
)
def test_write_numbers_are_numbers(field: str, value: Any) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        write(**{field: value})


@pytest.mark.parametrize(
    "body",
    [
        {"max_results": "10"},
        {"max_results": True},
        {"min_days_ago": "1"},
        {"max_days_ago": True},
        {"min_score": "0.5"},
        {"ranking": {"time_hints": "yes"}},
        {"ranking": {"time_hints": 1}},
        {"ranking": {"lexical_weight": "0.3"}},
        {"ranking": {"recency_tau_days": "90"}},
    ],
)
def test_search_numbers_and_booleans_are_what_they_say(body: dict[str, Any]) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        SearchRequest.model_validate(body)


def test_context_budget_is_an_integer() -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ContextRequest.model_validate({"query": "x", "token_budget": "500"})


def test_integers_stay_numbers_where_a_number_is_asked() -> None:
    # WHEN / THEN
    assert write(importance=1).items[0].importance == 1.0
    assert SearchRequest.model_validate({"min_days_ago": 2, "max_results": 5}).min_days_ago == 2.0


@pytest.mark.parametrize("content", INVISIBLE)
def test_content_of_only_invisible_characters_is_blank(content: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match="blank"):
        WriteRequest.model_validate({"items": [{"content": content}]})


@pytest.mark.parametrize("field", ["topic", "speaker", "tags"])
@pytest.mark.parametrize("value", ["a\u0000b", "\x1b[31mred", "x\u009bz", *INVISIBLE])
def test_topic_tags_and_speaker_follow_one_text_rule(field: str, value: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        write(**{field: [value] if field == "tags" else value})


def test_labels_are_trimmed_and_keep_any_visible_script() -> None:
    # WHEN
    item = write(topic="  launch date  ", speaker="Zoë", tags=["日本"]).items[0]
    # THEN
    assert (item.topic, item.speaker, item.tags) == ("launch date", "Zoë", ["日本"])
