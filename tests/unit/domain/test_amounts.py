"""Amounts in what people say (`supersession.rules.numbers`): a number with what it counts, so
that "thirty-five a week now" reads as the "$20 a week" of months ago changing, and what a
number is said with that is not an amount (a year, a time, an age, a tally) reads as none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.supersession.rules.numbers import amount_changed, amounts, counted_changed
from agent_memory.supersession.rules.shape import replaces, shape


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("The allotment costs me £45 a year, water included.", {("pound", "45"), ("year", "45")}),
        ("I do sixteen hours every week at the garden centre.", {("hour", "16"), ("week", "16")}),
        ("Parking by the station is R40 for the day.", {("rand", "40"), ("day", "40")}),
        ("We pay two thousand four hundred kronor a month for the flat.",
         {("kronor", "2400"), ("month", "2400")}),
        ("My bus is the 73 now, the 38 stopped running.", set()),  # a route said with no word it counts
        ("Rent is $1,850 per month.", {("dollar", "1850"), ("month", "1850")}),
        ("She takes 5 mg twice a day.", {("mg", "5")}),
    ],
)  # fmt: skip
def test_an_amount_is_read_with_its_unit_and_its_period(text: str, said: set[tuple[str, str]]) -> None:
    # WHEN / THEN
    assert amounts(text) == said


@pytest.mark.parametrize(
    "text",
    [
        "Eleven years behind the same counter and I still like it.",  # how long: a tally
        "We moved here in 2019, best decision we made.",  # a year
        "Training is at 18:30 on the top pitch.",  # a time
        "Our Lily turned 7 on Sunday.",  # nothing counted
        "Came 2nd in the club race, 4th last year.",  # places
    ],
)
def test_what_counts_nothing_is_no_amount(text: str) -> None:
    # WHEN / THEN
    assert amounts(text) == frozenset()


@given(
    old=st.integers(min_value=2, max_value=99_999),
    # a plain number from 1900 to 2099 is read as a year
    new=st.integers(min_value=2, max_value=99_999).filter(lambda n: not 1900 <= n <= 2099),
    unit=st.sampled_from(["pounds", "hours", "dollars", "kilos", "miles", "steps"]),
    period=st.sampled_from(["a week", "every month", "per day", "a year"]),
)
def test_the_same_kind_of_amount_changed_exactly_when_its_value_did(
    old: int, new: int, unit: str, period: str
) -> None:
    # GIVEN an amount, and the same kind of amount said again months later
    before = amounts(f"Right now it's {old:,} {unit} {period}, more or less.")
    after = amounts(f"These days it is {new} {unit} {period} apparently.")
    # WHEN / THEN it changed exactly when the value differs, whatever the thousands separator
    assert amount_changed(after, before) == (old != new)
    assert counted_changed(after, before) == (old != new)


def test_money_alone_is_not_one_kind_of_amount() -> None:
    # GIVEN rent a month, then a bill in dollars
    rent, bill = amounts("My rent is $2,300 a month."), amounts("Electricity came to $140 this month.")
    # WHEN / THEN the dollars differ, but nothing else they count is shared
    assert amount_changed(bill, rent) and not counted_changed(bill, rent)


@pytest.mark.parametrize(
    ("old", "new", "replaced"),
    [
        # the amount changed, though the newer also says "too" and names whom it is paid again
        ("I give our Kofi ten pounds a week for washing the car.",
         "Kofi wants more, so it's fifteen a week now and he does the windows too.", True),
        ("The boat mooring is €1,200 a year at the marina.",
         "Mooring went up, €1,450 a year from April.", True),
        # the same amount said again
        ("The boat mooring is €1,200 a year at the marina.",
         "Paid the €1,200 a year for the mooring again, painful as ever.", False),
    ],
)  # fmt: skip
def test_a_changed_amount_replaces_the_old_one(old: str, new: str, replaced: bool) -> None:
    # WHEN / THEN
    assert replaces(shape(new), shape(old), 1.0, 0.0) is replaced
