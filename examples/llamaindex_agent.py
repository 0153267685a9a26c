"""A LlamaIndex agent with agent-memory as its memory block and its tools: the model writes
(``remember``), the block puts what is relevant to each question into the system message, and the
model searches (``search_memory``) and forgets (``forget``), all through LlamaIndex's own
interfaces.

    AGENT_MEMORY_URL=http://127.0.0.1:8000 AGENT_MEMORY_API_KEY=$(cat .agent-memory/dev-key) \\
        .venv/bin/python examples/llamaindex_agent.py

The LLM is scripted (examples/scripted), so that it runs offline: put yours in its place.
"""

import asyncio

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from scripted.llamaindex_llm import scripted_llm

from agent_memory.client import MemoryClient
from agent_memory.integrations.llamaindex_memory import AgentMemoryBlock, memory_tools

client = MemoryClient.from_env()  # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
agent = FunctionAgent(
    tools=memory_tools(client, "support-bot", user_id="u-7"),
    llm=scripted_llm(  # yours here
        ("remember", {"content": "Alice moved the launch to March 3."}),
        "Noted.",
        ("search_memory", {"query": "launch date"}),
        ("forget", {"id": "{id}"}),  # the id the search answered with
        "Forgotten.",
    ),
)
block = AgentMemoryBlock(client=client, agent_id="support-bot", user_id="u-7")
memory = Memory.from_defaults(session_id="chat-42", memory_blocks=[block])


async def main() -> None:
    await agent.run("Alice moved the launch to March 3.", memory=memory)
    client.wait_until_stored("support-bot")  # a write is searchable within tens of milliseconds
    system = (await memory.aget())[0]  # what the next model call sees first: the memory block
    print(str(system.content).replace("\n", " "))
    print(await agent.run("The launch moved again: forget March 3.", memory=memory))  # Forgotten.


asyncio.run(main())
assert client.search("support-bot", "launch", user_id="u-7").results == []
client.close()
