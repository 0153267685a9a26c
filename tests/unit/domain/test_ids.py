"""Deterministic ids and content hashes: retries and re-runs must land on the same record."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from agent_memory.model.ids import content_hash, digest, memory_id, summary_id
from agent_memory.model.types import MemoryId

QUICK = settings(max_examples=200, deadline=None)
MEMORY_ID = TypeAdapter(MemoryId)
parts = st.lists(st.text(max_size=12), max_size=4).map(tuple)


def test_ids_are_deterministic() -> None:
    # GIVEN the same parts twice WHEN ids are derived THEN they are equal (a retry is a no-op)
    assert memory_id("t1", "a1", "hello", "2026-11-20T14:03:00Z") == memory_id(
        "t1", "a1", "hello", "2026-11-20T14:03:00Z"
    )
    assert summary_id("t1", "a1", "daily", "2026-11-21") == summary_id("t1", "a1", "daily", "2026-11-21")


def test_summary_id_differs_per_tenant_agent_grain_and_period() -> None:
    # GIVEN
    base = summary_id("t1", "a1", "daily", "2026-11-21")
    others = {
        summary_id("t2", "a1", "daily", "2026-11-21"),
        summary_id("t1", "a2", "daily", "2026-11-21"),
        summary_id("t1", "a1", "weekly", "2026-11-21"),
        summary_id("t1", "a1", "daily", "2026-11-22"),
    }
    # WHEN / THEN
    assert base not in others
    assert len(others) == 4


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("a\x1fb",), ("a", "b")),  # a separator inside a part must not fake a boundary
        (("ab", "c"), ("a", "bc")),
        (("",), ()),
        (("", ""), ("",)),
        (("t1", "a1:x"), ("t1:a1", "x")),
    ],
)
def test_part_boundaries_matter(left: tuple[str, ...], right: tuple[str, ...]) -> None:
    # GIVEN two different tuples whose concatenations look alike WHEN digested THEN ids differ
    assert digest(*left) != digest(*right)
    assert memory_id(*left) != memory_id(*right)


@QUICK
@given(left=parts, right=parts)
def test_distinct_parts_give_distinct_ids(left: tuple[str, ...], right: tuple[str, ...]) -> None:
    # GIVEN
    assume(left != right)
    # WHEN / THEN
    assert memory_id(*left) != memory_id(*right)


@QUICK
@given(parts=parts)
def test_ids_match_the_memory_id_type(parts: tuple[str, ...]) -> None:
    # GIVEN any parts (any Unicode) WHEN ids are derived THEN both kinds pass the MemoryId type
    for made in (memory_id(*parts), summary_id(*[*parts, "", "", "", ""][:4])):
        assert MEMORY_ID.validate_python(made) == made
        assert re.fullmatch(r"[a-z]+_[a-z2-7]{26}", made)


def test_ids_have_their_kind_as_prefix() -> None:
    # WHEN / THEN
    assert memory_id("x").startswith("mem_")
    assert summary_id("t", "a", "daily", "2026-11-21").startswith("sum_")


@pytest.mark.parametrize("length", [16, 26, 52])
def test_digest_length_is_configurable(length: int) -> None:
    # WHEN
    made = digest("x", length=length)
    # THEN
    assert len(made) == length
    assert re.fullmatch(r"[a-z2-7]+", made)
    assert digest("x", length=16) == made[:16]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Alice moved the launch", "alice MOVED the launch"),  # case
        ("Alice moved the launch", "  Alice   moved\tthe\n launch  "),  # whitespace runs and edges
        ("Alice moved the launch", "Alice\u00a0moved\u3000the\u2003launch"),  # Unicode spaces
        ("caf\u00e9", "cafe\u0301"),  # composed vs decomposed accent
        ("\ufb01le 1", "file \u2460"),  # ligature and circled digit (compatibility forms)
        ("\uff21\uff22\uff23", "abc"),  # fullwidth letters
        ("Stra\u00dfe", "STRASSE"),  # German sharp s folds to ss
        ("\u0390", "\u0390".upper()),  # Greek iota with dialytika and tonos, upper-cased
    ],
)
def test_content_hash_ignores_case_whitespace_and_unicode_form(one: str, other: str) -> None:
    # WHEN / THEN
    assert content_hash(one) == content_hash(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("launch on March 3", "launch on March 4"),
        ("launch", "launch."),
        ("a b", "ab"),  # whitespace is collapsed, never removed
        ("resume", "r\u00e9sum\u00e9"),  # accents are meaning, not form
    ],
)
def test_content_hash_keeps_what_carries_meaning(one: str, other: str) -> None:
    # WHEN / THEN
    assert content_hash(one) != content_hash(other)


def test_content_hash_is_a_sha256_hex_digest() -> None:
    # WHEN / THEN
    assert re.fullmatch(r"[0-9a-f]{64}", content_hash("hello"))


@QUICK
@given(text=st.text(max_size=40))
def test_content_hash_is_stable_under_its_own_normal_forms(text: str) -> None:
    # GIVEN any text WHEN it is re-spaced, NFKC/NFD-normalised or re-cased THEN the hash holds
    expected = content_hash(text)
    assert content_hash(" ".join(text.split())) == expected
    assert content_hash(f"\t{text} \n") == expected
    assert content_hash(unicodedata.normalize("NFKC", text)) == expected
    assert content_hash(unicodedata.normalize("NFD", text)) == expected
    assert content_hash(text.casefold()) == expected
    assert content_hash(text.lower()) == expected
    if "\u0131" not in text:  # dotless i upper-cases to I, which folds to a different letter
        assert content_hash(text.upper()) == expected


def test_content_hash_accepts_lone_surrogates() -> None:
    # GIVEN text that json.loads can produce but UTF-8 cannot encode WHEN hashed THEN no crash
    assert content_hash("\ud800") != content_hash("")
    assert memory_id("\ud800") != memory_id("")
