"""EventBridge cron expressions as the local scheduler reads them, across DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.local.cron import CronExpression
from agent_memory.schedules import SCHEDULES


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def firings(expression: str, after: datetime, n: int, tz: str = "UTC") -> list[datetime]:
    cron, out = CronExpression.parse(expression), []
    for _ in range(n):
        after = cron.next_after(after, tz)
        out.append(after)
    return out


def test_the_cascade_schedules_fire_when_documented() -> None:
    # GIVEN
    by_name = {s.name: s.expression for s in SCHEDULES}
    start = utc(2026, 12, 30)
    # WHEN / THEN
    assert firings(by_name["summarize-daily"], start, 3) == [
        utc(2026, 12, 30, 0, 15),
        utc(2026, 12, 31, 0, 15),
        utc(2027, 1, 1, 0, 15),
    ]
    assert firings(by_name["summarize-weekly"], start, 2) == [utc(2027, 1, 4, 1, 15), utc(2027, 1, 11, 1, 15)]
    assert firings(by_name["summarize-monthly"], start, 2) == [utc(2027, 1, 1, 2, 15), utc(2027, 2, 1, 2, 15)]
    assert firings(by_name["summarize-quarterly"], start, 3) == [
        utc(2027, 1, 1, 3, 15),
        utc(2027, 4, 1, 3, 15),
        utc(2027, 7, 1, 3, 15),
    ]
    assert firings(by_name["summarize-yearly"], start, 2) == [utc(2027, 1, 1, 4, 15), utc(2028, 1, 1, 4, 15)]


def test_day_of_week_numbers_start_on_sunday_as_in_eventbridge() -> None:
    # WHEN / THEN
    # 2 = MON in EventBridge; 2026-11-23 is a Monday
    assert firings("cron(0 9 ? * 2 *)", utc(2026, 11, 20), 1) == [utc(2026, 11, 23, 9)]
    assert firings("cron(0 9 ? * SUN *)", utc(2026, 11, 20), 1) == [utc(2026, 11, 22, 9)]


def test_lists_ranges_steps_and_years() -> None:
    # WHEN / THEN
    assert firings("cron(0/20 8-9 ? * MON-FRI *)", utc(2026, 11, 20, 9, 30), 3) == [
        utc(2026, 11, 20, 9, 40),
        utc(2026, 11, 23, 8, 0),
        utc(2026, 11, 23, 8, 20),
    ]
    assert firings("cron(0 0 29 FEB ? 2028)", utc(2026, 1, 1), 1) == [utc(2028, 2, 29)]


def test_wall_times_follow_the_timezone_through_daylight_saving() -> None:
    # GIVEN
    # New York: 00:15 local is 05:15 UTC in winter, 04:15 UTC in summer (DST from 2026-03-08)
    out = firings("cron(15 0 * * ? *)", utc(2026, 3, 7), 3, "America/New_York")
    # WHEN / THEN
    assert out == [utc(2026, 3, 7, 5, 15), utc(2026, 3, 8, 5, 15), utc(2026, 3, 9, 4, 15)]


def test_a_wall_time_that_does_not_exist_fires_as_much_later_as_the_clocks_jumped() -> None:
    # GIVEN
    # Santiago skips 00:00-01:00 on 2026-09-06: 00:15 fires at 01:15 -03 (04:15 UTC)
    out = firings("cron(15 0 * * ? *)", utc(2026, 9, 5, 12), 2, "America/Santiago")
    # WHEN / THEN
    assert out == [utc(2026, 9, 6, 4, 15), utc(2026, 9, 7, 3, 15)]


def test_a_wall_time_that_happens_twice_fires_once() -> None:
    # GIVEN
    # Santiago repeats 23:00-23:59 on 2026-04-04: 23:30 fires at its first occurrence only
    out = firings("cron(30 23 * * ? *)", utc(2026, 4, 4, 12), 2, "America/Santiago")
    # WHEN / THEN
    assert out == [utc(2026, 4, 5, 2, 30), utc(2026, 4, 6, 3, 30)]
    assert out[1] - out[0] == timedelta(hours=25)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("cron(15 0 * * *)", "6 fields"),
        ("cron(15 0 * * * *)", "exactly one"),
        ("cron(15 0 ? * ? *)", "exactly one"),
        ("cron(15 0 L * ? *)", "L, W or #"),
        ("cron(15 0 ? * 6#3 *)", "L, W or #"),
        ("cron(61 0 * * ? *)", "outside"),
        ("cron(15 0 * FOO ? *)", "not a number"),
        ("cron(0/0 0 * * ? *)", "positive"),
    ],
)
def test_expressions_the_scheduler_cannot_read_are_refused(expression: str, message: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match=message):
        CronExpression.parse(expression)


def test_an_expression_that_never_fires_says_so() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="does not fire"):
        CronExpression.parse("cron(0 0 30 FEB ? *)").next_after(utc(2026, 1, 1))
