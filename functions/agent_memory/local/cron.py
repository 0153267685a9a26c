"""EventBridge Scheduler cron expressions, evaluated in a timezone, for the local scheduler.

``cron(minutes hours day-of-month month day-of-week year)``, as AWS reads them: numbers, ``*``,
lists (``1,4,7,10``), ranges (``MON-FRI``), steps (``0/15``, ``*/5``), month names ``JAN``-``DEC``
and day names ``SUN``-``SAT``, where day-of-week numbers run from 1 = Sunday to 7 = Saturday.
One of day-of-month and day-of-week must be ``?``. ``L``, ``W`` and ``#`` are refused with a
clear error rather than misread (no schedule of this service uses them).

Times are wall-clock times in the timezone. On a daylight-saving day, a wall time that does not
exist fires as much later as the clocks jumped (00:15 on a night that skips 00:00-01:00 fires at
01:15), and a wall time that happens twice fires once, the first time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from agent_memory.cascade.rules.periods import zone

_MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)}
_DAYS = {name: i for i, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), start=1)}
_EXPRESSION = re.compile(r"^\s*cron\((.*)\)\s*$")
#: How far ahead `next_after` looks before it gives up (an expression like Feb 30 never fires).
_HORIZON_DAYS = 366 * 8


def _field(text: str, low: int, high: int, names: dict[str, int] | None = None) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        if any(c in item for c in "LW#"):
            raise ValueError(f"cron: {item!r} uses L, W or #, which the local scheduler does not support")
        part, step = item, 1
        stepped = "/" in item
        if stepped:
            part, step_text = item.split("/", 1)
            step = int(step_text)
            if step < 1:
                raise ValueError(f"cron: step {step} must be positive")
        if part == "*":
            start, end = low, high
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = _value(a, names), _value(b, names)
        else:
            start = _value(part, names)
            end = high if stepped else start
        if not low <= start <= end <= high:
            raise ValueError(f"cron: {part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _value(text: str, names: dict[str, int] | None) -> int:
    upper = text.strip().upper()
    if names and upper in names:
        return names[upper]
    if not upper.isdigit():
        raise ValueError(f"cron: {text!r} is not a number" + (" or a name" if names else ""))
    return int(upper)


@dataclass(frozen=True, slots=True)
class CronExpression:
    minutes: frozenset[int]
    hours: frozenset[int]
    #: None: ``?`` (no constraint on this field).
    days_of_month: frozenset[int] | None
    months: frozenset[int]
    #: Python's ``isoweekday()`` numbers (1 = Monday), converted from EventBridge's 1 = Sunday.
    days_of_week: frozenset[int] | None
    #: None: every year.
    years: frozenset[int] | None

    @classmethod
    def parse(cls, expression: str) -> CronExpression:
        match = _EXPRESSION.match(expression)
        fields = (match.group(1) if match else expression).split()
        if len(fields) != 6:
            raise ValueError(f"cron: {expression!r} must have 6 fields (min hour dom month dow year)")
        minute, hour, dom, month, dow, year = fields
        if (dom == "?") == (dow == "?"):
            raise ValueError(f"cron: {expression!r}: exactly one of day-of-month and day-of-week must be '?'")
        weekdays = None
        if dow != "?":
            # EventBridge: 1 = SUN .. 7 = SAT; isoweekday: 1 = MON .. 7 = SUN
            weekdays = frozenset((d - 2) % 7 + 1 for d in _field(dow, 1, 7, _DAYS))
        return cls(
            minutes=_field(minute, 0, 59),
            hours=_field(hour, 0, 23),
            days_of_month=None if dom == "?" else _field(dom, 1, 31),
            months=_field(month, 1, 12, _MONTHS),
            days_of_week=weekdays,
            years=None if year == "*" else _field(year, 1970, 2199),
        )

    def matches_day(self, day: date) -> bool:
        if day.month not in self.months or (self.years is not None and day.year not in self.years):
            return False
        if self.days_of_month is not None and day.day not in self.days_of_month:
            return False
        return self.days_of_week is None or day.isoweekday() in self.days_of_week

    def next_after(self, after: datetime, tz: tzinfo | str = "UTC") -> datetime:
        """The first firing strictly after ``after``, as an aware UTC datetime."""
        place = zone(tz)
        after_utc = after.astimezone(UTC)
        day = after_utc.astimezone(place).date() - timedelta(days=1)  # a gap may move a time back
        times = sorted(time(h, m) for h in self.hours for m in self.minutes)
        for _ in range(_HORIZON_DAYS):
            if self.matches_day(day):
                for wall in times:
                    instant = datetime.combine(day, wall, place).astimezone(UTC)
                    if instant > after_utc:
                        return instant
            day += timedelta(days=1)
        raise ValueError("cron: the expression does not fire within eight years")
