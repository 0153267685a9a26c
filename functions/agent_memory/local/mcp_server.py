"""`agent-memory mcp`: the memory tools over the Model Context Protocol (stdio), for desktop agents.

The server is a thin shell around the same tools the LLM APIs get (`agent_memory.tools`): it
lists them with the same generated schemas and runs each call through the same dispatcher,
against a configured endpoint (the local runtime or a deployed stack) and key. Tool failures come
back as error results (``isError``) the model can read, never as protocol errors.

stdout is the protocol channel: nothing here may print to it; diagnostics go to stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from agent_memory import __version__
from agent_memory.client import MemoryClient
from agent_memory.tools import MemoryTools

logger = logging.getLogger("agent_memory.mcp")

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_AGENT_ID = "default"
SERVER_NAME = "agent-memory"

INSTRUCTIONS = (
    "Long-term memory. Before answering about past conversations, decisions or preferences, call "
    "recall_context for background on the subject, or search_memory to narrow by grain and days ago. "
    "When the user states something worth keeping, call remember. Results are dated lines "
    "'[date · grain] text'; search results end with '(id ...)': pass that id to forget to drop a "
    "wrong or outdated memory. For what the organisation published (specs, decision records, "
    "runbooks), call search_knowledge: its passages are labelled '[title \u203a section, version · shared]'; "
    "cite that label when you rely on one. After a task, call record_outcome with what worked, what "
    "failed or what you learned, and how sure you are; experiences show their kind and confidence, and "
    "when you rely on one again, call give_feedback with its id: confirmed, refuted or applied."
)


@dataclass(frozen=True)
class McpConfig:
    url: str
    api_key: str
    agent_id: str
    user_id: str | None = None
    timeout_s: float = 10.0

    @classmethod
    def resolve(
        cls,
        url: str | None = None,
        api_key: str | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        timeout_s: float | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> McpConfig:
        """Flags first, then ``AGENT_MEMORY_URL`` / ``_API_KEY`` / ``_AGENT_ID`` / ``_USER_ID``."""
        env = os.environ if environ is None else environ
        key = api_key or env.get("AGENT_MEMORY_API_KEY")
        if not key:
            raise ValueError("no API key: pass --api-key or set AGENT_MEMORY_API_KEY")
        return cls(
            url=url or env.get("AGENT_MEMORY_URL") or DEFAULT_URL,
            api_key=key,
            agent_id=agent_id or env.get("AGENT_MEMORY_AGENT_ID") or DEFAULT_AGENT_ID,
            user_id=user_id or env.get("AGENT_MEMORY_USER_ID") or None,
            timeout_s=timeout_s if timeout_s is not None else 10.0,
        )


def build_server(tools: MemoryTools) -> Server:
    """An MCP server exposing ``tools``: the generated schemas on list, the dispatcher on call."""

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in tools.tools
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        # The client is synchronous (blocking HTTP with retries): keep it off the event loop.
        text, is_error = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(tools: MemoryTools) -> None:
    server = build_server(tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(config: McpConfig) -> int:
    """Serve until the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    with MemoryClient(config.url, config.api_key, timeout_s=config.timeout_s) as client:
        tools = MemoryTools(client, config.agent_id, user_id=config.user_id)
        logger.info("serving memory of agent %r at %s over MCP (stdio)", config.agent_id, config.url)
        anyio.run(serve_stdio, tools)
    return 0
