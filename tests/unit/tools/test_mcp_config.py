"""How `agent-memory mcp` finds its endpoint, key and agent: flags first, then the environment."""

from __future__ import annotations

import pytest

mcp_server = pytest.importorskip("agent_memory.local.mcp_server", reason="the MCP SDK is the `mcp` extra")


def test_flags_win_over_the_environment() -> None:
    # GIVEN
    env = {"AGENT_MEMORY_URL": "http://env:1", "AGENT_MEMORY_API_KEY": "env-key",
           "AGENT_MEMORY_AGENT_ID": "env-agent", "AGENT_MEMORY_USER_ID": "env-user"}  # fmt: skip

    # WHEN
    config = mcp_server.McpConfig.resolve("http://flag:2", "flag-key", "flag-agent", "flag-user", 3.0, env)

    # THEN
    assert (config.url, config.api_key, config.agent_id, config.user_id, config.timeout_s) == (
        "http://flag:2", "flag-key", "flag-agent", "flag-user", 3.0,
    )  # fmt: skip


def test_the_environment_fills_in_and_the_defaults_point_at_the_local_runtime() -> None:
    # WHEN
    config = mcp_server.McpConfig.resolve(environ={"AGENT_MEMORY_API_KEY": "k", "AGENT_MEMORY_USER_ID": ""})

    # THEN
    assert (config.url, config.api_key, config.agent_id, config.user_id) == (
        "http://127.0.0.1:8000", "k", "default", None,
    )  # fmt: skip


def test_no_key_anywhere_is_refused_before_anything_starts() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="AGENT_MEMORY_API_KEY"):
        mcp_server.McpConfig.resolve(url="http://127.0.0.1:8000", environ={})
