"""agent-memory in the OpenAI Agents SDK: a ``Session`` that keeps a conversation as memory, and the
memory tools as ``FunctionTool``s.

    from agents import Agent, Runner
    from agent_memory.client import MemoryClient
    from agent_memory.integrations.openai_agents import AgentMemorySession, memory_function_tools

    client = MemoryClient(url, api_key=key)
    agent = Agent(name="support", tools=memory_function_tools(client, "support-bot", user_id="u-7"))
    session = AgentMemorySession("chat-42", client, "support-bot", user_id="u-7")
    await Runner.run(agent, "When is the launch?", session=session)

Each item a run adds to the session is a memory of the agent: a ``conversation`` memory of the
session's conversation and end user, its text what was said (or the tool call and its output), the
whole item in its metadata. So the session's turns are found by search and folded into the daily
to yearly summaries like any conversation, forgotten one by one (``pop_item``) or all together
(``clear_session``), and erased with their end user.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from agents import FunctionTool, RunContextWrapper
from agents.items import TResponseInputItem
from agents.memory import SessionSettings

from agent_memory.client import MemoryClient
from agent_memory.contract.v1 import SearchResult, WriteItem
from agent_memory.integrations._tools import DEFAULT_TOOLS, bound_tools
from agent_memory.tools import ToolSpec

#: Where an item is kept in its memory's metadata, with its place in the session.
META = "openai_agents"
#: The most items one read of the session returns (the API's ``max_results`` bound).
MAX_ITEMS = 100


def _text(item: Mapping[str, Any]) -> tuple[str, str]:
    """``(role, text)`` of an item as the service stores it: a message's words, a tool call as
    ``name(arguments)``, a tool's output; anything else as its JSON."""
    content = item.get("content")
    if isinstance(content, list):  # content parts: input_text / output_text / refusal
        content = "\n".join(
            str(p.get("text") or p.get("refusal") or "") for p in content if isinstance(p, Mapping)
        )
    kind = item.get("type")
    if kind == "function_call":
        return "assistant", f"{item.get('name')}({item.get('arguments') or ''})"
    if kind == "function_call_output":
        output = item.get("output")
        return "tool", output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    role = item.get("role")
    if isinstance(content, str) and content.strip() and role in ("user", "assistant", "system", "developer"):
        return ("system" if role == "developer" else role), content
    return "assistant", json.dumps(dict(item), ensure_ascii=False, sort_keys=True)


class AgentMemorySession:
    """The OpenAI Agents SDK ``Session`` protocol over one conversation of an agent's memory.

    ``session_id`` is the conversation's id (letters, digits and ``._:@-``). The items are read
    back oldest first from the newest `MAX_ITEMS` of the conversation. Adding items waits until
    they are stored, so the next turn reads them. A message said word for word twice in one day
    may be one memory (the service's dedup on write keeps both writes in ``merged_from``), and is
    then read back once.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        client: MemoryClient,
        agent_id: str,
        *,
        user_id: str | None = None,
        wait_timeout_s: float = 10.0,
    ) -> None:
        self.session_id = session_id
        self.client = client
        self.agent_id = agent_id
        self.user_id = user_id
        self.wait_timeout_s = wait_timeout_s
        self._tag = "session:" + hashlib.sha256(session_id.encode()).hexdigest()[:32]

    # --- the protocol (async, as the SDK calls it) --------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = [item for _, item in await asyncio.to_thread(self._stored)]
        return items[-limit:] if limit else items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await asyncio.to_thread(self._add, list(items))

    async def pop_item(self) -> TResponseInputItem | None:
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)

    # --- the work, on a worker thread (the client is synchronous) --------------------------------

    def _stored(self) -> list[tuple[str, TResponseInputItem]]:
        """``(memory id, item)`` of the session's items, oldest first."""
        response = self.client.search(
            self.agent_id,
            None,
            grain="working",
            tags=[self._tag],
            user_id=self.user_id,
            max_results=MAX_ITEMS,
        )
        found = [
            (hit.metadata[META]["seq"], hit.id, _item(hit))
            for hit in response.results
            if META in hit.metadata
        ]
        return [(memory_id, item) for _, memory_id, item in sorted(found, key=lambda f: f[0])]

    def _add(self, items: Sequence[TResponseInputItem]) -> None:
        first = time.time_ns()
        written = [self._write_item(item, first + n) for n, item in enumerate(items)]
        for start in range(0, len(written), MAX_ITEMS):
            self.client.write(self.agent_id, written[start : start + MAX_ITEMS])
        if written:
            self.client.wait_until_stored(self.agent_id, timeout_s=self.wait_timeout_s)

    def _write_item(self, item: TResponseInputItem, seq: int) -> WriteItem:
        role, text = _text(item)
        return WriteItem.model_validate(
            {
                "content": text,
                "role": role,
                "kind": "conversation",
                "conversation_id": self.session_id,
                "user_id": self.user_id,
                "tags": [self._tag],
                "metadata": {META: {"seq": seq, "item": json.dumps(item, ensure_ascii=False)}},
            }
        )

    def _pop(self) -> TResponseInputItem | None:
        stored = self._stored()
        if not stored:
            return None
        memory_id, item = stored[-1]
        self.client.forget(self.agent_id, memory_id)
        return item

    def _clear(self) -> None:
        while stored := self._stored():
            for memory_id, _ in stored:
                self.client.forget(self.agent_id, memory_id)


def _item(hit: SearchResult) -> TResponseInputItem:
    item: TResponseInputItem = json.loads(hit.metadata[META]["item"])
    return item


def memory_function_tools(
    client: MemoryClient,
    agent_id: str,
    *,
    user_id: str | None = None,
    names: Sequence[str] = DEFAULT_TOOLS,
) -> list[FunctionTool]:
    """The memory tools (`agent_memory.tools`) as Agents SDK ``FunctionTool``s, acting on
    ``agent_id``'s memory (and ``user_id``'s, when given): the model chooses the arguments, never
    whose memory it is. A failure the model can act on (an unknown id, invalid arguments, the
    service unreachable) comes back to it as the tool's answer, not as an exception."""
    tools = bound_tools(client, agent_id, user_id=user_id, names=names)

    def function_tool(spec: ToolSpec) -> FunctionTool:
        async def invoke(_: RunContextWrapper[Any], arguments: str) -> str:
            text, _is_error = await asyncio.to_thread(tools.call, spec.name, arguments)
            return text

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=dict(spec.input_schema),
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    return [function_tool(spec) for spec in tools.tools]
