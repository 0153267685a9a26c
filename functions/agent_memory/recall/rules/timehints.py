"""Time named in a query: "in July 2023", "on 13 October", "last year", "two weeks ago".

A question that names a time is about memories of that time, but people rarely say things on the
day they happen ("we went camping last week", said on the 10th, is the memory of a trip in
early July). So a hint is a *boost*, never a filter: memories whose span overlaps the hinted
window rank higher (`recall.rules.ranking.score`), everything else stays findable. Each window is widened
after its end by `MENTION_LAG` for the same reason.

Relative expressions are measured from the search's ``as_of``. Only English is understood; a
query with no time in it gets no hint. The parser is deliberately small and predictable: a month
name, a day and a year in the usual orders, ISO dates, "yesterday", "last/this week, weekend,
month, year", "N days/weeks/months/years ago", and a season with a year.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2,
    "few": 3,
}  # fmt: skip
#: Memories of an event are often told a few days after it: a window reaches this far past its end.
MENTION_LAG = timedelta(days=7)
DAY = timedelta(days=1)

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_NUMBER = r"(?P<n>\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|month|year)s?"

#: The phrase forms a time is named in, most specific first (`time_hints` tries them in this order).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(pattern))
    for kind, pattern in {
        "iso": r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b",
        "month_day_year": rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b",
        "day_month_year": rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b",
        "month_day": rf"\b{_MONTH}\s+{_DAY}\b(?!\s*,?\s*(?:19|20)\d\d)",
        "day_month": rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?!,?\s*(?:19|20)\d\d)",
        "month_year": rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b",
        "season_year": rf"\b(?P<season>spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_YEAR}\b",
        "month": rf"\b(?:in|during|of|since|last|this)\s+{_MONTH}\b",
        "year": rf"\b(?:in|during|of|since)\s+{_YEAR}\b",
        "ago": rf"\b{_NUMBER}\s+{_UNIT}\s+ago\b",
        "last": r"\b(?P<which>last|this|past|previous)\s+(?P<unit>weekend|week|month|year)\b",
        "yesterday": r"\b(?:yesterday|the day before)\b",
    }.items()
]
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}


@dataclass(frozen=True, slots=True)
class TimeHint:
    """A window ``[start, end)`` the query names, and the words that named it."""

    start: datetime
    end: datetime
    phrase: str

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return start < self.end and end >= self.start


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _latest(month: int, day: int | None, as_of: datetime) -> int:
    """The year of the latest such month (or date) at or before ``as_of``."""
    year = as_of.year
    if (month, day or 1) > (as_of.month, as_of.day if day else 1):
        year -= 1
    return year


def _day_window(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return start - DAY, start + 2 * DAY


def _window(kind: str, m: re.Match[str], as_of: datetime) -> tuple[datetime, datetime] | None:
    g = m.groupdict()
    if kind in {"iso", "month_day_year", "day_month_year"}:
        month = int(g["month"]) if kind == "iso" else MONTHS[g["month"]]
        return _day_window(int(g["year"]), month, int(g["day"]))
    if kind in {"month_day", "day_month"}:
        month, day = MONTHS[g["month"]], int(g["day"])
        return _day_window(_latest(month, day, as_of), month, day)
    if kind == "month_year":
        return _month_window(int(g["year"]), MONTHS[g["month"]])
    if kind == "month":
        month = MONTHS[g["month"]]
        return _month_window(_latest(month, None, as_of), month)
    if kind == "season_year":
        first, last = _SEASONS[g["season"]]
        year = int(g["year"])
        start = datetime(year, first, 1, tzinfo=UTC)
        end_year = year + 1 if last < first else year
        return start, _month_window(end_year, last)[1]
    if kind == "year":
        year = int(g["year"])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if kind == "ago":
        n = int(g["n"]) if g["n"].isdigit() else NUMBERS[g["n"]]
        unit_days = {"day": 1, "week": 7, "month": 30, "year": 365}[g["unit"]]
        center = as_of - timedelta(days=n * unit_days)
        half = timedelta(days=max(1.0, unit_days / 2))
        return center - half, center + half
    if kind == "last":
        return _relative_window(g["which"], g["unit"], as_of)
    if kind == "yesterday":
        midnight = datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC)
        return midnight - 2 * DAY, midnight
    return None


def _relative_window(which: str, unit: str, as_of: datetime) -> tuple[datetime, datetime]:
    today = datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC)
    if unit in {"week", "weekend"}:
        monday = today - timedelta(days=today.weekday())
        if which == "this":
            return monday, monday + timedelta(days=7)
        if which == "past":
            return today - timedelta(days=7), today + DAY
        return monday - timedelta(days=7), monday
    if unit == "month":
        start, end = _month_window(today.year, today.month)
        if which == "this":
            return start, end
        if which == "past":
            return today - timedelta(days=30), today + DAY
        previous = start - DAY
        return _month_window(previous.year, previous.month)
    if which == "this":
        return datetime(today.year, 1, 1, tzinfo=UTC), datetime(today.year + 1, 1, 1, tzinfo=UTC)
    if which == "past":
        return today - timedelta(days=365), today + DAY
    return datetime(today.year - 1, 1, 1, tzinfo=UTC), datetime(today.year, 1, 1, tzinfo=UTC)


def time_hints(query: str | None, as_of: datetime) -> list[TimeHint]:
    """Every window ``query`` names, each widened by `MENTION_LAG`; at most one per phrase.

    Patterns are tried most specific first, and a span of the text claimed by one is not read
    again by a vaguer one ("13 October 2023" is a day, not also "October 2023").
    """
    if not query:
        return []
    text = query.lower()
    claimed: list[tuple[int, int]] = []
    hints: list[TimeHint] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and m.end() > s for s, e in claimed):
                continue
            try:
                window = _window(kind, m, as_of)
                hint = None if window is None else TimeHint(window[0], window[1] + MENTION_LAG, m.group(0))
            except (OverflowError, ValueError):
                # "5000 years ago", "99999999 weeks ago", "last year" in year 1: outside the
                # calendar Python can count in, so no hint (never an error: it is only a boost)
                hint = None
            if hint is None:
                continue
            claimed.append(m.span())
            hints.append(hint)
    return hints
