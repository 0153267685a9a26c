"""A Strands agent with agent-memory as its hooks and its tools: the hooks write each user and
assistant turn as memory, and the model searches (``search_memory``) and forgets (``forget``)
through its tools, all through Strands' own interfaces.

    AGENT_MEMORY_URL=http://127.0.0.1:8000 AGENT_MEMORY_API_KEY=$(cat .agent-memory/dev-key) \\
        .venv/bin/python examples/strands_agent.py

The model is scripted (examples/scripted), so that it runs offline: put yours (e.g.
``BedrockModel(model_id=...)``) in its place.
"""

from scripted.strands_model import ScriptedModel
from strands import Agent

from agent_memory.client import MemoryClient
from agent_memory.integrations.strands_memory import AgentMemoryHooks, memory_tools

client = MemoryClient.from_env()  # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
agent = Agent(
    model=ScriptedModel(  # yours here
        "Noted.",
        ("search_memory", {"query": "Alice moved the launch"}),
        ("forget", {"id": "{id}"}),  # the id the search answered with
        "Forgotten.",
    ),
    tools=memory_tools(client, "support-bot", user_id="u-7"),
    hooks=[AgentMemoryHooks(client, "support-bot", user_id="u-7", conversation_id="chat-42")],
    callback_handler=None,  # print nothing while streaming
)

agent("Alice moved the launch to March 3.")  # both turns written as memory of the end user
print(client.search("support-bot", "launch", user_id="u-7").results[0].text)
print(agent("That launch date is wrong: forget it."))  # Forgotten.

hits = client.search("support-bot", "Alice moved the launch", user_id="u-7").results
assert all("Alice moved the launch" not in hit.text for hit in hits)
client.close()
