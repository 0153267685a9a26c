"""The tool dispatcher against the local runtime: tool calls as each LLM API sends them, end to end.

Written through one tool call, found through another: the calls are the blocks an LLM returns
(Anthropic ``tool_use``, OpenAI ``tool_calls``, Bedrock ``toolUse``), the results are the blocks
that go back to it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.e2e.conftest import unique, wait_until

from agent_memory.client import MemoryClient
from agent_memory.local.server import LocalRuntime
from agent_memory.tools import MemoryTools

NewKey = Callable[..., tuple[str, str, str]]
ID = re.compile(r"\(id ((?:mem|sum)_[a-z2-7]+)\)")


@pytest.fixture
def tools_for(runtime: LocalRuntime) -> Iterator[Callable[..., MemoryTools]]:
    clients: list[MemoryClient] = []

    def make(key: str, agent_id: str, user_id: str | None = None) -> MemoryTools:
        clients.append(MemoryClient(runtime.url, api_key=key, timeout_s=30.0))
        return MemoryTools(clients[-1], agent_id, user_id=user_id)

    yield make
    for client in clients:
        client.close()


def openai_search(tools: MemoryTools, call_id: str, **arguments: Any) -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "search_memory", "arguments": json.dumps(arguments)},
    }
    [result] = tools.run_tool_calls([call])
    return result


def test_remember_through_one_api_find_through_another_forget_through_a_third(
    tools_for: Callable[..., MemoryTools], new_key: NewKey
) -> None:
    # GIVEN the memory tools of a fresh agent
    _, _, key = new_key()
    tools = tools_for(key, unique("agent"), user_id="u-7")

    # WHEN Claude calls remember (an Anthropic tool_use block)
    [stored] = tools.run_tool_calls(
        [
            {"type": "text", "text": "I'll note that."},
            {"type": "tool_use", "id": "toolu_01", "name": "remember",
             "input": {"content": "Alice moved the launch to March 3.", "topic": "launch date",
                       "importance": 0.9}},
        ]
    )  # fmt: skip

    # THEN the result is a tool_result with the dated memory and its id
    assert stored["type"] == "tool_result" and stored["tool_use_id"] == "toolu_01"
    assert "is_error" not in stored, stored
    [memory_id] = ID.findall(stored["content"])

    # WHEN a GPT agent searches for it (an OpenAI tool call), until the asynchronous writer stored it
    def found() -> dict[str, Any] | None:
        result = openai_search(tools, "call_01", query="when is the launch?", grain="working", max_days_ago=1)
        return result if memory_id in result["content"] else None

    result = wait_until(found, timeout_s=10, interval_s=0.05)

    # THEN the tool message lists it as a dated line an LLM can read
    assert result["role"] == "tool" and result["tool_call_id"] == "call_01"
    line = next(ln for ln in result["content"].splitlines() if memory_id in ln)
    assert re.fullmatch(
        rf"\[\d{{4}}-\d{{2}}-\d{{2}} · working\] Alice moved the launch to March 3\. \(id {memory_id}\)", line
    )

    # WHEN a Bedrock agent forgets it (a Converse toolUse block)
    [forgotten] = tools.run_tool_calls(
        [{"toolUse": {"toolUseId": "tu-01", "name": "forget", "input": {"id": memory_id}}}]
    )

    # THEN it succeeded and no search finds it any more
    assert forgotten["toolResult"]["status"] == "success", forgotten
    assert memory_id not in openai_search(tools, "call_02", query="launch")["content"]


def test_the_service_refusing_a_call_is_an_error_result_not_an_exception(
    tools_for: Callable[..., MemoryTools], new_key: NewKey
) -> None:
    # GIVEN tools whose key is bound to another agent, and tools with a key that does not exist
    _, _, bound = new_key(agents=frozenset({"someone-else"}))
    wrong_agent = tools_for(bound, unique("agent"))
    wrong_key = tools_for("am_not-a-real-key", unique("agent"))

    # WHEN they are called
    [forbidden] = wrong_agent.run_tool_calls(
        [{"toolUse": {"toolUseId": "tu-1", "name": "remember", "input": {"content": "x"}}}]
    )
    text, is_error = wrong_key.call("search_memory", {"query": "x"})

    # THEN the LLM gets readable error results
    assert forbidden["toolResult"]["status"] == "error"
    assert forbidden["toolResult"]["content"][0]["text"].startswith("The memory service refused remember:")
    assert is_error and "missing or invalid API key" in text


def test_summaries_come_back_labelled_with_their_period(
    tools_for: Callable[..., MemoryTools], new_key: NewKey
) -> None:
    # GIVEN an agent with a memory on 2026-11-20, summarized by the admin route
    _, _, key = new_key(admin=True)
    agent = unique("agent")
    client = MemoryClient(tools_for(key, agent).context.client.base_url, api_key=key)  # type: ignore[attr-defined]
    with client:
        client.remember(agent, "Alice moved the launch to March 3.", occurred_at="2026-11-20T14:03:00Z")
        client.wait_until_stored(agent, timeout_s=10)
        client.summarize(grain="daily", period="2026-11-20")
    tools = tools_for(key, agent)

    # WHEN the agent searches the daily grain, until the summary is written
    def daily() -> str | None:
        text, is_error = tools.call("search_memory", {"grain": "daily"})
        assert not is_error, text
        return text if "[2026-11-20 · daily]" in text else None

    text = wait_until(daily, timeout_s=10, interval_s=0.1)

    # THEN the day's summary is one dated line with its summary id
    [line] = [ln for ln in text.splitlines() if ln.startswith("[2026-11-20 · daily]")]
    assert "(id sum_" in text
    assert "launch" in text.lower()
    assert line.startswith("[2026-11-20 · daily] ")


def test_recall_context_loads_a_dated_block_within_the_budget(
    tools_for: Callable[..., MemoryTools], new_key: NewKey
) -> None:
    # GIVEN two memories of end user u-7 about the launch, and one of another end user
    _, _, key = new_key()
    agent = unique("agent")
    tools = tools_for(key, agent, user_id="u-7")
    with MemoryClient(tools.context.client.base_url, api_key=key) as client:  # type: ignore[attr-defined]
        client.write(
            agent,
            [{"content": "The launch moved to March 3.", "occurred_at": "2026-11-20T14:03:00Z",
              "user_id": "u-7"},
             {"content": "The launch needs the security audit first.", "occurred_at": "2026-11-18T09:00:00Z",
              "user_id": "u-7"},
             {"content": "The launch party is on March 4.", "occurred_at": "2026-11-19T09:00:00Z",
              "user_id": "u-8"}],
        )  # fmt: skip
        client.wait_until_stored(agent, timeout_s=10)

    # WHEN a Bedrock agent calls recall_context about the launch
    [result] = tools.run_tool_calls(
        [{"toolUse": {"toolUseId": "tu-ctx", "name": "recall_context",
                      "input": {"query": "when is the launch?", "token_budget": 300}}}]
    )  # fmt: skip

    # THEN it gets u-7's memories as one block, oldest first, under a line saying what it holds
    assert result["toolResult"]["status"] == "success", result
    head, *block = result["toolResult"]["content"][0]["text"].splitlines()
    assert re.fullmatch(
        r"Context for 'when is the launch\?': 2 memories, oldest first \(\d+ of 300 tokens\):", head
    ), head
    assert block == [
        "[2026-11-18 · working] The launch needs the security audit first.",
        "[2026-11-20 · working] The launch moved to March 3.",
    ]

    # WHEN the budget is below what the service accepts
    text, is_error = tools.call("recall_context", {"query": "launch", "token_budget": 10})

    # THEN the model is told which argument to fix
    assert is_error and text.startswith("Invalid arguments for recall_context: token_budget:")
