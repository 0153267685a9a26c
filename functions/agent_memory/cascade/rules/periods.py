"""The grain cascade's folding rules: what each summary folds, the span it covers, when it is due.

=========  ===============================================================================
grain      folds
=========  ===============================================================================
daily      the working memory that occurred on that local day
weekly     the daily summaries of its ISO week (Monday to Sunday)
monthly    the weekly summaries whose ISO week has its *Thursday* in the month
quarterly  its three monthly summaries
yearly     its four quarterly summaries
=========  ===============================================================================

Why the Thursday: weeks do not fit in months. A week that straddles two months is folded into
the month that holds its Thursday (the month holding most of its days, the same rule ISO 8601
uses to give weeks to years), so every week belongs to exactly one month: none is folded twice
and none is lost. As a consequence a monthly summary covers whole weeks, and its *covered span*
(`covered_span`) can start a few days before the 1st or end a few days after the last day of
its month; the quarterly and yearly summaries cover the spans of their months, so a yearly
summary covers exactly the ISO week-numbering year (2026 runs from Mon 2025-12-29 to Sun
2027-01-03). A summary's ``period_start``/``period_end`` are that covered span: the instants its
content speaks about, which is what search windows are matched against.

All boundaries are local midnights in the configured timezone. A local midnight that does not
exist (a daylight-saving jump at midnight) starts its day at the first instant after the gap.

The time key of a summary names its calendar period (``2026-11``); `due_key` picks the period
that a schedule firing at an instant has just closed, by the calendar (the day before the firing
day), so the monthly run on the 1st takes the month that ended yesterday.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Final
from zoneinfo import ZoneInfo

from agent_memory.errors import InvalidTimeKeyError
from agent_memory.model.grains import SUMMARY_GRAINS, Grain, period_dates, time_key_for

#: What each summary grain folds.
CHILD_GRAIN: Final[dict[Grain, Grain]] = {
    Grain.DAILY: Grain.WORKING,
    Grain.WEEKLY: Grain.DAILY,
    Grain.MONTHLY: Grain.WEEKLY,
    Grain.QUARTERLY: Grain.MONTHLY,
    Grain.YEARLY: Grain.QUARTERLY,
}
#: What each grain is folded into (working memory into daily, ..., quarterly into yearly).
PARENT_GRAIN: Final[dict[Grain, Grain]] = {child: parent for parent, child in CHILD_GRAIN.items()}

_THURSDAY = 3  # date.weekday()


def zone(tz: tzinfo | str) -> tzinfo:
    return ZoneInfo(tz) if isinstance(tz, str) else tz


def require_summary_grain(grain: Grain) -> Grain:
    grain = Grain(grain)
    if not grain.is_summary:
        raise InvalidTimeKeyError("working memory is not summarized: choose a summary grain")
    return grain


def finer_grains(grain: Grain) -> tuple[Grain, ...]:
    """The grains below ``grain``, nearest first, down to working memory."""
    out: list[Grain] = []
    current = require_summary_grain(grain)
    while current in CHILD_GRAIN:
        current = CHILD_GRAIN[current]
        out.append(current)
    return tuple(out)


def local_date(instant: datetime, tz: tzinfo | str = "UTC") -> date:
    """The calendar day ``instant`` falls on in ``tz`` (a naive instant is read as UTC)."""
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(zone(tz)).date()


def local_midnight(day: date, tz: tzinfo | str = "UTC") -> datetime:
    """The first instant of ``day`` in ``tz``, in UTC.

    The UTC round trip resolves a midnight that does not exist (a jump from 00:00 to 01:00) to the
    instant the clocks jumped, which is the first instant of that day.
    """
    return datetime.combine(day, time(), zone(tz)).astimezone(UTC)


def thursday_of(day: date) -> date:
    """The Thursday of the ISO week of ``day``."""
    return day + timedelta(days=_THURSDAY - day.weekday())


def key_for_day(grain: Grain, day: date) -> str:
    """The period of ``grain`` whose summary folds ``day``, by the rules above.

    Daily and weekly are the calendar day and the ISO week; from monthly up a day belongs where
    its week's Thursday belongs.
    """
    grain = require_summary_grain(grain)
    if grain in (Grain.DAILY, Grain.WEEKLY):
        return time_key_for(grain, day)
    return time_key_for(grain, thursday_of(day))


def child_keys(grain: Grain, key: str) -> list[str]:
    """The time keys of the summaries that ``grain``'s ``key`` folds, oldest first.

    A daily summary folds working memory, which has no time keys: asking is an error.
    """
    grain = require_summary_grain(grain)
    if grain is Grain.DAILY:
        raise InvalidTimeKeyError("a daily summary folds working memory, which has no time keys")
    first, end = period_dates(grain, key)
    if grain is Grain.WEEKLY:
        return [time_key_for(Grain.DAILY, first + timedelta(days=i)) for i in range((end - first).days)]
    if grain is Grain.MONTHLY:
        thursday = first + timedelta(days=(_THURSDAY - first.weekday()) % 7)
        weeks = []
        while thursday < end:
            weeks.append(time_key_for(Grain.WEEKLY, thursday))
            thursday += timedelta(days=7)
        return weeks
    child = CHILD_GRAIN[grain]
    keys: list[str] = []
    day = first
    while day < end:
        key_of_day = time_key_for(child, day)
        if not keys or keys[-1] != key_of_day:
            keys.append(key_of_day)
        _, day = period_dates(child, key_of_day)
    return keys


def parent_key(grain: Grain, key: str) -> str:
    """The time key of the summary of the next grain up that folds ``grain``'s ``key``."""
    grain = require_summary_grain(grain)
    if grain is Grain.YEARLY:
        raise InvalidTimeKeyError("a yearly summary is not folded any further")
    first, _ = period_dates(grain, key)
    parent = PARENT_GRAIN[grain]
    if grain is Grain.DAILY:
        return time_key_for(Grain.WEEKLY, first)
    if grain is Grain.WEEKLY:
        return time_key_for(Grain.MONTHLY, thursday_of(first))
    return time_key_for(parent, first)


def covered_dates(grain: Grain, key: str) -> tuple[date, date]:
    """The local days a summary's content covers, half-open ``[first, end)``."""
    grain = require_summary_grain(grain)
    if grain in (Grain.DAILY, Grain.WEEKLY):
        return period_dates(grain, key)
    if grain is Grain.MONTHLY:
        weeks = child_keys(grain, key)
        first, _ = period_dates(Grain.WEEKLY, weeks[0])
        _, end = period_dates(Grain.WEEKLY, weeks[-1])
        return first, end
    months = child_keys(Grain.QUARTERLY, key) if grain is Grain.QUARTERLY else [f"{key}-01", f"{key}-12"]
    first, _ = covered_dates(Grain.MONTHLY, months[0])
    _, end = covered_dates(Grain.MONTHLY, months[-1])
    return first, end


def covered_span(grain: Grain, key: str, tz: tzinfo | str = "UTC") -> tuple[datetime, datetime]:
    """The instants a summary's content covers, half-open ``[start, end)``, in UTC."""
    first, end = covered_dates(grain, key)
    return local_midnight(first, tz), local_midnight(end, tz)


def due_key(grain: Grain, at: datetime, tz: tzinfo | str = "UTC") -> str:
    """The period of ``grain`` that a schedule firing at ``at`` summarizes: the calendar period
    that holds the day before ``at``'s local day (daily at 00:15 takes yesterday, weekly on
    Monday the week that ended on Sunday, monthly on the 1st the month that ended yesterday)."""
    return time_key_for(require_summary_grain(grain), local_date(at, tz) - timedelta(days=1))


def keys_between(grain: Grain, first: date, last: date, most: int | None = None) -> list[str]:
    """Every calendar period of ``grain`` that holds a day of ``[first, last]``, oldest first;
    with ``most``, no more than ``most + 1`` of them (enough to tell the range is too long
    without walking thousands of years of days: a request's range is checked this way)."""
    grain = require_summary_grain(grain)
    if last < first:
        raise InvalidTimeKeyError(f"the range ends ({last}) before it starts ({first})")
    keys: list[str] = []
    key = time_key_for(grain, first)
    while True:
        keys.append(key)
        _, end = period_dates(grain, key)
        if end > last or (most is not None and len(keys) > most):
            return keys
        key = time_key_for(grain, end)


__all__ = [
    "CHILD_GRAIN",
    "PARENT_GRAIN",
    "SUMMARY_GRAINS",
    "child_keys",
    "covered_dates",
    "covered_span",
    "due_key",
    "finer_grains",
    "key_for_day",
    "keys_between",
    "local_date",
    "local_midnight",
    "parent_key",
    "thursday_of",
]
