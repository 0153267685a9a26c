"""Topic dictionaries: normalised terms, one canonical form per topic, bounded, and query expansion."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agent_memory.contract.v1 import TopicDictionaryBody
from agent_memory.knowledge.rules.topic_dictionary import (
    MAX_CANONICAL_TERMS,
    MAX_SYNONYMS_PER_TERM,
    TopicDictionary,
    TopicDictionaryError,
)

LAUNCH = {"Launch Date": ["release date", "Go-Live", "ship  date"], "budget": ["spend", "costs"]}


@pytest.fixture
def topics() -> TopicDictionary:
    return TopicDictionary.build(LAUNCH)


def test_terms_are_stored_normalised(topics: TopicDictionary) -> None:
    # WHEN / THEN
    assert topics.as_dict() == {
        "budget": ["spend", "costs"],
        "launch date": ["release date", "go-live", "ship date"],
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Release Date", ("launch date", True)),
        ("  GO-LIVE ", ("launch date", True)),
        ("launch   date", ("launch date", True)),
        ("Costs", ("budget", True)),
        ("Hiring Plan", ("hiring plan", False)),
        (None, (None, True)),
        ("   ", (None, True)),
    ],
)
def test_resolve_maps_synonyms_to_the_canonical_term_and_keeps_unknown_topics_normalised(
    topics: TopicDictionary, raw: str | None, expected: tuple[str | None, bool]
) -> None:
    # WHEN / THEN
    assert topics.resolve(raw) == expected


def test_canonical_is_none_for_an_unknown_topic(topics: TopicDictionary) -> None:
    # WHEN / THEN
    assert topics.canonical("ship date") == "launch date"
    assert topics.canonical("hiring plan") is None


def test_a_synonym_repeating_its_canonical_term_or_itself_is_dropped() -> None:
    # WHEN
    topics = TopicDictionary.build({"budget": ["Budget", "spend", "SPEND"]})
    # THEN
    assert topics.as_dict() == {"budget": ["spend"]}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"budget": ["spend"], "costs": ["spend"]}, "synonym 1 of canonical term 2 is already a term of"),
        ({"budget": ["costs"], "costs": []}, "canonical term 2 is already a term of canonical term 1"),
        ({"Budget": [], "budget ": []}, "canonical term 2 is already a term of canonical term 1"),
        ({"budget": ["  "]}, "synonym 1 of canonical term 1 is blank"),
        ({" ": []}, "canonical term 1 is blank"),
        ({"x" * 257: []}, "canonical term 1 is longer than 256 characters"),
        ({"budget": ["\ud800"]}, "synonym 1 of canonical term 1 is not valid Unicode"),
    ],
)  # fmt: skip
def test_ambiguous_blank_or_invalid_terms_are_refused_by_position_without_echoing_them(
    raw: dict[str, list[str]], reason: str
) -> None:
    # WHEN / THEN
    with pytest.raises(TopicDictionaryError, match=reason) as caught:
        TopicDictionary.build(raw)
    assert "spend" not in str(caught.value) and "costs" not in str(caught.value)


def test_size_limits() -> None:
    # WHEN / THEN
    with pytest.raises(TopicDictionaryError, match="canonical terms"):
        TopicDictionary.build({f"t{i}": [] for i in range(MAX_CANONICAL_TERMS + 1)})
    with pytest.raises(TopicDictionaryError, match="synonyms"):
        TopicDictionary.build({"t": [f"s{i}" for i in range(MAX_SYNONYMS_PER_TERM + 1)]})
    with pytest.raises(TopicDictionaryError, match="terms in all"):
        TopicDictionary.build({f"t{i}": [f"t{i} s{j}" for j in range(9)] for i in range(250)})


def test_json_round_trip(topics: TopicDictionary) -> None:
    # WHEN / THEN
    assert TopicDictionary.from_json(topics.to_json()) == topics
    assert json.loads(topics.to_json())["launch date"] == ["release date", "go-live", "ship date"]


@pytest.mark.parametrize(
    ("query", "added"),
    [
        ("When is the go-live?", "launch date release date go-live ship date"),
        ("when is the RELEASE   DATE", "launch date release date go-live ship date"),
        ("what did we decide about the launch date", "launch date release date go-live ship date"),
        ("go-live and spend", "launch date release date go-live ship date budget spend costs"),
    ],
)
def test_a_query_naming_a_term_gets_the_whole_group_appended(
    topics: TopicDictionary, query: str, added: str
) -> None:
    # WHEN / THEN
    assert topics.expand_query(query) == f"{query} {added}"


@pytest.mark.parametrize("query", ["when do we ship?", "release notes", "go-lives", "overspend", ""])
def test_words_inside_other_words_or_partial_terms_do_not_expand(topics: TopicDictionary, query: str) -> None:
    # WHEN / THEN
    assert topics.expand_query(query) == query


def test_an_empty_dictionary_changes_nothing() -> None:
    # WHEN
    empty = TopicDictionary.build({})
    # THEN
    assert not empty
    assert empty.expand_query("go-live") == "go-live"
    assert empty.resolve("Go-Live") == ("go-live", False)


def test_regex_characters_in_terms_are_literal() -> None:
    # WHEN
    topics = TopicDictionary.build({"c++ (legacy)": ["cpp.*"]})
    # THEN
    assert topics.expand_query("the c++ (legacy) port") == "the c++ (legacy) port c++ (legacy) cpp.*"
    assert topics.expand_query("cppxx") == "cppxx"


def test_the_api_body_is_a_400_for_an_ambiguous_dictionary() -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match="already a term of canonical term 1"):
        TopicDictionaryBody.model_validate({"terms": {"budget": ["spend"], "costs": ["spend"]}})
    with pytest.raises(ValidationError):
        TopicDictionaryBody.model_validate({"terms": {"budget": "spend"}})
    with pytest.raises(ValidationError):
        TopicDictionaryBody.model_validate({"terms": {}, "extra": 1})
    assert TopicDictionaryBody.model_validate({"terms": {}}).terms == {}
