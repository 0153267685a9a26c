"""An OpenAI Agents SDK agent with agent-memory as its session and its tools: the session writes
each turn as memory, the model searches memory through the ``search_memory`` function tool, and
clearing the session forgets the conversation, all through the SDK's own interfaces.

    AGENT_MEMORY_URL=http://127.0.0.1:8000 AGENT_MEMORY_API_KEY=$(cat .agent-memory/dev-key) \\
        .venv/bin/python examples/openai_agents_agent.py

The model is scripted (examples/scripted), so that it runs offline: put yours (``model="gpt-5"``)
in its place.
"""

import asyncio

from agents import Agent, RunConfig, Runner
from scripted.openai_model import ScriptedModel

from agent_memory.client import MemoryClient
from agent_memory.integrations.openai_agents import AgentMemorySession, memory_function_tools

client = MemoryClient.from_env()  # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
agent = Agent(
    name="support",
    instructions="Search memory before answering.",
    tools=memory_function_tools(client, "support-bot", user_id="u-7"),
    model=ScriptedModel(  # yours here
        "Noted.",
        ("search_memory", {"query": "when is the launch?"}),
        "The launch is on March 3.",
    ),
)
session = AgentMemorySession("chat-42", client, "support-bot", user_id="u-7")
offline = RunConfig(tracing_disabled=True)  # no traces sent anywhere


async def main() -> None:
    # each run's turns are written as memory of the end user, in the conversation "chat-42"
    await Runner.run(agent, "Alice moved the launch to March 3.", session=session, run_config=offline)
    result = await Runner.run(agent, "When is the launch?", session=session, run_config=offline)
    print(result.final_output)  # The launch is on March 3.
    print(len(await session.get_items()))  # both turns, the tool call and its output: 6

    await session.clear_session()  # forgotten: gone from search at once, in the audit trail
    assert await session.get_items() == []


asyncio.run(main())
assert client.search("support-bot", "launch", user_id="u-7").results == []
client.close()
