"""The memory tools every framework integration hands its agent: `agent_memory.tools` bound to one
agent (and end user), picked by name. One place for the default set, so that an agent gets the
same tools whichever framework it is written in."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.client import MemoryClient
from agent_memory.tools import TOOLS_BY_NAME, MemoryTools

#: The tools an agent gets unless it names others (of `agent_memory.tools.TOOLS`).
DEFAULT_TOOLS = ("search_memory", "recall_context", "remember", "forget")


def bound_tools(
    client: MemoryClient, agent_id: str, *, user_id: str | None = None, names: Sequence[str] = DEFAULT_TOOLS
) -> MemoryTools:
    """The tools ``names`` acting on ``agent_id``'s memory (and ``user_id``'s, when given): the
    model chooses their arguments, never whose memory it is."""
    return MemoryTools(client, agent_id, user_id=user_id, tools=[TOOLS_BY_NAME[n] for n in names])
