"""Who may call a route is decided before what they sent is read: a caller without the scope or
the agent gets a 403 whatever the body, never a 400 that describes a contract it may not use."""

from __future__ import annotations

from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error

from agent_memory.model.caller import READ_SCOPE
from agent_memory.tenancy.rules.keys import NewKey

BAD = {"nonsense": True, "items": "not a list", "grain": "decade"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/admin/summarize"),
        ("POST", "/v1/admin/retention"),
        ("PUT", "/v1/admin/topics"),
    ],
)
def test_a_non_admin_key_with_a_bad_body_on_an_admin_route_is_a_403(
    api: Api, new_key: Any, method: str, path: str
) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api(method, path, BAD, key=key)
    # THEN
    assert status == 403, body
    assert_error(body, "forbidden")


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("POST", "memories"),
        ("POST", "memories/search"),
        ("POST", "context"),
        ("GET", "memories?limit=notanumber"),
        ("GET", "timeline?since=garbage"),
        ("GET", "memories/not-an-id"),
        ("DELETE", "memories/not-an-id"),
        ("DELETE", "memories?user_id=%00bad"),
        ("GET", "periods/decade/xyz"),
        ("GET", "stats/searches?days=-4"),
    ],
)
def test_a_key_bound_to_another_agent_gets_a_403_whatever_it_sends(
    api: Api, new_key: Any, method: str, suffix: str
) -> None:
    # GIVEN
    _, _, key = new_key(agents=frozenset({"mine"}))
    body = BAD if method == "POST" else None
    # WHEN
    status, answer = (
        api(method, f"/v1/agents/theirs/{suffix}", body, key=key)
        if body
        else api(method, f"/v1/agents/theirs/{suffix}", key=key)
    )
    # THEN
    assert status == 403, answer
    assert_error(answer, "forbidden")


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("POST", "memories", BAD),
        ("DELETE", "memories/not-an-id", None),
        ("DELETE", "memories?user_id=%00bad", None),
    ],
)
def test_a_read_only_key_gets_a_403_on_writes_and_forgets_whatever_it_sends(
    api: Api, runtime: Any, method: str, suffix: str, body: Any
) -> None:
    # GIVEN
    _, key = runtime.keys.create(NewKey("t-read-only", "pro", scopes=frozenset({READ_SCOPE})))
    path = f"/v1/agents/bot/{suffix}"
    # WHEN
    status, answer = api(method, path, body, key=key) if body else api(method, path, key=key)
    # THEN
    assert status == 403, answer
    assert_error(answer, "forbidden")


@pytest.mark.parametrize(
    "media_type", ["application/vnd.foo+json", "application/merge-patch+json; charset=utf-8"]
)
def test_a_structured_json_media_type_is_json(api: Api, new_key: Any, media_type: str) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api(
        "POST",
        "/v1/agents/bot/memories/search",
        raw=b'{"query": "anything"}',
        key=key,
        headers={"Content-Type": media_type},
    )
    # THEN
    assert status == 200, body
