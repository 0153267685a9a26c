"""Grains and time keys: the calendar arithmetic every summary, schedule and search window rests on."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.strategies import FUZZ, summary_grains

from agent_memory.errors import InvalidTimeKeyError, ValidationFailedError
from agent_memory.model.grains import (
    SUMMARY_GRAINS,
    Grain,
    next_key,
    parse_time_key,
    period_bounds,
    period_dates,
    time_key_for,
)

DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY = SUMMARY_GRAINS
days = st.dates(min_value=date(1900, 1, 1), max_value=date(9998, 12, 31))
#: Zones with odd offsets, DST at 02:00 or 02:45, and DST that starts or ends at midnight itself.
zones = st.sampled_from(
    ["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/Santiago", "America/Havana"]
)


def _utc(moment: datetime) -> datetime:
    # Aware datetimes that share a tzinfo compare and subtract by wall clock, ignoring DST:
    # compare instants only after converting them to UTC.
    return moment.astimezone(UTC)


# --- time keys of each grain -------------------------------------------------------------------


#: Days, and the keys of the periods that hold them, daily to yearly: month and quarter ends and
#: starts, ISO week 53, and years below 1000 (zero-padded).
KEYS_OF_DAYS = [
    (date(2026, 11, 21), ("2026-11-21", "2026-W47", "2026-11", "2026-Q4", "2026")),
    (date(2026, 1, 1), ("2026-01-01", "2026-W01", "2026-01", "2026-Q1", "2026")),
    (date(2026, 1, 31), ("2026-01-31", "2026-W05", "2026-01", "2026-Q1", "2026")),
    (date(2026, 3, 31), ("2026-03-31", "2026-W14", "2026-03", "2026-Q1", "2026")),
    (date(2026, 4, 1), ("2026-04-01", "2026-W14", "2026-04", "2026-Q2", "2026")),
    (date(2026, 9, 30), ("2026-09-30", "2026-W40", "2026-09", "2026-Q3", "2026")),
    (date(2026, 12, 31), ("2026-12-31", "2026-W53", "2026-12", "2026-Q4", "2026")),
    (date(999, 1, 2), ("0999-01-02", "0999-W01", "0999-01", "0999-Q1", "0999")),
    (date(999, 6, 1), ("0999-06-01", "0999-W22", "0999-06", "0999-Q2", "0999")),
]


@pytest.mark.parametrize(
    ("grain", "day", "key"),
    [
        (grain, day, key)
        for day, keys in KEYS_OF_DAYS
        for grain, key in zip(SUMMARY_GRAINS, keys, strict=True)
    ],
)
def test_time_key_for_names_the_period_containing_the_day(grain: Grain, day: date, key: str) -> None:
    # GIVEN a day WHEN its key is computed THEN it has the documented shape
    assert time_key_for(grain, day) == key


def test_daily_key_of_a_datetime_is_still_a_date_key() -> None:
    # GIVEN a datetime (a date subclass) passed by mistake for a date
    moment = datetime(2026, 11, 21, 14, 3, tzinfo=UTC)
    # WHEN its daily key is computed THEN it is a key, not an ISO timestamp
    assert time_key_for(DAILY, moment) == "2026-11-21"
    assert parse_time_key(DAILY, time_key_for(DAILY, moment)) == "2026-11-21"


@pytest.mark.parametrize(
    ("day", "key"),
    [
        # 2026 starts on a Thursday, so it has 53 ISO weeks and its last week runs into 2027.
        (date(2025, 12, 28), "2025-W52"),
        (date(2025, 12, 29), "2026-W01"),
        (date(2026, 1, 1), "2026-W01"),
        (date(2026, 12, 27), "2026-W52"),
        (date(2026, 12, 28), "2026-W53"),
        (date(2026, 12, 31), "2026-W53"),
        (date(2027, 1, 1), "2026-W53"),
        (date(2027, 1, 3), "2026-W53"),
        (date(2027, 1, 4), "2027-W01"),
        # 2020 (a leap year starting on a Wednesday) also has 53 weeks.
        (date(2019, 12, 29), "2019-W52"),
        (date(2019, 12, 30), "2020-W01"),
        (date(2020, 12, 31), "2020-W53"),
        (date(2021, 1, 1), "2020-W53"),
        (date(2021, 1, 3), "2020-W53"),
        (date(2021, 1, 4), "2021-W01"),
        # Dec 29-31 can belong to next year's week 1.
        (date(2024, 12, 29), "2024-W52"),
        (date(2024, 12, 30), "2025-W01"),
        (date(2024, 12, 31), "2025-W01"),
        (date(2025, 1, 1), "2025-W01"),
    ],
)
def test_weekly_keys_follow_the_iso_week_numbering_year(day: date, key: str) -> None:
    # GIVEN a day near a year boundary WHEN its weekly key is computed THEN the ISO year is used
    assert time_key_for(WEEKLY, day) == key
    # AND the day lies inside that week's period
    first, end = period_dates(WEEKLY, key)
    assert first <= day < end


@pytest.mark.parametrize(
    ("grain", "key", "first", "end"),
    [
        (DAILY, "2026-11-21", date(2026, 11, 21), date(2026, 11, 22)),
        (DAILY, "2026-12-31", date(2026, 12, 31), date(2027, 1, 1)),
        (DAILY, "2024-02-29", date(2024, 2, 29), date(2024, 3, 1)),
        (WEEKLY, "2026-W01", date(2025, 12, 29), date(2026, 1, 5)),
        (WEEKLY, "2026-W53", date(2026, 12, 28), date(2027, 1, 4)),
        (WEEKLY, "2020-W53", date(2020, 12, 28), date(2021, 1, 4)),
        (MONTHLY, "2026-02", date(2026, 2, 1), date(2026, 3, 1)),
        (MONTHLY, "2026-12", date(2026, 12, 1), date(2027, 1, 1)),
        (QUARTERLY, "2026-Q1", date(2026, 1, 1), date(2026, 4, 1)),
        (QUARTERLY, "2026-Q4", date(2026, 10, 1), date(2027, 1, 1)),
        (YEARLY, "2026", date(2026, 1, 1), date(2027, 1, 1)),
    ],
)
def test_period_dates_are_half_open(grain: Grain, key: str, first: date, end: date) -> None:
    # GIVEN a key WHEN its period is asked for THEN it is [first day, day after the last)
    assert period_dates(grain, key) == (first, end)


@pytest.mark.parametrize(
    ("grain", "key", "following"),
    [
        (DAILY, "2026-12-31", "2027-01-01"),
        (DAILY, "2024-02-28", "2024-02-29"),
        (DAILY, "2023-02-28", "2023-03-01"),
        (WEEKLY, "2026-W52", "2026-W53"),
        (WEEKLY, "2026-W53", "2027-W01"),
        (WEEKLY, "2025-W52", "2026-W01"),
        (WEEKLY, "2020-W53", "2021-W01"),
        (MONTHLY, "2026-12", "2027-01"),
        (QUARTERLY, "2026-Q4", "2027-Q1"),
        (YEARLY, "2026", "2027"),
    ],
)
def test_next_key_crosses_year_boundaries(grain: Grain, key: str, following: str) -> None:
    # GIVEN the last period of a year (or month) WHEN the next is asked for THEN it rolls over
    assert next_key(grain, key) == following


def test_period_bounds_default_to_utc_midnight() -> None:
    # GIVEN a daily key and no timezone WHEN bounded THEN the period is UTC midnight to midnight
    start, end = period_bounds(DAILY, "2026-11-21")
    assert start == datetime(2026, 11, 21, tzinfo=UTC)
    assert end == datetime(2026, 11, 22, tzinfo=UTC)


def test_period_bounds_accept_a_tzinfo_as_well_as_a_name() -> None:
    # GIVEN
    zone = ZoneInfo("Asia/Kolkata")
    # WHEN / THEN
    assert period_bounds(MONTHLY, "2026-11", zone) == period_bounds(MONTHLY, "2026-11", "Asia/Kolkata")
    start, _ = period_bounds(MONTHLY, "2026-11", zone)
    assert _utc(start) == datetime(2026, 10, 31, 18, 30, tzinfo=UTC)


def test_a_day_with_a_dst_change_is_not_24_hours_long() -> None:
    # GIVEN the days New York springs forward and falls back
    spring_start, spring_end = period_bounds(DAILY, "2026-03-08", "America/New_York")
    fall_start, fall_end = period_bounds(DAILY, "2026-11-01", "America/New_York")
    # WHEN / THEN measured in instants they last 23 and 25 hours
    assert _utc(spring_end) - _utc(spring_start) == timedelta(hours=23)
    assert _utc(fall_end) - _utc(fall_start) == timedelta(hours=25)


def test_a_day_whose_midnight_does_not_exist_starts_when_the_clocks_jump() -> None:
    # GIVEN Santiago, where clocks jump from 00:00 to 01:00 on 2026-09-06
    zone = ZoneInfo("America/Santiago")
    start, end = period_bounds(DAILY, "2026-09-06", zone)
    # WHEN / THEN the day starts at its first real instant, 01:00 local, right after the previous day ends
    assert _utc(start).astimezone(zone).hour == 1
    assert _utc(start) == _utc(period_bounds(DAILY, "2026-09-05", zone)[1])
    assert _utc(end) - _utc(start) == timedelta(hours=23)


def test_a_skipped_calendar_day_is_an_empty_period() -> None:
    # GIVEN Samoa, which skipped 2011-12-30 when it moved across the date line
    start, end = period_bounds(DAILY, "2011-12-30", "Pacific/Apia")
    # WHEN / THEN that day contains no instant, and its neighbours still meet
    assert _utc(start) == _utc(end)
    assert _utc(period_bounds(DAILY, "2011-12-29", "Pacific/Apia")[1]) == _utc(start)
    assert _utc(period_bounds(DAILY, "2011-12-31", "Pacific/Apia")[0]) == _utc(end)


# --- keys that name no period ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "key"),
    [
        # wrong shape
        (DAILY, "2026-11"),
        (DAILY, "2026/11/21"),
        (DAILY, "26-11-21"),
        (DAILY, "2026-11-21T00:00:00"),
        (DAILY, ""),
        (WEEKLY, "2026-47"),
        (WEEKLY, "2026W47"),
        (MONTHLY, "2026-11-01"),
        (MONTHLY, "202611"),
        (QUARTERLY, "2026-4"),
        (QUARTERLY, "2026Q4"),
        (YEARLY, "26"),
        (YEARLY, "20266"),
        (YEARLY, "-2026"),
        # not canonical: missing zero padding, lower case, signs, surrounding whitespace
        (DAILY, "2026-1-05"),
        (DAILY, "2026-01-5"),
        (WEEKLY, "2026-W1"),
        (WEEKLY, "2026-w47"),
        (QUARTERLY, "2026-q4"),
        (YEARLY, "+2026"),
        (YEARLY, " 2026"),
        (DAILY, "2026-11-21 "),
        (DAILY, "2026-11-21\n"),
        (WEEKLY, "2026-W47\n"),
        (YEARLY, "2026\n"),
        # digits from other scripts (Arabic-Indic, fullwidth) that int() would read
        (YEARLY, "\u0662\u0660\u0662\u0666"),
        (MONTHLY, "\uff12\uff10\uff12\uff16-11"),
        # no such period
        (DAILY, "2026-13-01"),
        (DAILY, "2026-00-10"),
        (DAILY, "2026-11-00"),
        (DAILY, "2026-11-31"),
        (DAILY, "2026-04-31"),
        (DAILY, "2026-02-29"),
        (DAILY, "1900-02-29"),
        (DAILY, "0000-01-01"),
        (WEEKLY, "2026-W00"),
        (WEEKLY, "2026-W54"),
        (WEEKLY, "2027-W53"),
        (WEEKLY, "2025-W53"),
        (WEEKLY, "0000-W01"),
        (MONTHLY, "2026-13"),
        (MONTHLY, "2026-00"),
        (QUARTERLY, "2026-Q0"),
        (QUARTERLY, "2026-Q5"),
        (YEARLY, "0000"),
        # periods whose end is past the last representable date
        (DAILY, "9999-12-31"),
        (WEEKLY, "9999-W52"),
        (MONTHLY, "9999-12"),
        (QUARTERLY, "9999-Q4"),
        (YEARLY, "9999"),
    ],
)
def test_malformed_or_impossible_keys_are_refused(grain: Grain, key: str) -> None:
    # GIVEN a key that is malformed, not canonical, or names no period
    # WHEN it is parsed, bounded or stepped THEN every entry point refuses it the same way
    for use in (parse_time_key, period_dates, period_bounds, next_key):
        with pytest.raises(InvalidTimeKeyError):
            use(grain, key)


def test_a_refused_key_is_a_client_validation_error() -> None:
    # GIVEN a bad key from a request WHEN refused THEN the error maps to a 400, not a 500
    with pytest.raises(ValidationFailedError) as caught:
        parse_time_key(WEEKLY, "2027-W53")
    assert caught.value.status == 400
    assert "2027-W53" in caught.value.message


@pytest.mark.parametrize("key", ["2026-W53", "2020-W53", "2015-W53", "2032-W53"])
def test_week_53_is_accepted_in_years_that_have_it(key: str) -> None:
    # WHEN / THEN
    assert parse_time_key(WEEKLY, key) == key


def test_the_last_representable_periods_still_work() -> None:
    # GIVEN the latest periods whose end is still a date WHEN bounded or stepped THEN they work
    assert period_dates(DAILY, "9999-12-30") == (date(9999, 12, 30), date(9999, 12, 31))
    assert next_key(DAILY, "9999-12-30") == "9999-12-31"
    assert next_key(YEARLY, "9998") == "9999"
    assert next_key(MONTHLY, "9999-10") == "9999-11"
    assert next_key(QUARTERLY, "9999-Q2") == "9999-Q3"


def test_working_memory_has_no_time_key() -> None:
    # GIVEN the working grain WHEN any time-key function is used THEN it is refused, saying why
    with pytest.raises(InvalidTimeKeyError, match="working memory has no time key"):
        time_key_for(Grain.WORKING, date(2026, 11, 21))
    for use in (parse_time_key, period_dates, period_bounds, next_key):
        with pytest.raises(InvalidTimeKeyError, match="working memory has no time key"):
            use(Grain.WORKING, "2026-11-21")
    assert not Grain.WORKING.is_summary
    assert all(grain.is_summary for grain in SUMMARY_GRAINS)


def test_summary_grains_are_in_cascade_order() -> None:
    # WHEN / THEN
    assert SUMMARY_GRAINS == (DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY)
    assert set(Grain) == {Grain.WORKING, *SUMMARY_GRAINS}


# --- properties (a key's round trip from any day: test_fuzz_time_keys.py) -----------------------


@FUZZ
@given(grain=summary_grains, day=days)
def test_periods_have_their_grains_length(grain: Grain, day: date) -> None:
    # GIVEN
    first, end = period_dates(grain, time_key_for(grain, day))
    lengths = {
        DAILY: {1},
        WEEKLY: {7},
        MONTHLY: {28, 29, 30, 31},
        QUARTERLY: {90, 91, 92},
        YEARLY: {365, 366},
    }
    # WHEN / THEN
    assert (end - first).days in lengths[grain]
    if grain is WEEKLY:
        assert first.isoweekday() == 1
    elif grain is not DAILY:
        assert first.day == 1


@FUZZ
@given(grain=summary_grains, day=days, steps=st.integers(min_value=1, max_value=40))
def test_consecutive_periods_tile_the_calendar(grain: Grain, day: date, steps: int) -> None:
    # GIVEN a random period WHEN next_key is followed for many steps
    key = time_key_for(grain, day)
    _, previous_end = period_dates(grain, key)
    for _ in range(steps):
        if previous_end.year >= 9999:
            break
        following = next_key(grain, key)
        first, end = period_dates(grain, following)
        # THEN each period starts exactly where the previous one ended: no gap, no overlap
        assert following > key  # keys of one grain also sort in time order
        assert first == previous_end
        assert first < end
        key, previous_end = following, end


@FUZZ
@given(grain=summary_grains, day=days, zone_name=zones, steps=st.integers(min_value=1, max_value=12))
def test_local_periods_tile_in_instants_across_dst(
    grain: Grain, day: date, zone_name: str, steps: int
) -> None:
    # GIVEN a timezone (with or without DST) and a run of consecutive periods
    zone = ZoneInfo(zone_name)
    key = time_key_for(grain, day)
    start, end = period_bounds(grain, key, zone_name)
    # WHEN the periods are followed one after another
    for _ in range(steps):
        first, _ = period_dates(grain, key)
        # THEN each period starts at the first instant of its first local day (local midnight,
        # or the moment the clocks jump when midnight itself is skipped)
        assert _utc(start).astimezone(zone).date() == first
        assert (_utc(start) - timedelta(microseconds=1)).astimezone(zone).date() < first
        assert _utc(start) < _utc(end)
        if end.year >= 9999:
            break
        # AND the next period begins at the very instant this one ends
        key = next_key(grain, key)
        next_start, next_end = period_bounds(grain, key, zone_name)
        assert _utc(next_start) == _utc(end)
        start, end = next_start, next_end


@FUZZ
@given(grain=summary_grains, day=days, zone_name=zones)
def test_local_midnight_in_zones_without_midnight_changes(grain: Grain, day: date, zone_name: str) -> None:
    # GIVEN zones whose DST changes happen away from midnight (in the modern era: before 1970
    # some zones, e.g. Pacific/Chatham in 1946, moved their standard offset at midnight)
    assume(day.year >= 1970)
    if zone_name in {"America/Santiago", "America/Havana"}:
        zone_name = "Pacific/Chatham"
    start, _ = period_bounds(grain, time_key_for(grain, day), zone_name)
    # WHEN / THEN every period starts at 00:00 local time
    local = _utc(start).astimezone(ZoneInfo(zone_name))
    assert (local.hour, local.minute, local.second, local.microsecond) == (0, 0, 0, 0)
