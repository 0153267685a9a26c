"""agent-memory in LlamaIndex: a memory block that puts the memories relevant to the chat into it,
and the memory tools as LlamaIndex tools.

    from llama_index.core.memory import Memory
    from agent_memory.client import MemoryClient
    from agent_memory.integrations.llamaindex_memory import AgentMemoryBlock

    block = AgentMemoryBlock(client=MemoryClient(url, api_key=key), agent_id="support-bot", user_id="u-7")
    memory = Memory.from_defaults(session_id="chat-42", memory_blocks=[block])
    agent.run("When is the launch?", memory=memory)   # any LlamaIndex agent or chat engine

LlamaIndex's ``Memory`` keeps the recent messages itself and asks its blocks for the rest. This
block answers with the service's context block for the last user message (one dated,
grain-tagged line per memory or summary, packed to ``token_budget``), which ``Memory`` inserts
into the system message; and the messages ``Memory`` flushes out of its short-term window are
written as the agent's conversation memories (the session's id as the conversation), so that
later chats recall them, the cascade summarises them, and erasing the user removes them.

``memory_tools(client, agent_id, user_id=...)`` gives an agent (``FunctionAgent(tools=...)``) the
memory tools of `agent_memory.tools`, so that it can also remember, search and forget on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.tools import FunctionTool, ToolMetadata
from pydantic import Field

from agent_memory.client import MemoryClient
from agent_memory.integrations._tools import DEFAULT_TOOLS, bound_tools
from agent_memory.tools import MemoryTools, ToolSpec

#: LlamaIndex's roles as the service's (a developer message is a system one).
_ROLES = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.TOOL: "tool",
}


class AgentMemoryBlock(BaseMemoryBlock[str]):
    """A LlamaIndex ``BaseMemoryBlock`` over one agent's memory (and one end user's, when given).

    The model never chooses whose memory it is: ``agent_id`` and ``user_id`` are fixed here.
    """

    name: str = Field(default="agent_memory", description="The block's name (its tag in the prompt).")
    client: MemoryClient = Field(description="The agent-memory client.")
    agent_id: str = Field(description="Whose memory it is.")
    user_id: str | None = Field(default=None, description="The end user the memories are of.")
    token_budget: int = Field(default=1000, description="Tokens the context block may take.")
    wait_timeout_s: float = Field(default=10.0, description="How long a flush waits to be stored.")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next(
            (m.content for m in reversed(messages or []) if m.role == MessageRole.USER and m.content), None
        )
        if not query:
            return ""
        response = await asyncio.to_thread(
            self.client.context, self.agent_id, query, token_budget=self.token_budget, user_id=self.user_id
        )
        return response.context

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns = [
            {"role": _ROLES[m.role], "content": m.content}
            for m in messages
            if m.role in _ROLES and m.content and m.content.strip()
        ]
        if not turns:
            return
        session = messages[0].additional_kwargs.get("session_id")
        await asyncio.to_thread(self._write, turns, session)

    def _write(self, turns: list[dict[str, str]], session: str | None) -> None:
        self.client.write_conversation(self.agent_id, turns, conversation_id=session, user_id=self.user_id)
        self.client.wait_until_stored(self.agent_id, timeout_s=self.wait_timeout_s)


def memory_tools(
    client: MemoryClient,
    agent_id: str,
    *,
    user_id: str | None = None,
    names: Sequence[str] = DEFAULT_TOOLS,
) -> list[FunctionTool]:
    """The memory tools as LlamaIndex ``FunctionTool``s, acting on ``agent_id``'s memory (and
    ``user_id``'s, when given): the model chooses the arguments, never whose memory it is. A
    failure the model can act on (an unknown id, invalid arguments, the service unreachable) comes
    back to it as the tool's answer, not as an exception."""
    tools = bound_tools(client, agent_id, user_id=user_id, names=names)
    return [_function_tool(tools, spec) for spec in tools.tools]


def _function_tool(tools: MemoryTools, spec: ToolSpec) -> FunctionTool:
    def run(**arguments: Any) -> str:
        text, _is_error = tools.call(spec.name, arguments)
        return text

    async def arun(**arguments: Any) -> str:
        return await asyncio.to_thread(run, **arguments)

    metadata = ToolMetadata(name=spec.name, description=spec.description, fn_schema=spec.args)
    return FunctionTool.from_defaults(fn=run, async_fn=arun, tool_metadata=metadata)
