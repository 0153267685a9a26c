"""The OpenAI Agents SDK's own runner over the local runtime on loopback: a session kept as memory
behaves as the SDK's `SQLiteSession` does, its turns are searchable, forgettable and erased with
their user; the memory tools run as the SDK's function tools (a scripted model, no network)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.e2e.conftest import unique
from tests.e2e.runnable_examples import RunExample, run_example_fixture  # noqa: F401 (the fixture)

from agent_memory.client import MemoryClient
from agent_memory.local.server import LocalRuntime

pytest.importorskip("agents", reason="the OpenAI Agents SDK is the `openai-agents` extra")
from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse, TResponseInputItem
from agents.memory import Session, SQLiteSession
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from agent_memory.integrations.openai_agents import AgentMemorySession, memory_function_tools

NewKey = Callable[..., tuple[str, str, str]]
OFFLINE = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """One scripted answer per call: text, or ``(tool, arguments)`` for a function call; keeps the
    input of every call."""

    def __init__(self, *answers: str | tuple[str, dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.inputs: list[list[Any]] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(list(input) if isinstance(input, list) else [input])
        answer = self.answers.pop(0)
        output: Any
        if isinstance(answer, tuple):
            output = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{len(self.inputs)}",
                name=answer[0],
                arguments=json.dumps(answer[1]),
            )
        else:
            text = ResponseOutputText(type="output_text", text=answer, annotations=[])
            output = ResponseOutputMessage(
                id=f"msg_{len(self.inputs)}",
                type="message",
                role="assistant",
                status="completed",
                content=[text],
            )
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.fixture
def client(runtime: LocalRuntime, new_key: NewKey) -> Iterator[MemoryClient]:
    """A fresh tenant's client."""
    _, _, key = new_key()
    with MemoryClient(runtime.url, api_key=key, timeout_s=30.0) as client:
        yield client


def _said(items: list[Any]) -> list[str]:
    return [str(i.get("content")) for i in items if i.get("role") == "user"]


async def _session_script(session: Session) -> list[Any]:
    """The same calls on any session; what each answered."""
    user: TResponseInputItem = {"role": "user", "content": "My order 7781 has not arrived."}
    reply: TResponseInputItem = {"role": "assistant", "content": "I will look up order 7781."}
    call: TResponseInputItem = {
        "type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"order": 7781}'
    }  # fmt: skip
    output: TResponseInputItem = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "shipped on 3 May",
    }
    answers: list[Any] = [await session.get_items(), await session.pop_item()]
    await session.add_items([user, reply])
    await session.add_items([call, output])
    answers += [await session.get_items(), await session.get_items(limit=2), await session.pop_item()]
    answers += [await session.get_items(), await session.pop_item(), await session.get_items(limit=1)]
    await session.clear_session()
    answers += [await session.get_items(), await session.pop_item()]
    return answers


def test_the_session_answers_as_the_sdks_sqlite_session_does(client: MemoryClient) -> None:
    # GIVEN the SDK's reference session and ours
    agent = unique("agent")

    # WHEN the same gets, adds (messages, a tool call and its output), pops and a clear run on both
    expected = asyncio.run(_session_script(SQLiteSession("s-1")))
    answered = asyncio.run(_session_script(AgentMemorySession("s-1", client, agent, user_id="u-1")))

    # THEN every answer is the same
    for step, (ours, reference) in enumerate(zip(answered, expected, strict=True)):
        assert ours == reference, f"step {step}"


def test_a_runner_with_the_session_sees_earlier_turns_kept_as_searchable_memory(client: MemoryClient) -> None:
    # GIVEN an agent whose conversation is kept in agent-memory
    agent_id = unique("agent")
    model = ScriptedModel("Hello Ada.", "You work on Orion.")
    agent = Agent(name="support", model=model)
    session = AgentMemorySession("chat-1", client, agent_id, user_id="u-ada")

    # WHEN two turns run through the SDK's runner with that session
    async def run() -> Any:
        await Runner.run(
            agent, "I am Ada and I work on the Orion project.", session=session, run_config=OFFLINE
        )
        return await Runner.run(agent, "What do I work on?", session=session, run_config=OFFLINE)

    result = asyncio.run(run())

    # THEN the second call to the model got the first turn from the session, and the turns are the
    # agent's memories: found by search with their dated text, in the session's conversation
    assert result.final_output == "You work on Orion."
    assert _said(model.inputs[1]) == ["I am Ada and I work on the Orion project.", "What do I work on?"]
    [hit] = client.search(agent_id, "Orion project", user_id="u-ada", max_results=1).results
    assert re.match(r"^\[\d{4}-\d{2}-\d{2}\] I am Ada and I work on the Orion project\.$", hit.text)
    assert hit.conversation_id == "chat-1" and str(hit.kind) == "conversation"


def test_erasing_the_user_empties_the_session_and_another_tenant_never_sees_it(
    client: MemoryClient, runtime: LocalRuntime, new_key: NewKey
) -> None:
    # GIVEN a session of one end user with two items
    agent_id = unique("agent")
    session = AgentMemorySession("chat-2", client, agent_id, user_id="u-bo")
    asyncio.run(session.add_items([{"role": "user", "content": "Bo's PIN is 4471."}]))
    _, _, other_key = new_key()

    # WHEN another tenant opens a session of the same names, then the user is erased
    with MemoryClient(runtime.url, api_key=other_key) as other_client:
        seen_by_other = asyncio.run(
            AgentMemorySession("chat-2", other_client, agent_id, user_id="u-bo").get_items()
        )
    before = asyncio.run(session.get_items())
    erased = client.erase_user(agent_id, "u-bo")

    # THEN the other tenant saw nothing, and the erasure took the session's items
    assert seen_by_other == []
    assert [i["content"] for i in before] == ["Bo's PIN is 4471."]  # type: ignore[typeddict-item]
    assert erased.forgotten == 1
    assert asyncio.run(session.get_items()) == []


def test_the_function_tools_write_search_and_forget_for_the_fixed_agent_and_user(
    client: MemoryClient,
) -> None:
    # GIVEN an agent with the memory tools of one agent and end user, and a model that remembers,
    # searches, then forgets what it found
    agent_id = unique("agent")
    remember = ScriptedModel(
        ("remember", {"content": "Cy's flight lands at 18:40.", "importance": 0.7}), "Noted."
    )
    model = ScriptedModel(("search_memory", {"query": "when does the flight land?"}), "Found it.")
    tools = memory_function_tools(client, agent_id, user_id="u-cy")

    # WHEN the runner runs the tool calls (a write is stored asynchronously: searched once stored)
    asyncio.run(
        Runner.run(
            Agent(name="support", model=remember, tools=tools), "Remember my flight.", run_config=OFFLINE
        )
    )
    client.wait_until_stored(agent_id)
    asyncio.run(
        Runner.run(Agent(name="support", model=model, tools=tools), "Check my flight.", run_config=OFFLINE)
    )
    outputs = [
        i["output"]
        for m in (remember, model)
        for i in m.inputs[-1]
        if i.get("type") == "function_call_output"
    ]
    [hit] = client.search(agent_id, "flight", user_id="u-cy").results
    forget = ScriptedModel(("forget", {"id": hit.id}), ("forget", {"id": hit.id}), "Done.")
    asyncio.run(
        Runner.run(Agent(name="support", model=forget, tools=tools), "Forget it.", run_config=OFFLINE)
    )
    forgot = [i["output"] for i in forget.inputs[-1] if i.get("type") == "function_call_output"]

    # THEN the model read the tools' answers: the write, the dated hit, the forget, and a second
    # forget of the same id as an answer it can act on rather than a failed run
    assert outputs[0].startswith("Remembered")
    assert "Cy's flight lands at 18:40." in outputs[1] and re.search(r"\[\d{4}-\d{2}-\d{2}", outputs[1])
    assert hit.user_id == "u-cy"
    assert forgot[0].startswith(f"Forgot {hit.id}")
    assert forgot[1].startswith("Not found")
    assert client.search(agent_id, "flight", user_id="u-cy").results == []
    assert [t.name for t in tools] == ["search_memory", "recall_context", "remember", "forget"]


def test_the_example_agent_runs_against_the_local_runtime(
    run_example: RunExample, runtime: LocalRuntime
) -> None:
    # WHEN examples/openai_agents_agent.py runs as a script, with a fresh tenant's key
    key, printed = run_example("openai_agents_agent.py")

    # THEN it answered after a search of memory, the session held both turns with the tool call and
    # its output, and clearing the session forgot them
    assert printed == ["The launch is on March 3.", "6"]
    with MemoryClient(runtime.url, api_key=key) as client:
        assert client.search("support-bot", "launch").results == []
