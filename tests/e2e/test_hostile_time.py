"""Time at the edges of the calendar, through HTTP: ordinary words with huge numbers, and dates
whose shift by an offset, a window or a day leaves Python's calendar. Never a 500: a phrase out
of range is no time hint, a date out of range is a 400 naming its field, a window is clamped."""

from __future__ import annotations

from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error

AGENT = "edge-of-time"
SEARCH = f"/v1/agents/{AGENT}/memories/search"
CONTEXT = f"/v1/agents/{AGENT}/context"

PHRASES = [
    "what happened 5000 years ago",
    "tell me about 2500 years ago",
    "1000000 days ago",
    "30000 months ago",
    "99999999 weeks ago",
    "9" * 3900 + " days ago",
    "last week",
    "yesterday",
    "in June",
    "last month",
    "3 years ago",
    "last year",
    "this year",
    "on December 31",
]
EDGE_AS_OF = ["0001-01-02T00:00:00Z", "0001-01-08T12:00:00Z", "9999-12-30T23:59:59Z", "9999-12-01T00:00:00Z"]


@pytest.mark.parametrize("route", [SEARCH, CONTEXT])
@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("as_of", [None, *EDGE_AS_OF])
def test_time_phrases_at_any_as_of_are_answered(
    api: Api, new_key: Any, route: str, phrase: str, as_of: str | None
) -> None:
    # GIVEN
    _, _, key = new_key()
    body: dict[str, Any] = {"query": phrase}
    if as_of:
        body["as_of"] = as_of
    # WHEN
    status, answer = api("POST", route, body, key=key)
    # THEN
    assert status == 200, answer


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("occurred_at", "0001-01-01T00:00:00+01:00"),
        ("occurred_at", "9999-12-31T23:59:59-01:00"),
        ("occurred_at", "0001-01-01T12:00:00Z"),
        ("occurred_at", "9999-12-31T12:00:00Z"),
    ],
)
def test_a_write_dated_outside_the_range_is_a_400_naming_the_field(
    api: Api, new_key: Any, field: str, value: str
) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api(
        "POST", f"/v1/agents/{AGENT}/memories", {"items": [{"content": "edge", field: value}]}, key=key
    )
    # THEN
    assert status == 400
    error = assert_error(body, "validation_error")
    assert any(field in str(d) for d in error["details"]), error


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_an_as_of_outside_the_range_is_a_400(api: Api, new_key: Any, value: str) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api("POST", SEARCH, {"query": "x", "as_of": value}, key=key)
    # THEN
    assert status == 400
    assert "as_of" in str(assert_error(body, "validation_error")["details"])


def test_a_window_reaching_before_year_one_is_clamped(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api(
        "POST", SEARCH, {"query": "x", "as_of": "0001-01-02T00:00:00Z", "max_days_ago": 36500}, key=key
    )
    # THEN
    assert status == 200, body


@pytest.mark.parametrize(
    ("query", "status", "field"),
    [
        ("until=9999-12-31", 400, "until"),
        ("until=9999-12-30", 200, None),
        ("until=0001-01-05", 200, None),
        ("since=0001-01-01&until=0001-01-05", 400, "since"),
        ("since=0001-01-02&until=0001-01-05", 200, None),
    ],
)
def test_timeline_days_at_the_edges(
    api: Api, new_key: Any, query: str, status: int, field: str | None
) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    got, body = api("GET", f"/v1/agents/{AGENT}/timeline?{query}", key=key)
    # THEN
    assert got == status, body
    if field:
        assert field in str(assert_error(body)["details"])
