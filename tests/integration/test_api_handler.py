"""The API handler on sample events from `events/`, through the real wiring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.integration.conftest import call_api, drain_writes
from tests.payloads import load_event

from agent_memory import container
from agent_memory.handlers import api


def test_write_then_search_then_get_then_forget(local_env: object) -> None:
    # WHEN
    status, body = call_api(load_event("api_write.json"))
    # THEN
    assert status == 202
    [accepted] = body["accepted"]
    assert accepted["status"] == "queued"
    drain_writes()

    status, body = call_api(load_event("api_search.json"))
    assert status == 200
    [hit] = body["results"]
    assert hit["id"] == accepted["id"]
    assert hit["text"] == "[2026-11-20] Alice moved the launch to March 3."
    assert set(hit) >= {
        "id",
        "grain",
        "time_key",
        "content",
        "text",
        "score",
        "similarity",
        "recency",
        "importance",
        "occurred_at",
        "source",
        "metadata",
        "tags",
    }

    get_event = load_event("api_get.json", path=f"/v1/agents/support-bot/memories/{accepted['id']}")
    status, body = call_api(get_event)
    assert status == 200 and body["content"] == "Alice moved the launch to March 3."

    forget_event = load_event("api_forget.json", path=f"/v1/agents/support-bot/memories/{accepted['id']}")
    assert call_api(forget_event)[0] == 200
    assert call_api(get_event)[0] == 404
    assert call_api(load_event("api_search.json"))[1]["results"] == []


def test_conversation_form_and_stats(local_env: object) -> None:
    # WHEN
    status, body = call_api(load_event("api_write_conversation.json"))
    # THEN
    assert status == 202 and len(body["accepted"]) == 2
    assert call_api(load_event("api_stats.json"))[1]["pending_writes"] == 2
    drain_writes()
    stats = call_api(load_event("api_stats.json"))[1]
    assert stats["pending_writes"] == 0 and stats["records"]["working"] == 2


def test_invalid_write_is_400_with_details_and_nothing_queued(local_env: object) -> None:
    # WHEN
    status, body = call_api(load_event("api_write_invalid.json"))
    # THEN
    assert status == 400
    assert body["error"]["code"] == "validation_error"
    locs = {tuple(d["loc"]) for d in body["error"]["details"]}
    assert ("body", "items", "0", "content") in locs and ("body", "items", "0", "importance") in locs
    assert all("input" not in d for d in body["error"]["details"])  # never echoes the input
    assert container.write_queue().depth() == 0  # type: ignore[attr-defined]


def test_missing_authorizer_context_is_401(local_env: object) -> None:
    # WHEN
    status, body = call_api(load_event("api_no_authorizer.json"))
    # THEN
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_unknown_route_is_404_in_the_error_shape(local_env: object) -> None:
    # WHEN
    status, body = call_api(load_event("api_stats.json", path="/v1/nothing-here"))
    # THEN
    assert status == 404 and body["error"]["code"] == "not_found"


def test_admin_routes_need_the_admin_scope(local_env: object) -> None:
    # GIVEN
    event = load_event("api_stats.json", path="/v1/admin/retention", httpMethod="POST")
    # WHEN
    status, body = call_api(event)
    # THEN
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_key_without_forget_scope_cannot_delete(local_env: object) -> None:
    # GIVEN
    event = load_event("api_forget.json")
    event["requestContext"]["authorizer"]["scopes"] = "read write"
    # WHEN
    status, body = call_api(event)
    # THEN
    assert status == 403 and "forget" in body["error"]["message"]


def test_unexpected_failure_is_a_500_without_internals(local_env: object, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # GIVEN
    def boom(*args: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(container.api_services().memories, "stats", boom)
    # WHEN
    status, body = call_api(load_event("api_stats.json"))
    # THEN
    assert status == 500 and "secret" not in json.dumps(body)


def test_openapi_document_covers_every_route() -> None:
    # WHEN
    doc = json.loads(api.openapi_json())
    # THEN
    assert set(doc["paths"]) >= {
        "/v1/agents/{agent_id}/memories",
        "/v1/agents/{agent_id}/memories/search",
        "/v1/agents/{agent_id}/memories/{memory_id}",
        "/v1/agents/{agent_id}/stats",
    }


_LOG_EVENT_RUN = """
import json, sys
from agent_memory.handlers import api
from agent_memory.local.lambda_context import LocalContext
result = api.handler(json.loads(sys.stdin.read()), LocalContext())
print("STATUS", result["statusCode"], result["body"])
"""


def test_the_api_never_logs_its_event_even_when_told_to_and_so_never_a_provider_key(tmp_path: Path) -> None:
    # GIVEN an operator who turned Powertools' event logging on (read when the handler is made, at
    # import: so in a process of its own)
    key = "sk-never-logged-1a2b3c4d5e6fWXYZ"
    event = load_event(
        "api_write.json",
        httpMethod="PUT",
        path="/v1/admin/settings",
        body=json.dumps({"version": 0, "settings": {}, "provider_key": key}),
    )
    event["requestContext"]["authorizer"]["scopes"] = "admin read write"
    env = {
        **os.environ,
        "POWERTOOLS_LOGGER_LOG_EVENT": "true",
        "POWERTOOLS_LOG_LEVEL": "DEBUG",
        "AGENT_MEMORY_DATA_DIR": str(tmp_path),
        "AGENT_MEMORY_EMBEDDER": "hashing",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    # WHEN an admin sets the tenant's provider key
    run = subprocess.run(
        [sys.executable, "-c", _LOG_EVENT_RUN], input=json.dumps(event), env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    # THEN it is stored (last four characters back), and no output of the process holds it
    assert "STATUS 200" in run.stdout, run.stdout + run.stderr
    assert "WXYZ" in run.stdout
    assert key not in run.stdout + run.stderr


def test_a_search_whose_tenant_key_the_provider_refuses_is_a_424_that_shows_no_key(
    local_env: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tenant whose own embedding provider refuses its key
    from tests.fakes import refusing_spaces

    embedders = container.current().tenant_embedders
    monkeypatch.setattr(embedders, "for_tenant", lambda tenant: refusing_spaces())
    # WHEN it searches
    status, body = call_api(load_event("api_search.json"))
    # THEN a clear 4xx in the documented error body, not the deployment's model instead
    assert status == 424 and body["error"]["code"] == "provider_key_rejected", body
    assert "sk-" not in json.dumps(body)
