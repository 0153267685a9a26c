"""`agent-memory mcp` exposes shared knowledge: `search_knowledge` is listed with the generated
schema and runs through the dispatcher, connected in-process (the MCP SDK's own client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from pytest_socket import disable_socket, enable_socket
from tests.unit.tools.conftest import NOW
from tests.unit.tools.test_knowledge_tools import KnowledgeApi, passage

from agent_memory.tools import TOOLS, TOOLS_BY_NAME, MemoryTools

mcp_server = pytest.importorskip("agent_memory.local.mcp_server", reason="the MCP SDK is the `mcp` extra")
from mcp import Client  # noqa: E402
from mcp.types import TextContent  # noqa: E402


@pytest.fixture(autouse=True)
def _event_loop_sockets(_network_policy: None) -> Iterator[None]:
    """The event loop wakes itself through a Unix socket pair; no network socket is allowed."""
    enable_socket()  # the policy's guard, undone: a second guard would wrap the first
    disable_socket(allow_unix_socket=True)
    yield
    enable_socket()
    disable_socket()


def session(api: KnowledgeApi, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """List the tools, then make ``calls``, through one in-process MCP session."""
    server = mcp_server.build_server(MemoryTools(api, "support-bot", clock=lambda: NOW))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(10):
            async with Client(server, raise_exceptions=True) as client:
                listed = await client.list_tools()
                results = [await client.call_tool(name, arguments) for name, arguments in calls]
                return {"tools": listed.tools, "results": results, "instructions": client.instructions}

    return anyio.run(main)


def text_of(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent), content
    return content.text


def test_search_knowledge_is_listed_with_its_schema_and_named_in_the_instructions() -> None:
    # WHEN a client connects and lists the tools
    seen = session(KnowledgeApi(), [])

    # THEN search_knowledge is among them, with the schema and description the LLM APIs get
    assert [t.name for t in seen["tools"]] == [t.name for t in TOOLS]
    [listed] = [t for t in seen["tools"] if t.name == "search_knowledge"]
    assert listed.input_schema == TOOLS_BY_NAME["search_knowledge"].input_schema
    assert listed.description == TOOLS_BY_NAME["search_knowledge"].description
    # AND the instructions tell the model when to call it and how to cite what it finds
    assert "search_knowledge" in seen["instructions"]
    assert all(t.name in seen["instructions"] for t in TOOLS)


def test_search_knowledge_over_mcp_answers_cited_passages_and_errors_as_results() -> None:
    # GIVEN a tenant's knowledge with one passage
    api = KnowledgeApi(passages=[passage()])

    # WHEN the model searches it, then calls it without a query
    seen = session(api, [("search_knowledge", {"query": "fail over"}), ("search_knowledge", {})])

    # THEN the first is the cited passage, asked of shared knowledge only
    found, refused = seen["results"]
    assert not found.is_error
    assert "[ADR-12 \u203a Consequences, version v3 · shared] Fail DNS over" in text_of(found)
    assert api.searches[0][1].sources == ["shared"]
    # AND the second is an error result the model can read, not a protocol error
    assert refused.is_error
    assert text_of(refused).startswith("Invalid arguments for search_knowledge: query: Field required")
