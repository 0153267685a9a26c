"""A LangGraph agent with agent-memory as its store: it writes (``store.put``), recalls what is
relevant to the user's question into the graph's state (``memory_context_node``), searches
(``store.search``) and forgets (``store.delete``), all through LangGraph's own interfaces.

    AGENT_MEMORY_URL=http://127.0.0.1:8000 AGENT_MEMORY_API_KEY=$(cat .agent-memory/dev-key) \\
        .venv/bin/python examples/langgraph_agent.py

The chat model is LangGraph's scripted fake, so that it runs offline: put yours in its place.
"""

from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from agent_memory.client import MemoryClient
from agent_memory.integrations.langgraph_store import AgentMemoryStore, memory_context_node

client = MemoryClient.from_env()  # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
store = AgentMemoryStore(client)
model = GenericFakeChatModel(messages=iter([AIMessage("The launch is on March 3.")]))  # yours here


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    memory_context: str


def answer(state: State) -> dict[str, Any]:
    prompt = [SystemMessage(state["memory_context"]), *state["messages"]]
    return {"messages": [model.invoke(prompt)]}


graph = (
    StateGraph(State)
    .add_node("recall", memory_context_node(client, agent_id="support-bot", max_days_ago=1))
    .add_node("answer", answer)
    .add_edge(START, "recall")
    .add_edge("recall", "answer")
    .compile(store=store)
)

user = ("support-bot", "u-7")  # (agent, end user)
store.put(user, "launch", {"text": "Alice moved the launch to March 3."})
out = graph.invoke({"messages": [HumanMessage("When is the launch?")]}, {"configurable": {"user_id": "u-7"}})
print(out["memory_context"])  # [2026-11-28 · working] Alice moved the launch to March 3.
print(out["messages"][-1].content)  # The launch is on March 3.
print(store.search(user, query="launch date")[0].text)

store.delete(user, "launch")  # forgotten: gone from search at once, in the audit trail
assert store.search(user, query="launch date") == []
client.close()
