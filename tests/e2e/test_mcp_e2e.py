"""`agent-memory mcp` as a desktop agent runs it: a subprocess spoken to over stdio by the MCP SDK's
own client, configured by environment variables as in a desktop agent's config, against the local
runtime on loopback.

Every wait is bounded: the whole session by `SESSION_S`, each request by `REQUEST_S`, and the
search that waits for the asynchronous writer by its own deadline.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import pytest
from jsonschema import Draft202012Validator
from tests.e2e.conftest import unique

from agent_memory.client import MemoryClient
from agent_memory.local.server import LocalRuntime
from agent_memory.tools import TOOLS, TOOLS_BY_NAME

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.types import CallToolResult, TextContent  # noqa: E402

NewKey = Callable[..., tuple[str, str, str]]
T = TypeVar("T")

SESSION_S = 60.0
REQUEST_S = 15.0
ID = re.compile(r"\(id ((?:mem|sum)_[a-z2-7]+)\)")

#: The console script next to this interpreter (what a desktop config names), else the module.
CLI = Path(sys.executable).with_name("agent-memory")
COMMAND = [str(CLI), "mcp"] if CLI.exists() else [sys.executable, "-m", "agent_memory.local.cli", "mcp"]


def server(url: str, agent: str, key: str | None, *extra: str) -> StdioServerParameters:
    """The server as a desktop agent's config starts it: the key in the environment, not argv."""
    env = {"AGENT_MEMORY_URL": url, "AGENT_MEMORY_AGENT_ID": agent}
    if key is not None:
        env["AGENT_MEMORY_API_KEY"] = key
    return StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], "--timeout", "5", *extra], env=env)


def run_session(params: StdioServerParameters, body: Callable[[Client], Awaitable[T]]) -> tuple[T, str]:
    """Spawn the server, hand a connected client to ``body``; returns its result and the server's
    stderr (which must hold diagnostics only: stdout is the protocol)."""

    async def main(errlog: TextIO) -> T:
        with anyio.fail_after(SESSION_S):
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=REQUEST_S) as client:
                return await body(client)

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            result = anyio.run(main, errlog)
        finally:
            errlog.seek(0)
            stderr = errlog.read()
            sys.stderr.write(stderr)  # shown by pytest when the test fails
    return result, stderr


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent), content
    return content.text


async def call(client: Client, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """A tool call as a careful desktop client makes it: arguments checked against the listed schema."""
    Draft202012Validator(TOOLS_BY_NAME[name].input_schema).validate(arguments)
    return await client.call_tool(name, arguments)


async def until_found(client: Client, memory_id: str, query: str, timeout_s: float = 10.0) -> str:
    """search_memory until the asynchronous writer has stored ``memory_id``."""
    with anyio.fail_after(timeout_s):
        while True:
            result = await call(client, "search_memory", {"query": query, "grain": "working"})
            assert not result.is_error, text_of(result)
            if memory_id in text_of(result):
                return text_of(result)
            await anyio.sleep(0.05)


def test_a_desktop_agent_lists_the_tools_remembers_and_finds_over_mcp(
    runtime: LocalRuntime, new_key: NewKey
) -> None:
    # GIVEN a tenant's key, and the MCP server spawned for one of its agents
    _, _, key = new_key()
    agent = unique("agent")

    async def session(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        stored = await call(
            client, "remember", {"content": "Alice moved the launch to March 3.", "importance": 0.9}
        )
        [memory_id] = ID.findall(text_of(stored))
        found = await until_found(client, memory_id, "when is the launch?")
        context = await call(client, "recall_context", {"query": "when is the launch?", "token_budget": 200})
        invalid = await client.call_tool("search_memory", {"grain": "hourly"})
        forgotten = await call(client, "forget", {"id": memory_id})
        after = await call(client, "search_memory", {"query": "launch"})
        return {
            "info": client.server_info, "instructions": client.instructions, "tools": listed.tools,
            "stored": stored, "memory_id": memory_id, "found": found, "context": context,
            "invalid": invalid, "forgotten": forgotten, "after": after,
        }  # fmt: skip

    # WHEN a client connects, lists the tools, remembers, searches, recalls context and forgets
    seen, stderr = run_session(server(runtime.url, agent, key), session)

    # THEN the server introduced itself with instructions that name its tools
    assert seen["info"].name == "agent-memory"
    assert all(t.name in seen["instructions"] for t in TOOLS)
    # AND it listed the same tools, with the same generated schemas, as the LLM APIs get
    assert [t.name for t in seen["tools"]] == [t.name for t in TOOLS]
    for listed in seen["tools"]:
        Draft202012Validator.check_schema(listed.input_schema)
        assert listed.input_schema == TOOLS_BY_NAME[listed.name].input_schema
        assert listed.description == TOOLS_BY_NAME[listed.name].description
    # AND remember stored the memory for the configured agent, where search_memory found it
    memory_id = seen["memory_id"]
    assert not seen["stored"].is_error
    [line] = [ln for ln in seen["found"].splitlines() if memory_id in ln]
    dated = r"\[\d{4}-\d{2}-\d{2} · working\] "
    assert re.fullmatch(dated + re.escape(f"Alice moved the launch to March 3. (id {memory_id})"), line), line
    # AND recall_context packed it into a dated block
    assert not seen["context"].is_error
    assert "· working] Alice moved the launch to March 3." in text_of(seen["context"])
    # AND a call the schema refuses came back as an error result naming the argument, not a protocol error
    assert seen["invalid"].is_error
    assert text_of(seen["invalid"]).startswith("Invalid arguments for search_memory: grain: must be one of")
    # AND forget worked, so the last search no longer finds it
    assert not seen["forgotten"].is_error
    assert memory_id not in text_of(seen["after"])
    # AND nothing but diagnostics reached stderr (no tracebacks)
    assert "Traceback" not in stderr

    # AND the HTTP API agrees: the memory was the configured agent's, and is forgotten
    with MemoryClient(runtime.url, api_key=key) as memory:
        assert [a.record_id for a in memory.iter_audit(agent)] == [memory_id]


def test_a_key_the_service_refuses_is_an_error_result_the_model_can_read(
    runtime: LocalRuntime, new_key: NewKey
) -> None:
    # GIVEN the MCP server configured with a key that does not exist
    async def session(client: Client) -> CallToolResult:
        return await call(client, "search_memory", {"query": "anything"})

    # WHEN a tool is called
    result, _ = run_session(server(runtime.url, unique("agent"), "am_not-a-real-key"), session)

    # THEN the session survives and the call is an error result that says why
    assert result.is_error
    assert "missing or invalid API key" in text_of(result)


def test_without_a_key_the_server_does_not_start_and_says_why(runtime: LocalRuntime) -> None:
    # GIVEN no key in the flags or the environment
    params = server(runtime.url, "any-agent", None)

    # WHEN the command is started as a desktop agent would
    done = subprocess.run(
        [params.command, *params.args],
        env={"PATH": "/usr/bin:/bin", **(params.env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SESSION_S,
        check=False,
    )

    # THEN it exits at once with a usage error on stderr, and nothing on the protocol channel
    assert done.returncode == 2
    assert "AGENT_MEMORY_API_KEY" in done.stderr
    assert done.stdout == ""
