"""The cascade's folding rules at the boundaries of time: ISO week 53, weeks straddling months
and years, leap days, and a timezone whose clocks jump at midnight."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.cascade.rules.periods import (
    child_keys,
    covered_dates,
    covered_span,
    due_key,
    finer_grains,
    key_for_day,
    keys_between,
    local_date,
    parent_key,
)
from agent_memory.errors import InvalidTimeKeyError
from agent_memory.model.grains import SUMMARY_GRAINS, Grain, period_dates, time_key_for

days = st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31))


# ------------------------------------------------------------------------------------------------
# weekly: ISO weeks, week 53, weeks across months and years
# ------------------------------------------------------------------------------------------------


def test_iso_week_53_folds_the_seven_days_across_the_new_year() -> None:
    # WHEN / THEN
    assert child_keys(Grain.WEEKLY, "2026-W53") == [
        "2026-12-28",
        "2026-12-29",
        "2026-12-30",
        "2026-12-31",
        "2027-01-01",
        "2027-01-02",
        "2027-01-03",
    ]
    assert parent_key(Grain.DAILY, "2027-01-02") == "2026-W53"


def test_a_week_that_straddles_two_years_belongs_to_the_month_and_year_of_its_thursday() -> None:
    # WHEN / THEN
    # 2026-W53: Mon Dec 28 2026 .. Sun Jan 3 2027, Thursday Dec 31 -> December 2026
    assert parent_key(Grain.WEEKLY, "2026-W53") == "2026-12"
    assert "2026-W53" in child_keys(Grain.MONTHLY, "2026-12")
    assert child_keys(Grain.MONTHLY, "2027-01")[0] == "2027-W01"
    # 2025-W01: Mon Dec 30 2024 .. Sun Jan 5 2025, Thursday Jan 2 2025 -> January 2025
    assert parent_key(Grain.WEEKLY, "2025-W01") == "2025-01"
    assert "2025-W01" not in child_keys(Grain.MONTHLY, "2024-12")


def test_a_week_that_straddles_two_months_is_folded_into_one_of_them_only() -> None:
    # WHEN / THEN
    # 2026-W44: Mon Oct 26 .. Sun Nov 1, Thursday Oct 29 -> October
    assert "2026-W44" in child_keys(Grain.MONTHLY, "2026-10")
    assert "2026-W44" not in child_keys(Grain.MONTHLY, "2026-11")
    # so November's summary covers Nov 2 .. Nov 29, and its span starts on a Monday
    assert covered_dates(Grain.MONTHLY, "2026-11") == (date(2026, 11, 2), date(2026, 11, 30))


@given(days)
def test_every_day_is_folded_by_exactly_one_period_of_every_grain(day: date) -> None:
    # GIVEN
    # walk up from the day: each grain's parent must hold the child, and nothing else may
    key = time_key_for(Grain.DAILY, day)
    # WHEN / THEN
    for grain in SUMMARY_GRAINS[:-1]:
        parent = parent_key(grain, key)
        parent_grain = SUMMARY_GRAINS[SUMMARY_GRAINS.index(grain) + 1]
        assert key in child_keys(parent_grain, parent)
        first, end = covered_dates(parent_grain, parent)
        assert first <= day < end
        assert parent == key_for_day(parent_grain, day)
        key = parent


@given(st.integers(min_value=1990, max_value=2090))
def test_the_months_of_a_year_fold_every_iso_week_of_it_once(year: int) -> None:
    # GIVEN
    weeks = [w for m in range(1, 13) for w in child_keys(Grain.MONTHLY, f"{year}-{m:02d}")]
    # WHEN
    weeks_in_year = date(year, 12, 28).isocalendar().week  # Dec 28 is always in the last ISO week
    # THEN
    assert weeks == [f"{year}-W{w:02d}" for w in range(1, weeks_in_year + 1)]
    # and the yearly summary covers exactly the ISO week-numbering year
    assert covered_dates(Grain.YEARLY, str(year)) == (
        date.fromisocalendar(year, 1, 1),
        date.fromisocalendar(year + 1, 1, 1),
    )


# ------------------------------------------------------------------------------------------------
# leap days, quarters, years
# ------------------------------------------------------------------------------------------------


def test_a_leap_day_is_a_daily_period_of_its_own_and_is_folded_by_the_month_of_its_week() -> None:
    # WHEN / THEN
    assert period_dates(Grain.DAILY, "2028-02-29") == (date(2028, 2, 29), date(2028, 3, 1))
    assert parent_key(Grain.DAILY, "2028-02-29") == "2028-W09"
    # 2028-W09 runs Mon Feb 28 .. Sun Mar 5; its Thursday is March 2nd
    assert parent_key(Grain.WEEKLY, "2028-W09") == "2028-03"
    assert child_keys(Grain.MONTHLY, "2028-02") == ["2028-W05", "2028-W06", "2028-W07", "2028-W08"]
    with pytest.raises(InvalidTimeKeyError):
        period_dates(Grain.DAILY, "2027-02-29")


def test_quarters_fold_their_months_and_years_their_quarters() -> None:
    # WHEN / THEN
    assert child_keys(Grain.QUARTERLY, "2026-Q4") == ["2026-10", "2026-11", "2026-12"]
    assert child_keys(Grain.YEARLY, "2026") == ["2026-Q1", "2026-Q2", "2026-Q3", "2026-Q4"]
    assert parent_key(Grain.MONTHLY, "2026-12") == "2026-Q4"
    assert parent_key(Grain.QUARTERLY, "2026-Q4") == "2026"
    # the quarter covers its months' weeks: Oct 1 2026 is a Thursday, so its week starts Sep 28
    assert covered_dates(Grain.QUARTERLY, "2026-Q4") == (date(2026, 9, 28), date(2027, 1, 4))


def test_a_daily_summary_has_no_child_keys_and_a_yearly_one_no_parent() -> None:
    # WHEN / THEN
    with pytest.raises(InvalidTimeKeyError):
        child_keys(Grain.DAILY, "2026-11-21")
    with pytest.raises(InvalidTimeKeyError):
        parent_key(Grain.YEARLY, "2026")
    with pytest.raises(InvalidTimeKeyError):
        finer_grains(Grain.WORKING)
    assert finer_grains(Grain.MONTHLY) == (Grain.WEEKLY, Grain.DAILY, Grain.WORKING)


# ------------------------------------------------------------------------------------------------
# timezones
# ------------------------------------------------------------------------------------------------


def test_a_day_starts_at_local_midnight_in_the_configured_timezone() -> None:
    # GIVEN
    # Auckland is UTC+13 in November: the 21st starts at 11:00 UTC on the 20th
    start, end = covered_span(Grain.DAILY, "2026-11-21", "Pacific/Auckland")
    # WHEN / THEN
    assert start == datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
    assert end - start == timedelta(hours=24)
    assert local_date(datetime(2026, 11, 20, 12, 0, tzinfo=UTC), "Pacific/Auckland") == date(2026, 11, 21)


def test_a_day_whose_midnight_does_not_exist_starts_when_the_clocks_jump() -> None:
    # GIVEN
    # Santiago skips 00:00-01:00 on 2026-09-06 (UTC-4 -> UTC-3): the day starts at 01:00 -03
    start, end = covered_span(Grain.DAILY, "2026-09-06", "America/Santiago")
    # WHEN / THEN
    assert start == datetime(2026, 9, 6, 4, 0, tzinfo=UTC)
    assert end == datetime(2026, 9, 7, 3, 0, tzinfo=UTC)  # a 23-hour day
    assert local_date(start - timedelta(microseconds=1), "America/Santiago") == date(2026, 9, 5)
    assert local_date(start, "America/Santiago") == date(2026, 9, 6)
    # the day before ends exactly where it starts: no instant belongs to no day, none to two
    assert covered_span(Grain.DAILY, "2026-09-05", "America/Santiago")[1] == start


def test_a_day_that_repeats_an_hour_before_midnight_is_25_hours_long() -> None:
    # GIVEN
    # Santiago turns 00:00 -03 on 2026-04-05 back to 23:00 -04 on the 4th
    start, end = covered_span(Grain.DAILY, "2026-04-04", "America/Santiago")
    # WHEN / THEN
    assert end - start == timedelta(hours=25)


# ------------------------------------------------------------------------------------------------
# what a schedule firing takes, and ranges
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "fired", "expected"),
    [
        (Grain.DAILY, datetime(2027, 1, 1, 0, 15, tzinfo=UTC), "2026-12-31"),
        (Grain.WEEKLY, datetime(2027, 1, 4, 1, 15, tzinfo=UTC), "2026-W53"),
        (Grain.MONTHLY, datetime(2027, 1, 1, 2, 15, tzinfo=UTC), "2026-12"),
        # Sep 30 2025 is a Tuesday: by the calendar, the month that closed is September
        (Grain.MONTHLY, datetime(2025, 10, 1, 2, 15, tzinfo=UTC), "2025-09"),
        (Grain.QUARTERLY, datetime(2027, 1, 1, 3, 15, tzinfo=UTC), "2026-Q4"),
        (Grain.YEARLY, datetime(2027, 1, 1, 4, 15, tzinfo=UTC), "2026"),
        (Grain.DAILY, datetime(2028, 3, 1, 0, 15, tzinfo=UTC), "2028-02-29"),
    ],
)
def test_a_schedule_firing_takes_the_period_that_closed_the_day_before(
    grain: Grain, fired: datetime, expected: str
) -> None:
    # WHEN / THEN
    assert due_key(grain, fired) == expected


def test_the_period_due_is_decided_in_the_configured_timezone() -> None:
    # GIVEN
    # 00:15 on Nov 21 in Auckland is 11:15 UTC on Nov 20: the day that closed is Nov 20 (local)
    fired = datetime(2026, 11, 20, 11, 15, tzinfo=UTC)
    # WHEN / THEN
    assert due_key(Grain.DAILY, fired, "Pacific/Auckland") == "2026-11-20"
    assert due_key(Grain.DAILY, fired, "UTC") == "2026-11-19"


def test_keys_between_names_every_period_holding_a_day_of_the_range() -> None:
    # WHEN / THEN
    assert len(keys_between(Grain.DAILY, date(2026, 1, 1), date(2026, 3, 31))) == 90
    assert keys_between(Grain.WEEKLY, date(2026, 12, 31), date(2027, 1, 4)) == ["2026-W53", "2027-W01"]
    assert keys_between(Grain.MONTHLY, date(2026, 1, 15), date(2026, 3, 1)) == [
        "2026-01",
        "2026-02",
        "2026-03",
    ]
    assert keys_between(Grain.YEARLY, date(2026, 5, 1), date(2026, 5, 1)) == ["2026"]
    with pytest.raises(InvalidTimeKeyError):
        keys_between(Grain.DAILY, date(2026, 2, 1), date(2026, 1, 1))
