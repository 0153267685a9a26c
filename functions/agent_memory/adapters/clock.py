"""The real clock. Services take a `Clock` so tests can pin and move time."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)
