"""Small test doubles shared across the suite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utc(*args: int) -> datetime:
    """``datetime(*args)`` in UTC: ``utc(2026, 11, 20, 9)`` is 09:00 UTC on 2026-11-20."""
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


class FixedClock:
    """A clock tests can set and move."""

    def __init__(self, now: datetime | None = None) -> None:
        self._now = now or datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **kwargs: float) -> None:
        self._now += timedelta(**kwargs)


#: An epoch second (2026-11-18) that clock-driven adapter tests start from.
T0 = 1_795_000_000.0


class SteppingClock:
    """Epoch seconds that a test moves by hand (``clock.now += 5``): the ``Callable[[], float]``
    clocks the queue and pending-writes adapters take."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
