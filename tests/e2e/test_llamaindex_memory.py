"""LlamaIndex's own `Memory` and chat engine over the local runtime on loopback: the memory block
puts the relevant memories into the chat as dated, grain-tagged lines, writes what the memory
flushes as the agent's conversation, keeps tenants apart and loses what is erased (LlamaIndex's
`MockLLM`, which answers with the prompt it was given: no network)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from tests.e2e.conftest import unique
from tests.e2e.runnable_examples import RunExample, run_example_fixture  # noqa: F401 (the fixture)

from agent_memory.client import MemoryClient
from agent_memory.local.server import LocalRuntime

pytest.importorskip("llama_index.core", reason="LlamaIndex is the `llamaindex` extra")
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import Memory

from agent_memory.integrations.llamaindex_memory import AgentMemoryBlock

NewKey = Callable[..., tuple[str, str, str]]
LINE = r"\[\d{4}-\d{2}-\d{2} · working\] "


@pytest.fixture
def client(runtime: LocalRuntime, new_key: NewKey) -> Iterator[MemoryClient]:
    """A fresh tenant's client."""
    _, _, key = new_key()
    with MemoryClient(runtime.url, api_key=key, timeout_s=30.0) as client:
        yield client


def test_the_chat_engine_gets_the_relevant_memories_in_its_system_message(client: MemoryClient) -> None:
    # GIVEN an end user's memories and a chat engine whose memory has the block
    agent = unique("agent")
    client.remember(agent, "Dana's flight to Oslo lands at 18:40.", user_id="u-dana")
    client.remember(agent, "Dana prefers aisle seats.", user_id="u-dana")
    client.remember(agent, "Eve's flight lands at 09:15.", user_id="u-eve")
    client.wait_until_stored(agent)
    block = AgentMemoryBlock(client=client, agent_id=agent, user_id="u-dana")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=Memory.from_defaults(memory_blocks=[block]))

    # WHEN the user asks (MockLLM answers with the prompt it was given)
    prompt = str(engine.chat("When does my flight land?"))

    # THEN the model saw the user's own relevant memory, dated and grain-tagged, inside the
    # block's tag of the system message, and nothing of the other user
    system = prompt.split("\nuser: ", 1)[0]
    assert system.startswith("system: <memory>\n<agent_memory>")
    assert re.search(LINE + r"Dana's flight to Oslo lands at 18:40\.", system)
    assert "Eve" not in system


def test_messages_flushed_out_of_the_window_become_the_agents_conversation(
    client: MemoryClient, runtime: LocalRuntime, new_key: NewKey
) -> None:
    # GIVEN a memory whose short-term window holds few tokens, with the block
    agent = unique("agent")
    block = AgentMemoryBlock(client=client, agent_id=agent, user_id="u-fay")
    memory = Memory.from_defaults(
        session_id="chat-7",
        memory_blocks=[block],
        token_limit=120,
        chat_history_token_ratio=0.5,
        token_flush_size=40,
    )
    said = [f"Fay's order number {n} is a blue bicycle frame of size {50 + n}." for n in range(8)]

    # WHEN a long chat goes through it
    for n, text in enumerate(said):
        memory.put(ChatMessage(role="user" if n % 2 == 0 else "assistant", content=text))
    recalled = memory.get()
    _, _, other_key = new_key()
    with MemoryClient(runtime.url, api_key=other_key) as other:
        unseen = other.search(agent, "bicycle frame").results

    # THEN the oldest turns left the window and are the agent's memories of that conversation and
    # user; the rest are still in the window; another tenant finds none of them
    stored = client.search(agent, None, user_id="u-fay", max_results=20).results
    assert stored and {r.conversation_id for r in stored} == {"chat-7"}
    assert {r.content for r in stored} <= set(said[:-1])
    assert said[0] in {r.content for r in stored}
    assert recalled[-1].content == said[-1]
    assert unseen == []


def test_erased_memories_are_no_longer_put_into_the_chat(client: MemoryClient) -> None:
    # GIVEN an end user's memory the block recalls
    agent = unique("agent")
    client.remember(agent, "Gus's locker code is 5512.", user_id="u-gus")
    client.wait_until_stored(agent)
    memory = Memory.from_defaults(
        memory_blocks=[AgentMemoryBlock(client=client, agent_id=agent, user_id="u-gus")]
    )
    memory.put(ChatMessage(role="user", content="What is my locker code?"))
    before = memory.get()[0].content

    # WHEN the user is erased
    client.erase_user(agent, "u-gus")
    after = memory.get()[0].content

    # THEN the block had the memory before and has nothing after
    assert before is not None and "5512" in before
    assert after is None or "5512" not in after


def test_the_example_agent_runs_against_the_local_runtime(
    run_example: RunExample, runtime: LocalRuntime
) -> None:
    # WHEN examples/llamaindex_agent.py runs as a script, with a fresh tenant's key
    key, printed = run_example("llamaindex_agent.py")

    # THEN the block put the remembered fact into the system message, the agent forgot it on request,
    # and nothing is left to find
    assert re.search(LINE + r"Alice moved the launch to March 3\.", printed[0])
    assert printed[-1] == "Forgotten."
    with MemoryClient(runtime.url, api_key=key) as client:
        assert client.search("support-bot", "launch").results == []
