"""Strands Agents' own agent loop over the local runtime on loopback: the hook provider keeps each user
and assistant turn as a conversation memory (tool calls and results left out) stored before the
call returns, and the memory tools run as Strands tools, a failure coming back to the model as an
error result (a scripted model, no network)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.e2e.runnable_examples import EXAMPLES, RunExample, run_example_fixture  # noqa: F401 (the fixture)

from agent_memory.client import MemoryClient
from agent_memory.local.server import LocalRuntime

pytest.importorskip("strands", reason="Strands Agents is the `strands` extra")
from strands import Agent

from agent_memory.integrations.strands_memory import AgentMemoryHooks, memory_tools

sys.path.insert(0, str(EXAMPLES))
from scripted.strands_model import ScriptedModel  # examples/ is not a package: on sys.path above

NewKey = Callable[..., tuple[str, str, str]]


@pytest.fixture
def client(runtime: LocalRuntime, new_key: NewKey) -> Iterator[MemoryClient]:
    """A fresh tenant's client."""
    _, _, key = new_key()
    with MemoryClient(runtime.url, api_key=key, timeout_s=30.0) as client:
        yield client


def _agent(client: MemoryClient, *steps: Any, hooks: bool = True) -> Agent:
    return Agent(
        model=ScriptedModel(*steps),
        tools=memory_tools(client, "bot", user_id="u-ann"),
        hooks=[AgentMemoryHooks(client, "bot", user_id="u-ann", conversation_id="chat-1")] if hooks else [],
        callback_handler=None,
    )


def _tool_results(agent: Agent) -> list[tuple[str, str]]:
    """``(status, text)`` of every tool result in the agent's conversation, in order."""
    return [
        (block["toolResult"]["status"], block["toolResult"]["content"][0]["text"])
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def test_the_hooks_keep_each_user_and_assistant_turn_and_no_tool_traffic(client: MemoryClient) -> None:
    # GIVEN an agent whose model searches memory before it answers
    agent = _agent(client, ("search_memory", {"query": "locker"}), "Your locker code is noted.")

    # WHEN the user says something
    agent("My locker code is 5512.")

    # THEN, as soon as the call returns, the user's and the assistant's words are conversation
    # memories of that user and conversation; the tool call and its result are not memories
    hits = client.search("bot", None, grain="working", user_id="u-ann").results
    assert client.stats("bot").pending_writes == 0
    stored = [client.get("bot", hit.id) for hit in hits]
    assert sorted((m.role, m.content) for m in stored) == [
        ("assistant", "Your locker code is noted."),
        ("user", "My locker code is 5512."),
    ]
    assert {(m.kind, m.conversation_id, m.user_id) for m in stored} == {("conversation", "chat-1", "u-ann")}


def test_the_next_call_finds_what_the_last_one_said(client: MemoryClient) -> None:
    # GIVEN a first call that told the agent a fact
    agent = _agent(client, "Noted.", ("search_memory", {"query": "Where does Ann park?"}), "Level 3.")
    agent("I park on level 3.")

    # WHEN the next call's model searches memory
    agent("Where do I park?")

    # THEN the search found the first call's words, dated
    [(status, text)] = _tool_results(agent)
    assert status == "success"
    assert re.search(r"\[\d{4}-\d{2}-\d{2} · working\] I park on level 3\.", text)


def test_the_memory_tools_remember_search_and_forget_and_a_failure_is_an_error_result(
    client: MemoryClient,
) -> None:
    # GIVEN an agent without the hooks whose model remembers a fact
    agent = _agent(client, ("remember", {"content": "Cy's flight lands at 18:40."}), "Noted.", hooks=False)
    agent("Remember Cy's flight.")
    client.wait_until_stored("bot")

    # WHEN its model searches, forgets the memory found, then forgets the same id again
    agent.model = ScriptedModel(
        ("search_memory", {"query": "flight"}),
        ("forget", {"id": "{id}"}),
        ("forget", {"id": client.search("bot", "flight").results[0].id}),
        "Done.",
    )
    agent("Forget Cy's flight.")

    # THEN each tool answered the model: the write, the dated hit of that user, the forget, and the
    # second forget as an error result it can act on rather than a failed run
    results = _tool_results(agent)
    assert [status for status, _ in results] == ["success", "success", "success", "error"]
    assert results[0][1].startswith("Remembered")
    assert "Cy's flight lands at 18:40." in results[1][1]
    assert results[2][1].startswith("Forgot ")
    assert results[3][1].startswith("Not found")
    assert client.search("bot", "flight", user_id="u-ann").results == []
    assert [t.tool_name for t in memory_tools(client, "bot")] == [
        "search_memory",
        "recall_context",
        "remember",
        "forget",
    ]


def test_the_example_agent_runs_against_the_local_runtime(
    run_example: RunExample, runtime: LocalRuntime
) -> None:
    # WHEN examples/strands_agent.py runs as a script, with a fresh tenant's key
    key, printed = run_example("strands_agent.py")

    # THEN the hooks had written the user's words, found by search, and the agent forgot them on
    # request (the script's own assert: no hit holds them any more)
    assert re.match(r"^\[\d{4}-\d{2}-\d{2}\] Alice moved the launch to March 3\.$", printed[0])
    assert printed[-1] == "Forgotten."
    with MemoryClient(runtime.url, api_key=key) as client:
        texts = [hit.text for hit in client.search("support-bot", "launch").results]
    assert texts and not any("Alice moved" in text for text in texts)
