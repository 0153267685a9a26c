"""Small test doubles shared across the suite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FixedClock:
    """A clock tests can set and move."""

    def __init__(self, now: datetime | None = None) -> None:
        self._now = now or datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **kwargs: float) -> None:
        self._now += timedelta(**kwargs)
