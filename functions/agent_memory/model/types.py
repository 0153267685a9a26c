"""Reusable annotated types: ids, tags and bounded numbers.

Ids are deliberately narrow. Tenant and agent ids may not contain ``:`` because they are joined
with it into FIFO message groups and routing keys; none may contain ``/`` or start with ``.`` so an
id can never be read as a path.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

from agent_memory.model.limits import MAX_SPEAKER_CHARS, MAX_TAG_CHARS, MAX_TOPIC_CHARS

_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

TenantId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
AgentId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
UserId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
ConversationId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")]
#: A run of an agent's task (experiences of one run count once toward a pattern's runs).
RunId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")]
#: Record ids are made by the service: a prefix and a base32 digest (see `model.ids`).
MemoryId = Annotated[str, StringConstraints(pattern=r"^[a-z]{1,8}_[a-z2-7]{16,64}$")]


def visible(value: str) -> bool:
    """Whether ``value`` has a character a person can see: not only white space, control
    characters (NUL, ESC) or invisible format characters (zero-width space, joiners, BOM)."""
    return any(not c.isspace() and unicodedata.category(c) not in {"Cc", "Cf"} for c in value)


def _seen(value: str) -> str:
    if not visible(value):
        raise ValueError(
            "must have a visible character (white space, control and zero-width characters alone are blank)"
        )
    return value


def label(max_length: int) -> Any:
    """One text rule for the short labels of a memory (topic, tags, speaker): trimmed, 1 to
    ``max_length`` characters, no control characters (C1, terminal escapes among them, included),
    and something visible."""
    return Annotated[
        str,
        StringConstraints(
            strip_whitespace=True, min_length=1, max_length=max_length, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$"
        ),
        AfterValidator(_seen),
    ]


Tag = label(MAX_TAG_CHARS)
#: Strict: ``true`` is not 1.0 and ``"0.5"`` is not 0.5 (an integer 0 or 1 is a number).
Score = Annotated[float, Field(strict=True, ge=0.0, le=1.0)]
#: Who said a conversation turn, as people call them ("Alice", "Support bot"): it goes into the
#: text that is embedded and indexed, so "what did Alice say about ..." finds Alice's turns.
Speaker = label(MAX_SPEAKER_CHARS)
Topic = label(MAX_TOPIC_CHARS)


#: The instants the service accepts: a day inside Python's range at both ends, so that every
#: shift the service makes on its own (the day before and after, a local midnight in any
#: timezone) stays representable. "0001-01-01T00:00:00+01:00" is a year-0 instant in UTC.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
FIRST_DAY, LAST_DAY = EARLIEST.date(), LATEST.date()
_RANGE = "between 0001-01-02 and 9999-12-30 (UTC)"


def _as_utc(value: datetime) -> datetime:
    """Naive datetimes are read as UTC; aware ones are converted to it; both within the range."""
    try:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"must be {_RANGE}") from None
    if not EARLIEST <= value <= LATEST:
        raise ValueError(f"must be {_RANGE}")
    return value


def _in_day_range(value: date) -> date:
    if not FIRST_DAY <= value <= LAST_DAY:
        raise ValueError(f"must be {_RANGE}")
    return value


def shifted(at: datetime, delta: timedelta) -> datetime:
    """``at + delta``, held within `EARLIEST`..`LATEST` ("36,500 days before 0001-01-02" is the
    start of time, not an error)."""
    try:
        moved = at + delta
    except OverflowError:
        return LATEST if delta > timedelta(0) else EARLIEST
    return min(max(moved, EARLIEST), LATEST)


def shifted_day(day: date, days: int) -> date:
    """`shifted` for calendar days."""
    try:
        moved = day + timedelta(days=days)
    except OverflowError:
        return LAST_DAY if days > 0 else FIRST_DAY
    return min(max(moved, FIRST_DAY), LAST_DAY)


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
#: A calendar day a client names (``since``/``until``), within the same range.
Day = Annotated[date, AfterValidator(_in_day_range)]
