"""A write sent again with the same words, end user, conversation, role and time is a retry only
when it says the same about them: one that changes its kind, tags, metadata or importance is
another write and is stored (its own memory, or merged into the first as a near-duplicate is),
never answered 202 and dropped as a replay."""

from __future__ import annotations

from typing import Any

import pytest
from tests.integration.conftest import call_api, drain_writes
from tests.payloads import api_event

AGENT = "bot"
FIRST = {
    "content": "Alice moved the launch to March 3.",
    "user_id": "u-1",
    "conversation_id": "c-1",
    "role": "user",
    "occurred_at": "2026-11-20T14:03:00Z",
    "tags": ["launch"],
    "importance": 0.3,
}


def _call(method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    return call_api(api_event(method, f"/v1/agents/{AGENT}{path}", body))


def _write(item: dict[str, Any]) -> str:
    status, body = _call("POST", "/memories", {"items": [item]})
    assert status == 202, body
    drain_writes()
    return str(body["accepted"][0]["id"])


@pytest.mark.parametrize(
    ("change", "shows"),
    [
        ({"kind": "decision"}, lambda m: m["kind"] == "decision"),
        ({"tags": ["launch", "march"]}, lambda m: "march" in m["tags"]),
        ({"metadata": {"ticket": "OPS-7"}}, lambda m: m["metadata"].get("ticket") == "OPS-7"),
        ({"importance": 0.9}, lambda m: m["importance"] == 0.9),
    ],
    ids=["kind", "tags", "metadata", "importance"],
)
def test_a_resend_that_changes_what_it_says_is_stored(
    local_env: object, change: dict[str, Any], shows: Any
) -> None:
    # GIVEN a stored write
    first = _write(FIRST)

    # WHEN the same words are sent again, saying something else about them
    second = _write({**FIRST, **change})

    # THEN the change is stored: read back by the id the resend was answered with
    status, memory = _call("GET", f"/memories/{second}")
    assert status == 200, memory
    assert shows(memory), memory
    assert _call("GET", f"/memories/{first}")[0] == 200


def test_an_exact_resend_is_still_a_retry_of_the_first(local_env: object) -> None:
    # GIVEN a stored write
    first = _write(FIRST)

    # WHEN it is sent again as it was
    again = _write(dict(FIRST))

    # THEN it is the same memory, stored once
    assert again == first
    assert _call("GET", "/stats")[1]["records"]["working"] == 1
