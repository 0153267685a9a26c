"""When to try a request again, and how long to wait first.

Retrying is safe for every route of the contract: reads change nothing, writes get ids derived
from their content (the client fixes ``occurred_at`` before the first attempt, so each retry sends
the same body and the writer stores it once), forget is idempotent in effect (a second one is a
404 that the caller can ignore), and admin runs are idempotent by design.

Backoff is exponential with full jitter (a random wait between 0 and the exponential cap), so many
clients throttled at once do not come back in lockstep. A ``Retry-After`` from the service wins
over the computed wait; one longer than ``max_retry_after_s`` is not waited for at all: the error
goes back to the caller, who knows better whether to wait that long.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

#: 501 (not implemented) and 505 (HTTP version) will not get better by asking again.
_NOT_RETRIED_5XX = frozenset({501, 505})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` counts the first try: 4 means up to 3 retries."""

    max_attempts: int = 4
    base_delay_s: float = 0.25
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0
    retry_on_connection_errors: bool = True
    #: ``random()`` in [0, 1): injectable so tests can pin the jitter.
    random: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    @staticmethod
    def retryable_status(status: int) -> bool:
        return status == 429 or (status >= 500 and status not in _NOT_RETRIED_5XX)

    def backoff(self, retry: int) -> float:
        """The jittered wait before retry number ``retry`` (1 for the first retry)."""
        cap = min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1))
        return cap * self.random()

    def delay(self, retry: int, retry_after_s: float | None) -> float | None:
        """Seconds to wait before retry ``retry``, or ``None`` when the service asked for longer
        than this policy waits."""
        if retry_after_s is None:
            return self.backoff(retry)
        if retry_after_s > self.max_retry_after_s:
            return None
        return retry_after_s


NO_RETRIES = RetryPolicy(max_attempts=1)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date (RFC 9110 10.2.3).
    Anything unreadable is ignored (``None``), never an error."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
