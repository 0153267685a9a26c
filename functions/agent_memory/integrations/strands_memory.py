"""agent-memory in Strands Agents: the memory tools as Strands tools, and a hook provider that keeps
each user and assistant turn as memory.

    from strands import Agent
    from agent_memory.client import MemoryClient
    from agent_memory.integrations.strands_memory import AgentMemoryHooks, memory_tools

    client = MemoryClient(url, api_key=key)
    agent = Agent(
        tools=memory_tools(client, "support-bot", user_id="u-7"),
        hooks=[AgentMemoryHooks(client, "support-bot", user_id="u-7", conversation_id="chat-42")],
    )
    agent("When is the launch?")

The tools are those of `agent_memory.tools` (``search_memory``, ``recall_context``, ``remember``
and ``forget`` by default), run by the same dispatcher the LLM APIs and the MCP server use; the
agent and the end user are fixed here, never chosen by the model. The hooks write every message
Strands adds to the conversation that says something (a user's or the assistant's words; tool
calls and tool results are left out) as a ``conversation`` memory of the agent, so that later
chats recall it, the cascade summarises it, and erasing the user removes it; an invocation
returns once its turns are stored, so the next one finds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from strands.hooks import AfterInvocationEvent, HookProvider, HookRegistry, MessageAddedEvent
from strands.tools.tools import PythonAgentTool
from strands.types.content import Message
from strands.types.tools import AgentTool, ToolResult, ToolUse
from strands.types.tools import ToolSpec as StrandsToolSpec

from agent_memory.client import MemoryClient
from agent_memory.integrations._tools import DEFAULT_TOOLS, bound_tools
from agent_memory.tools import MemoryTools, ToolSpec


def memory_tools(
    client: MemoryClient,
    agent_id: str,
    *,
    user_id: str | None = None,
    names: Sequence[str] = DEFAULT_TOOLS,
) -> list[AgentTool]:
    """The memory tools as Strands tools (``Agent(tools=...)``), acting on ``agent_id``'s memory
    (and ``user_id``'s, when given). A failure the model can act on (an unknown id, invalid
    arguments, the service unreachable) comes back to it as an ``error`` tool result, not as an
    exception that ends the run."""
    tools = bound_tools(client, agent_id, user_id=user_id, names=names)
    return [_strands_tool(tools, spec) for spec in tools.tools]


def _strands_tool(tools: MemoryTools, spec: ToolSpec) -> AgentTool:
    def run(tool_use: ToolUse, **_: Any) -> ToolResult:
        text, is_error = tools.call(spec.name, tool_use["input"])
        return {
            "toolUseId": tool_use["toolUseId"],
            "status": "error" if is_error else "success",
            "content": [{"text": text}],
        }

    run.__name__ = spec.name
    tool_spec: StrandsToolSpec = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": {"json": dict(spec.input_schema)},
    }
    # Strands runs a synchronous tool function on a worker thread: the blocking client stays
    # off the event loop.
    return PythonAgentTool(spec.name, tool_spec, run)


def turn_of(message: Message) -> dict[str, str] | None:
    """``{"role", "content"}`` of a message that says something: its text blocks, joined; ``None``
    for one that only calls tools or carries their results."""
    if message["role"] not in ("user", "assistant"):
        return None
    text = "\n".join(block["text"] for block in message["content"] if block.get("text"))
    return {"role": message["role"], "content": text} if text.strip() else None


class AgentMemoryHooks(HookProvider):
    """A Strands ``HookProvider`` (``Agent(hooks=[...])``) that writes each user and assistant turn
    of the agent's conversation to ``agent_id``'s memory, as the conversation ``conversation_id``
    of the end user ``user_id``.

    A turn is written when Strands adds its message; the invocation returns once they are stored
    (at most ``wait_timeout_s``), so the next invocation's searches find them.
    """

    def __init__(
        self,
        client: MemoryClient,
        agent_id: str,
        *,
        user_id: str | None = None,
        conversation_id: str | None = None,
        wait_timeout_s: float = 10.0,
    ) -> None:
        self.client = client
        self.agent_id = agent_id
        self.user_id = user_id
        self.conversation_id = conversation_id
        self.wait_timeout_s = wait_timeout_s

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(MessageAddedEvent, self.on_message)
        registry.add_callback(AfterInvocationEvent, self.on_done)

    async def on_message(self, event: MessageAddedEvent) -> None:
        if turn := turn_of(event.message):
            await asyncio.to_thread(
                self.client.write_conversation,
                self.agent_id,
                [turn],
                conversation_id=self.conversation_id,
                user_id=self.user_id,
            )

    async def on_done(self, event: AfterInvocationEvent) -> None:
        await asyncio.to_thread(self.client.wait_until_stored, self.agent_id, self.wait_timeout_s)
