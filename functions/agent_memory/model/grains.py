"""Grains and their time keys.

A grain is the resolution at which memory is kept. Working memory is raw; every other grain is a
summary of one closed calendar period, named by its *time key*:

=========  ===========  =========================================
grain      time key     period
=========  ===========  =========================================
daily      2026-11-21   one calendar day
weekly     2026-W47     one ISO-8601 week (Monday..Sunday)
monthly    2026-11      one calendar month
quarterly  2026-Q4      one calendar quarter
yearly     2026         one calendar year
=========  ===========  =========================================

Periods are half-open ``[start, end)`` intervals of *local dates* in the configured timezone;
:func:`period_bounds` turns them into aware datetimes. ISO weeks belong to the ISO week-numbering
year, so ``2026-12-31`` is in ``2026-W53`` and ``2027-01-01`` may be in the previous year's week.

Keys are strict ASCII in exactly the shapes above (no surrounding whitespace, no other digits).
The last period of each grain in year 9999 has no representable end date and is refused.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo

from agent_memory.errors import InvalidTimeKeyError


class Grain(StrEnum):
    """The resolutions of memory, finest first."""

    WORKING = "working"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    YEARLY = "yearly"

    @property
    def is_summary(self) -> bool:
        return self is not Grain.WORKING


#: Summary grains in cascade order (each folds the one before it).
SUMMARY_GRAINS: tuple[Grain, ...] = (
    Grain.DAILY,
    Grain.WEEKLY,
    Grain.MONTHLY,
    Grain.QUARTERLY,
    Grain.YEARLY,
)

# Used with ``fullmatch`` and ``re.ASCII``: ``$`` alone would accept a trailing newline, and ``\d``
# without ASCII would accept digits of other scripts, which ``int`` then happily reads.
_PATTERNS: dict[Grain, re.Pattern[str]] = {
    Grain.DAILY: re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII),
    Grain.WEEKLY: re.compile(r"(\d{4})-W(\d{2})", re.ASCII),
    Grain.MONTHLY: re.compile(r"(\d{4})-(\d{2})", re.ASCII),
    Grain.QUARTERLY: re.compile(r"(\d{4})-Q([1-4])", re.ASCII),
    Grain.YEARLY: re.compile(r"(\d{4})", re.ASCII),
}


def _require_summary(grain: Grain) -> None:
    if not grain.is_summary:
        raise InvalidTimeKeyError("working memory has no time key")


def time_key_for(grain: Grain, day: date) -> str:
    """The time key of the period of ``grain`` that contains ``day``."""
    _require_summary(grain)
    if grain is Grain.DAILY:  # not isoformat(): a datetime would add its time of day
        return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
    if grain is Grain.WEEKLY:
        iso = day.isocalendar()
        return f"{iso.year:04d}-W{iso.week:02d}"
    if grain is Grain.MONTHLY:
        return f"{day.year:04d}-{day.month:02d}"
    if grain is Grain.QUARTERLY:
        return f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}"
    return f"{day.year:04d}"


def period_dates(grain: Grain, key: str) -> tuple[date, date]:
    """Parse ``key`` and return the half-open date range ``[first, end)`` of its period.

    Raises :class:`InvalidTimeKeyError` for a key that is malformed or names no real period
    (month 13, ISO week 53 of a year that has 52, a period ending after year 9999).
    """
    _require_summary(grain)
    match = _PATTERNS[grain].fullmatch(key)
    if match is None:
        raise InvalidTimeKeyError(f"{key!r} is not a {grain.value} time key")
    parts = [int(p) for p in match.groups()]
    try:
        if grain is Grain.DAILY:
            first = date(parts[0], parts[1], parts[2])
            return first, first + timedelta(days=1)
        if grain is Grain.WEEKLY:
            year, week = parts
            first = date.fromisocalendar(year, week, 1)
            return first, first + timedelta(days=7)
        if grain is Grain.MONTHLY:
            year, month = parts
            first = date(year, month, 1)
            return first, _add_months(first, 1)
        if grain is Grain.QUARTERLY:
            year, quarter = parts
            first = date(year, 3 * (quarter - 1) + 1, 1)
            return first, _add_months(first, 3)
        first = date(parts[0], 1, 1)
        return first, date(parts[0] + 1, 1, 1)
    except (ValueError, OverflowError) as exc:  # date arithmetic past 9999 overflows
        raise InvalidTimeKeyError(f"{key!r} is not a valid {grain.value} period: {exc}") from exc


def period_bounds(grain: Grain, key: str, tz: tzinfo | str = "UTC") -> tuple[datetime, datetime]:
    """The half-open instant range ``[start, end)`` of a period, in timezone ``tz``."""
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz
    first, end = period_dates(grain, key)
    return datetime.combine(first, time(), zone), datetime.combine(end, time(), zone)


def parse_time_key(grain: Grain, key: str) -> str:
    """Validate ``key`` and return it in canonical form (it already is, or it is refused)."""
    first, _ = period_dates(grain, key)
    canonical = time_key_for(grain, first)
    if canonical != key:  # e.g. a weekly key whose Monday falls in another ISO year
        raise InvalidTimeKeyError(f"{key!r} is not canonical; expected {canonical!r}")
    return key


def next_key(grain: Grain, key: str) -> str:
    """The time key of the period right after ``key``."""
    _, end = period_dates(grain, key)
    return time_key_for(grain, end)


def _add_months(day: date, months: int) -> date:
    total = day.year * 12 + (day.month - 1) + months
    year, month = divmod(total, 12)
    return date(year, month + 1, 1)
