"""CORS for the deployed console: the API function names the console's origin on its answers,
errors included, and names no other origin."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.payloads import load_event

from agent_memory import container
from agent_memory.handlers import api
from agent_memory.handlers.cors import with_console_cors
from agent_memory.local.lambda_context import LocalContext

CONSOLE = "https://d111111abcdef8.cloudfront.net"


def call(event: dict[str, Any], origin: str | None) -> dict[str, Any]:
    if origin is not None:
        event = {**event, "headers": {**(event.get("headers") or {}), "Origin": origin}}
    return api.handler(event, LocalContext())


@pytest.fixture
def console_env(local_env: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_CONSOLE_ORIGIN", CONSOLE)
    container.reset()


def test_an_answer_to_the_console_names_its_origin(console_env: None) -> None:
    # WHEN
    result = call(load_event("api_stats.json"), CONSOLE)

    # THEN
    assert result["statusCode"] == 200
    assert result["headers"]["Access-Control-Allow-Origin"] == CONSOLE
    assert result["headers"]["Vary"] == "Origin"


def test_an_error_answer_to_the_console_names_its_origin_too(console_env: None) -> None:
    # GIVEN
    event = load_event("api_get.json", path="/v1/agents/support-bot/memories/mem_aaaaaaaaaaaaaaaa")
    # WHEN
    result = call(event, CONSOLE)

    # THEN
    assert result["statusCode"] == 404
    assert json.loads(result["body"])["error"]["code"] == "not_found"
    assert result["headers"]["Access-Control-Allow-Origin"] == CONSOLE


@pytest.mark.parametrize("origin", ["https://evil.example", None])
def test_no_other_origin_and_no_origin_get_cors_headers(console_env: None, origin: str | None) -> None:
    # WHEN
    result = call(load_event("api_stats.json"), origin)
    # THEN
    assert "Access-Control-Allow-Origin" not in (result.get("headers") or {})
    assert "Access-Control-Allow-Origin" not in (result.get("multiValueHeaders") or {})


def test_without_a_console_origin_nothing_is_allowed(local_env: object) -> None:
    # WHEN
    result = call(load_event("api_stats.json"), CONSOLE)
    # THEN
    assert "Access-Control-Allow-Origin" not in (result.get("headers") or {})


def test_multi_value_headers_carry_the_same_answer() -> None:
    # GIVEN
    response = {"statusCode": 200, "headers": {}, "multiValueHeaders": {"Content-Type": ["application/json"]}}
    # WHEN
    out = with_console_cors(response, {"headers": {"origin": CONSOLE}}, CONSOLE)
    # THEN
    assert out["multiValueHeaders"]["Access-Control-Allow-Origin"] == [CONSOLE]
    assert out["multiValueHeaders"]["Content-Type"] == ["application/json"]
    assert response["headers"] == {}  # the original is not changed
