"""How long the client waits before a retry, and when it does not retry at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from agent_memory.client.retry import RetryPolicy, parse_retry_after


def test_backoff_doubles_up_to_the_cap_and_full_jitter_scales_it() -> None:
    # GIVEN a policy whose jitter always draws its maximum, and one that draws half
    top = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, random=lambda: 1.0)
    half = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, random=lambda: 0.5)

    # WHEN / THEN the cap doubles each retry until max_delay_s, and the wait is cap * random()
    assert [top.backoff(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert [half.backoff(n) for n in (1, 2, 3)] == [0.25, 0.5, 1.0]


def test_retry_after_wins_over_backoff_unless_it_is_longer_than_the_policy_waits() -> None:
    # GIVEN
    policy = RetryPolicy(base_delay_s=0.5, max_retry_after_s=30, random=lambda: 1.0)

    # WHEN / THEN
    assert policy.delay(1, retry_after_s=7.0) == 7.0
    assert policy.delay(3, retry_after_s=0.0) == 0.0
    assert policy.delay(1, retry_after_s=None) == 0.5
    assert policy.delay(1, retry_after_s=31.0) is None


@pytest.mark.parametrize(
    ("status", "retried"),
    [(429, True), (500, True), (502, True), (503, True), (504, True), (501, False), (505, False),
     (400, False), (401, False), (403, False), (404, False), (409, False), (413, False)],
)  # fmt: skip
def test_only_throttling_and_transient_server_errors_are_retried(status: int, retried: bool) -> None:
    # WHEN / THEN
    assert RetryPolicy.retryable_status(status) is retried


def test_a_policy_needs_at_least_one_attempt() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_retry_after_is_read_as_seconds_or_as_an_http_date() -> None:
    # GIVEN
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    # WHEN / THEN
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after(format_datetime(now + timedelta(seconds=90), usegmt=True), now) == 90.0
    # a date in the past means "now", never a negative wait
    assert parse_retry_after(format_datetime(now - timedelta(hours=1), usegmt=True), now) == 0.0
    assert parse_retry_after("-5", now) == 0.0


@pytest.mark.parametrize("value", [None, "", "  ", "soon", "inf", "nan", "Thu, 99 Foo 2026"])
def test_an_unreadable_retry_after_is_ignored(value: str | None) -> None:
    # WHEN / THEN
    assert parse_retry_after(value) is None
