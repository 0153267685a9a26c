"""Write-time supersession (`domain.supersession`): the issue's own examples, restatements and
facts that both hold, and a property: a value stated again with any other value is an update."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.supersession import Relation, claims, relate


@pytest.mark.parametrize(
    ("old", "new", "relation", "attribute"),
    [
        ("I live in Berlin, in a flat near Tempelhof.",
         "I moved to Lisbon last week, my new flat is in Alfama.", Relation.UPDATE, "residence"),
        ("My favourite drink is green tea.", "Actually I switched from green tea to black coffee.",
         Relation.UPDATE, "favourite:drink"),
        ("The quarterly review is on Friday, April 7.", "The quarterly review was moved to Monday, April 10.",
         Relation.UPDATE, "when:quarterly review"),
        ("I work at Acme as an analyst.", "I work for Acme on the payments team.",
         Relation.RESTATEMENT, "employer"),
        ("I live in Berlin.", "My sister lives in Rome.", Relation.UNRELATED, None),
        ("I live in Lisbon.", "I went to Berlin for a conference.", Relation.UNRELATED, None),
        ("I live in Lisbon.", "I work at Globex.", Relation.UNRELATED, None),
    ],
)  # fmt: skip
def test_the_relation_of_a_new_memory_to_an_older_one(
    old: str, new: str, relation: Relation, attribute: str | None
) -> None:
    # WHEN
    verdict = relate(new, old)
    # THEN
    assert (verdict.relation, verdict.attribute) == (relation, attribute)


def test_a_name_ends_where_its_capitals_end() -> None:
    # WHEN / THEN "with two cats" is not part of the city, "Porto" is
    assert [c.value for c in claims("I live in Porto with two cats.")] == ["porto"]
    assert [c.value for c in claims("I work for Wayne Enterprises on the payments team.")] == [
        "wayne enterprises"
    ]


@pytest.mark.parametrize(
    ("text", "roles"),
    [
        ("I'm after Marley flooring, which is what dance studios usually use.", []),
        ("I'm super keen to spread that energy.", []),
        ("I'm a better cook than I was.", []),
        ("I'm a member of the climbing club.", []),
        ("I'm a nurse at the county hospital.", ["nurse"]),
        ("I am now a senior engineer.", ["senior engineer"]),
        ("I work as an architect.", ["architect"]),
    ],
)
def test_a_role_is_stated_with_its_article_or_its_verb(text: str, roles: list[str]) -> None:
    # WHEN / THEN "I'm <word ending in -er>" is no job without "a"/"an" or "work as"
    assert [c.value for c in claims(text) if c.attribute == "role"] == roles


CITIES = st.sampled_from(["Berlin", "Lisbon", "Oslo", "Porto", "Kyoto", "New York", "Rio de Janeiro"])


@given(first=CITIES, second=CITIES)
def test_living_somewhere_else_is_an_update_and_the_same_place_a_restatement(first: str, second: str) -> None:
    # WHEN
    verdict = relate(f"I moved to {second} last month.", f"I live in {first}.")
    # THEN
    expected = Relation.RESTATEMENT if first == second else Relation.UPDATE
    assert (verdict.relation, verdict.attribute) == (expected, "residence")
