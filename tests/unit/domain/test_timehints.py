"""Times named in a query become windows relative to ``as_of``, widened by the mention lag."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.model.types import EARLIEST, LATEST
from agent_memory.recall.rules.timehints import MENTION_LAG, time_hints

AS_OF = datetime(2023, 11, 15, 12, 0, tzinfo=UTC)


def d(y: int, m: int, day: int) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What painting did Melanie show on October 13, 2023?", d(2023, 10, 12), d(2023, 10, 15)),
        ("What did Gina find on 1 February, 2023?", d(2023, 1, 31), d(2023, 2, 3)),
        ("What happened on 2023-05-03?", d(2023, 5, 2), d(2023, 5, 5)),
        ("What setback did Melanie face in October 2023?", d(2023, 10, 1), d(2023, 11, 1)),
        ("When did Melanie go camping in June?", d(2023, 6, 1), d(2023, 7, 1)),
        ("What did we plan in December?", d(2022, 12, 1), d(2023, 1, 1)),  # the latest December
        ("What did John do last year?", d(2022, 1, 1), d(2023, 1, 1)),
        ("Anything last month?", d(2023, 10, 1), d(2023, 11, 1)),
        ("What happened in 2022?", d(2022, 1, 1), d(2023, 1, 1)),
        ("Where were we in the summer of 2023?", d(2023, 6, 1), d(2023, 9, 1)),
        ("What did I say yesterday?", d(2023, 11, 13), d(2023, 11, 15)),
    ],
)
def test_a_named_time_is_a_window_widened_by_the_mention_lag(
    query: str, start: datetime, end: datetime
) -> None:
    # WHEN
    [hint] = time_hints(query, AS_OF)

    # THEN
    assert (hint.start, hint.end) == (start, end + MENTION_LAG)


def test_n_units_ago_is_centred_on_that_many_units_before_as_of() -> None:
    # GIVEN
    [hint] = time_hints("what did we decide two weeks ago?", AS_OF)

    center = hint.start + (hint.end - MENTION_LAG - hint.start) / 2
    # WHEN / THEN
    assert abs((AS_OF - center).days - 14) <= 1


def test_a_day_is_not_also_read_as_its_month() -> None:
    # WHEN
    hints = time_hints("on 13 October 2023", AS_OF)

    # THEN
    assert [h.phrase for h in hints] == ["13 october 2023"]


@pytest.mark.parametrize(
    "query",
    [
        "what is Caroline's identity?",
        "may I ask about the launch?",
        "the 31 flavours",
        "",
        None,
        "June 31, 2023",
    ],
)
def test_no_time_no_hint(query: str | None) -> None:
    # WHEN / THEN
    assert time_hints(query, AS_OF) == []


def test_overlap_is_half_open_at_the_end() -> None:
    # GIVEN
    [hint] = time_hints("in June 2023", AS_OF)

    # WHEN / THEN
    assert hint.overlaps(d(2023, 6, 30), d(2023, 6, 30))
    assert not hint.overlaps(hint.end, hint.end)
    assert not hint.overlaps(d(2023, 5, 1), d(2023, 5, 31))


# ------------------------------------------------------------------------------------------------
# hostile numbers and the edges of the calendar: a phrase out of range is no hint, never an error
# ------------------------------------------------------------------------------------------------

_PHRASES = st.one_of(
    st.builds(
        lambda n, unit: f"what happened {n} {unit} ago",
        st.one_of(st.integers(0, 10**30), st.sampled_from([0, 1, 2500, 5000, 10**6, 99999999])),
        st.sampled_from(["day", "days", "week", "weeks", "month", "months", "year", "years"]),
    ),
    st.sampled_from(
        ["last week", "this week", "past week", "last weekend", "last month", "this month", "past month",
         "last year", "this year", "past year", "yesterday", "in june", "in december", "on december 31",
         "january 1", "in 1999", "summer 2023", "2023-06-01", "march 3, 2024"]
    ),
)  # fmt: skip


@given(_PHRASES, st.datetimes(min_value=EARLIEST.replace(tzinfo=None), max_value=LATEST.replace(tzinfo=None)))
def test_any_phrase_at_any_as_of_in_range_gives_hints_or_none_never_an_error(
    phrase: str, as_of: datetime
) -> None:
    # WHEN / THEN
    for hint in time_hints(phrase, as_of.replace(tzinfo=UTC)):
        assert hint.start < hint.end
