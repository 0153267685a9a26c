"""The dispatcher: tool calls in each API's shape in, dated text results in the same shape out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.unit.tools.conftest import NOW, FakeMemoryApi

from agent_memory.client.api_errors import ServerError, TransportError, UnexpectedResponseError
from agent_memory.contract.v1 import AlsoInOut, SearchResult
from agent_memory.model.grains import Grain
from agent_memory.model.limits import DEFAULT_CONTEXT_TOKENS
from agent_memory.model.records import MemoryKind
from agent_memory.tools import MemoryTools, ToolCall, parse_tool_call

ID = re.compile(r"\(id ((?:mem|sum)_[a-z2-7]+)\)")


def tools_for(api: FakeMemoryApi, user_id: str | None = None) -> MemoryTools:
    return MemoryTools(api, "support-bot", user_id=user_id, clock=lambda: NOW)


def bedrock(name: str, args: dict[str, Any], id_: str = "tu-1") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": id_, "name": name, "input": args}}


def anthropic(name: str, args: dict[str, Any], id_: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": args}


def openai(name: str, args: dict[str, Any] | str, id_: str = "call_1") -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- parsing ---------------------------------------------------------------------------------------


def test_each_api_shape_parses_into_one_call() -> None:
    # WHEN / THEN
    assert parse_tool_call(bedrock("forget", {"id": "x"})) == ToolCall(
        "tu-1", "forget", {"id": "x"}, "bedrock"
    )
    assert parse_tool_call({"toolUseId": "tu-2", "name": "forget", "input": {}}) == ToolCall(
        "tu-2", "forget", {}, "bedrock"
    )
    assert parse_tool_call(anthropic("forget", {"id": "x"})) == ToolCall(
        "toolu_1", "forget", {"id": "x"}, "anthropic"
    )
    assert parse_tool_call(openai("forget", {"id": "x"})) == ToolCall(
        "call_1", "forget", '{"id": "x"}', "openai"
    )


@dataclass
class SdkBlock:
    """What the Anthropic SDK hands back: an object with ``model_dump``, not a dict."""

    type: str
    id: str
    name: str
    input: dict[str, Any]

    def model_dump(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "name": self.name, "input": self.input}


def test_sdk_objects_parse_like_dicts() -> None:
    # GIVEN
    call = parse_tool_call(SdkBlock("tool_use", "toolu_9", "remember", {"content": "x"}))
    # WHEN / THEN
    assert call == ToolCall("toolu_9", "remember", {"content": "x"}, "anthropic")


def test_blocks_that_are_not_tool_calls_are_skipped_or_refused(api: FakeMemoryApi) -> None:
    # WHEN / THEN
    assert parse_tool_call({"text": "thinking..."}) is None
    assert parse_tool_call({"type": "text", "text": "hi"}) is None
    with pytest.raises(ValueError, match="not a tool-use block"):
        tools_for(api).handle({"type": "text", "text": "hi"})


# --- write through one call, find through another ---------------------------------------------------


def test_remember_then_search_then_forget_across_the_three_formats(api: FakeMemoryApi) -> None:
    tools = tools_for(api, user_id="u-7")

    # GIVEN an Anthropic remember call
    remember = {"content": "Alice moved the launch to March 3.", "topic": "launch", "importance": 0.8}
    stored = tools.handle(anthropic("remember", remember))

    # THEN it was written for the bound agent and user, dated by the clock, and the result says so
    [(memory_id, (agent, item))] = api.stored.items()
    assert (agent, item.user_id, item.occurred_at, item.topic) == ("support-bot", "u-7", NOW, "launch")
    assert stored["type"] == "tool_result" and stored["tool_use_id"] == "toolu_1"
    assert "is_error" not in stored
    assert f"[2026-11-22 · working] Alice moved the launch to March 3. (id {memory_id})" in stored["content"]

    # WHEN an OpenAI search call looks for it (arguments as a JSON string)
    found = tools.handle(openai("search_memory", {"query": "launch", "grain": "working", "max_days_ago": 7}))

    # THEN the tool message lists it as a dated line, for the bound user only
    assert found["role"] == "tool" and found["tool_call_id"] == "call_1"
    assert found["content"].splitlines() == [
        "1 memory (grain working, 0 to 7 days ago), best match first:",
        f"[2026-11-22 · working] Alice moved the launch to March 3. (id {memory_id})",
    ]
    assert api.searches[-1][1].user_id == "u-7"

    # WHEN a Bedrock call forgets it, twice
    forgotten = tools.handle(bedrock("forget", {"id": memory_id}))
    again = tools.handle(bedrock("forget", {"id": memory_id}, id_="tu-2"))

    # THEN the first succeeds and the second is an error result the model can read
    assert forgotten["toolResult"]["status"] == "success"
    assert forgotten["toolResult"]["content"] == [
        {"text": f"Forgot {memory_id}: it will not be returned by search again."}
    ]
    assert again["toolResult"]["status"] == "error"
    assert again["toolResult"]["toolUseId"] == "tu-2"
    assert "Not found" in again["toolResult"]["content"][0]["text"]
    assert "No memories found" in tools.call("search_memory", {"query": "launch"})[0]


def test_recall_context_answers_the_packed_block_and_says_what_it_left_out(api: FakeMemoryApi) -> None:
    # GIVEN four memories about the launch whose lines cost 14 tokens each (the fake counts words),
    # and one about lunch
    tools = tools_for(api, user_id="u-7")
    notes = [f"Launch note {n}: the review moved, owners confirmed, budget approved today." for n in range(4)]
    for note in notes:
        tools.call("remember", {"content": note})
    tools.call("remember", {"content": "Lunch is at noon."})

    # WHEN Claude recalls context about the launch within 50 tokens
    result = tools.handle(anthropic("recall_context", {"query": "launch", "token_budget": 50}))

    # THEN the call reached the service for the bound agent and user, with the model's budget
    [(agent, request)] = api.contexts
    assert (agent, request.query, request.token_budget) == ("support-bot", "launch", 50)
    assert request.user_id == "u-7"
    # AND the result is the block under a line saying what it holds and what did not fit
    assert "is_error" not in result
    head, *block = result["content"].splitlines()
    assert head == (
        "Context for 'launch': 3 memories, oldest first (42 of 50 tokens; 1 less relevant left out):"
    )
    assert block == [f"[2026-11-22 · working] {note}" for note in notes[:3]]


def test_recall_context_without_a_budget_takes_the_contracts_default(api: FakeMemoryApi) -> None:
    # WHEN
    text, is_error = tools_for(api).call("recall_context", {"query": "anything at all"})

    # THEN
    assert not is_error
    assert text == "No memories relevant to 'anything at all'."
    assert api.contexts[0][1].token_budget == DEFAULT_CONTEXT_TOKENS
    assert api.contexts[0][1].user_id is None


def test_a_forget_that_made_summaries_stale_says_they_will_be_remade(api: FakeMemoryApi) -> None:
    # GIVEN
    tools = tools_for(api)
    [memory_id] = ID.findall(tools.call("remember", {"content": "Alice moved the launch."})[0])
    api.stale_summaries = ["sum_aaaaaaaaaaaaaaaaaaaaaaaaaa", "sum_bbbbbbbbbbbbbbbbbbbbbbbbbb"]

    # WHEN
    text, is_error = tools.call("forget", {"id": memory_id})

    # THEN
    assert not is_error
    assert text == (
        f"Forgot {memory_id}: it will not be returned by search again. "
        "2 summaries made from it will be re-made without it."
    )


def test_summaries_are_labelled_with_their_period_and_grain(api: FakeMemoryApi) -> None:
    # GIVEN
    api.summaries = [
        SearchResult(
            id="sum_abcdefghijklmnopqrstuvwxyz", grain=Grain.WEEKLY, time_key="2026-W47",
            kind=MemoryKind.SUMMARY, content="Launch planning.\nAlice owns the date.", text="", score=0.5,
            similarity=None, recency=0.5,
            importance=0.5, occurred_at=datetime(2026, 11, 16, tzinfo=UTC), topic=None, user_id=None,
            conversation_id=None, source=None, metadata={}, tags=[],
        )
    ]  # fmt: skip

    # WHEN
    text, is_error = tools_for(api).call("search_memory", {"grain": "weekly", "min_days_ago": 3})

    # THEN
    assert not is_error
    assert text.splitlines() == [
        "1 memory (grain weekly, at least 3 days ago), best match first:",
        "[2026-W47 · weekly] Launch planning.",
        "  Alice owns the date. (id sum_abcdefghijklmnopqrstuvwxyz)",
    ]


def test_a_hit_names_the_summaries_folded_into_it(api: FakeMemoryApi) -> None:
    # GIVEN a working memory that a daily and a weekly summary repeat
    api.summaries = [
        SearchResult(
            id="mem_abcdefghijklmnopqrstuvwxyz", grain=Grain.WORKING, time_key=None,
            kind=MemoryKind.NOTE, content="Alice moved the launch.", text="", score=0.5,
            similarity=None, recency=0.5,
            importance=0.5, occurred_at=datetime(2026, 11, 16, tzinfo=UTC), topic=None, user_id=None,
            conversation_id=None, source=None, metadata={}, tags=[],
            also_in=[
                AlsoInOut(grain=Grain.DAILY, period="2026-11-16", id="sum_d"),
                AlsoInOut(grain=Grain.WEEKLY, period="2026-W47", id="sum_w"),
            ],
        )
    ]  # fmt: skip

    # WHEN
    text, _ = tools_for(api).call("search_memory", {"grain": "weekly"})

    # THEN the line says where else the fact is held
    assert text.splitlines()[1:] == [
        "[2026-11-16 · working] Alice moved the launch. (id mem_abcdefghijklmnopqrstuvwxyz)",
        "  also in: daily 2026-11-16, weekly 2026-W47",
    ]


def test_run_tool_calls_answers_every_call_in_order_and_skips_text(api: FakeMemoryApi) -> None:
    # GIVEN
    content = [
        {"text": "Let me remember that."},
        bedrock("remember", {"content": "first"}, "a"),
        bedrock("remember", {"content": "second"}, "b"),
    ]

    # WHEN
    results = tools_for(api).run_tool_calls(content)

    # THEN
    assert [r["toolResult"]["toolUseId"] for r in results] == ["a", "b"]
    assert [item.content for _, item in api.stored.values()] == ["first", "second"]
    assert tools_for(api).run_tool_calls(None) == []


# --- failures come back as error results -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("search_memory", {"max_results": 500}, "Invalid arguments for search_memory: max_results:"),
        (
            "search_memory",
            {"grain": "hourly"},
            "grain: must be one of working, daily, weekly, monthly, quarterly, yearly, all.",
        ),
        ("remember", {}, "Invalid arguments for remember: content: Field required"),
        ("remember", {"content": "   "}, "Invalid arguments for remember: "),
        ("remember", {"content": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ("forget", {"id": "../etc/passwd"}, "Invalid arguments for forget: id:"),
        ("recall_context", {}, "Invalid arguments for recall_context: query: Field required"),
        ("recall_context", {"query": "x", "token_budget": 10}, "recall_context: token_budget:"),
        ("recall_context", {"query": "   "}, "Invalid arguments for recall_context: arguments: "),
        ("search_memory", '{"query": ', "not valid JSON"),
        ("recall_everything", {}, "Unknown tool 'recall_everything'; the memory tools are: search_memory,"),
    ],
)
def test_invalid_calls_are_error_results_that_name_the_problem(
    api: FakeMemoryApi, name: str, arguments: Any, expected: str
) -> None:
    # WHEN
    text, is_error = tools_for(api).call(name, arguments)

    # THEN
    assert is_error
    assert expected in text
    assert api.stored == {}
    assert api.contexts == []


def test_service_failures_are_error_results(api: FakeMemoryApi) -> None:
    # GIVEN
    tools = tools_for(api)

    # WHEN
    api.fail_with = ServerError(503, "dependency_unavailable", "the store is unavailable")
    refused = tools.handle(anthropic("search_memory", {"query": "x"}))
    api.fail_with = TransportError("connection refused", attempts=4)
    unreachable = tools.handle(openai("remember", {"content": "x"}))
    api.fail_with = UnexpectedResponseError("the 200 response is not a ContextResponse", 200)
    unreadable = tools.handle(bedrock("recall_context", {"query": "x"}))

    # THEN
    assert refused["is_error"] is True
    assert "The memory service refused search_memory: the store is unavailable" in refused["content"]
    assert unreachable["content"].startswith("The memory service is unreachable right now")
    assert unreadable["toolResult"]["status"] == "error"
    assert unreadable["toolResult"]["content"] == [
        {"text": "The memory service gave an answer recall_context cannot read (HTTP 200)."}
    ]


def test_an_empty_openai_argument_string_means_no_arguments(api: FakeMemoryApi) -> None:
    # WHEN
    text, is_error = tools_for(api).call("search_memory", "")

    # THEN
    assert not is_error
    assert text == "No memories found (grain all, any time)."
