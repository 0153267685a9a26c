"""Time keys as a grammar with an inverse: format then parse is the identity, periods tile the
calendar, and whatever is not a key is refused with an error that says which grain and which key
(an `InvalidTimeKeyError`, a 400 on every route), never another exception; what is accepted has
its grain's exact shape and names its own period.

`test_grains.py` checks the keys of chosen days and the refusal of chosen keys; this module checks
the round trips from any day and any text. `test_fuzz_parsers.py` fuzzes the summarize requests
and jobs that carry keys.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.strategies import FUZZ, hostile, key_like, mutations, summary_grains, valid_keys

from agent_memory.errors import InvalidTimeKeyError
from agent_memory.model.grains import (
    Grain,
    next_key,
    parse_time_key,
    period_bounds,
    period_dates,
    time_key_for,
)

#: The last day whose period of every grain still has a representable end.
LAST = date(9998, 12, 31)

days = st.dates(date(1, 1, 8), LAST)


@FUZZ
@given(
    grain=summary_grains, day=days, zone=st.sampled_from(["UTC", "Pacific/Kiritimati", "America/St_Johns"])
)
@example(grain=Grain.WEEKLY, day=date(2026, 12, 31), zone="UTC")  # ISO week 53 of 2026
@example(grain=Grain.WEEKLY, day=date(2027, 1, 1), zone="UTC")  # still 2026-W53
@example(grain=Grain.DAILY, day=date(2024, 2, 29), zone="UTC")
@example(grain=Grain.QUARTERLY, day=date(2026, 9, 30), zone="Pacific/Kiritimati")
def test_a_day_s_key_parses_to_itself_and_names_the_period_that_holds_the_day(
    grain: Grain, day: date, zone: str
) -> None:
    # GIVEN the key of the period of ``grain`` that holds ``day``
    key = time_key_for(grain, day)

    # WHEN / THEN it parses to itself, and its period holds the day, from its first to its last day
    assert parse_time_key(grain, key) == key
    first, end = period_dates(grain, key)
    assert first <= day < end
    assert time_key_for(grain, first) == key == time_key_for(grain, end - timedelta(days=1))

    # AND the periods tile the calendar: the next key starts where this one ends, the day
    # before this one belongs to the key before
    assert next_key(grain, key) == time_key_for(grain, end)
    before = time_key_for(grain, first - timedelta(days=1))
    assert before != key and next_key(grain, before) == key

    # AND the instants are local midnights of those days in the zone asked for
    start_at, end_at = period_bounds(grain, key, zone)
    assert (start_at.date(), end_at.date()) == (first, end)
    assert start_at.hour == end_at.hour == 0 and str(start_at.tzinfo) == zone


_GRAMMAR = {
    Grain.DAILY: re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII),
    Grain.WEEKLY: re.compile(r"\d{4}-W\d{2}", re.ASCII),
    Grain.MONTHLY: re.compile(r"\d{4}-\d{2}", re.ASCII),
    Grain.QUARTERLY: re.compile(r"\d{4}-Q[1-4]", re.ASCII),
    Grain.YEARLY: re.compile(r"\d{4}", re.ASCII),
}
#: Text a key is easily mistaken for: the shapes of every grain's keys with any digits, the
#: characters of keys and their look-alikes, real keys (of any grain) truncated or corrupted, and
#: hostile text.
near_keys = st.one_of(
    st.from_regex(r"\A\d{4}-(\d{2}|W\d{2}|Q\d)(-\d{2})?\Z"),
    st.text(alphabet="0123456789-WQ \n\u0660\uff10", max_size=11),
    st.text(max_size=12),
    key_like,
    valid_keys,
    valid_keys.flatmap(mutations),
    hostile(max_pieces=3),
)


@settings(FUZZ, max_examples=350)
@given(grain=st.sampled_from(list(Grain)), key=near_keys)
@example(grain=Grain.MONTHLY, key="2026-13")
@example(grain=Grain.DAILY, key="2026-02-30")
@example(grain=Grain.WEEKLY, key="2025-W53")  # 2025 has 52 ISO weeks
@example(grain=Grain.YEARLY, key="0000")
@example(grain=Grain.YEARLY, key="9999")  # its end is past year 9999
@example(grain=Grain.DAILY, key="2026-11-20\n")
@example(grain=Grain.YEARLY, key="\uff12\uff10\uff12\uff16")  # fullwidth digits
@example(grain=Grain.WORKING, key="2026-11-20")
def test_anything_but_a_key_is_refused_with_an_error_naming_grain_and_key(grain: Grain, key: str) -> None:
    try:
        # WHEN it is parsed as a key of the grain
        parsed = parse_time_key(grain, key)
    except InvalidTimeKeyError as refused:
        # THEN the refusal is a 400 whose message names the grain and shows the key, escaped
        # (working memory has no time key at all, and says just that)
        assert refused.status == 400
        message = str(refused)
        assert grain.value in message and message.isprintable()
        assert repr(key) in message if grain.is_summary else message == "working memory has no time key"
        # AND every other entry point refuses it the same way
        for use in (period_dates, period_bounds, next_key):
            with pytest.raises(InvalidTimeKeyError):
                use(grain, key)
        return
    # THEN what is accepted is returned as sent, in its grain's exact ASCII shape, and names its
    # own period: the first day's key is the key, and the next key starts where it ends
    assert parsed == key
    assert _GRAMMAR[grain].fullmatch(parsed)
    first, end = period_dates(grain, parsed)
    assert first < end and time_key_for(grain, first) == key
    assert next_key(grain, key) == time_key_for(grain, end)
