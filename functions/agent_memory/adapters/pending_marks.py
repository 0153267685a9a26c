"""The times both pending-write stores (`local_pending` on SQLite, `dynamodb_pending` on
DynamoDB) keep a mark by, checked once for both."""

from __future__ import annotations

#: Seconds a mark counts before its message is known to be on the queue (a send takes
#: milliseconds; SQS's own retries of one send stay well within it).
LEASE_S = 120.0


def mark_times(ttl_days: float, dedup_window_s: float, lease_s: float) -> tuple[float, float, float]:
    """``(ttl_s, lease_s, dedup_window_s)``: how long a mark on the queue counts, how long one not
    yet known to be on it counts, and how long a tombstone outlives it; `ValueError` for any
    that is not positive."""
    if ttl_days <= 0 or lease_s <= 0:
        raise ValueError("ttl_days and lease_s must be positive")
    if dedup_window_s <= 0:
        raise ValueError("dedup_window_s must be positive")
    return ttl_days * 86_400, lease_s, dedup_window_s
