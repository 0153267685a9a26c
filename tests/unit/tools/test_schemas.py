"""The tool definitions: valid JSON Schema, self-contained, generated from the contract's models."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from pydantic import BaseModel, TypeAdapter, ValidationError

import agent_memory.tools
from agent_memory.contract.v1 import ContextRequest, SearchRequest, WriteItem
from agent_memory.contract.v1_experience import FeedbackRequest
from agent_memory.experience.rules.confidence import MAX_EXPERIENCE_TEXT, MAX_NOTE_CHARS
from agent_memory.model.grains import Grain
from agent_memory.model.limits import (
    DEFAULT_CONTEXT_TOKENS,
    MAX_CONTEXT_TOKENS,
    MAX_DAYS_AGO,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    MAX_TOPIC_CHARS,
    MAX_TTL_DAYS,
    MIN_CONTEXT_TOKENS,
)
from agent_memory.model.records import EXPERIENCE_KINDS, MemoryKind
from agent_memory.model.types import MemoryId
from agent_memory.tools import TOOLS, TOOLS_BY_NAME, anthropic_tools, bedrock_tools, llm_schema, openai_tools

TOOLS_PACKAGE = Path(agent_memory.tools.__file__).parent


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def schema(name: str) -> dict[str, Any]:
    return TOOLS_BY_NAME[name].input_schema


def test_the_tools_are_the_ones_agents_expect() -> None:
    # WHEN / THEN
    assert [t.name for t in TOOLS] == [
        "search_memory", "recall_context", "remember", "forget", "search_knowledge", "record_outcome",
        "give_feedback",
    ]  # fmt: skip
    assert set(schema("search_memory")["properties"]) == {
        "query", "grain", "as_of", "min_days_ago", "max_days_ago", "max_results", "sources", "kinds",
        "min_confidence", "patterns_first",
    }  # fmt: skip
    assert set(schema("search_knowledge")["properties"]) == {"query", "max_results", "tags"}
    assert schema("search_knowledge")["required"] == ["query"]
    assert set(schema("recall_context")["properties"]) == {"query", "token_budget"}
    assert schema("recall_context")["required"] == ["query"]
    assert set(schema("remember")["properties"]) == {"content", "topic", "importance", "ttl_days"}
    assert schema("remember")["required"] == ["content"]
    assert schema("forget")["required"] == ["id"]
    assert set(schema("record_outcome")["properties"]) == {
        "kind", "content", "context", "outcome", "confidence", "run_id",
    }  # fmt: skip
    assert schema("record_outcome")["required"] == ["kind", "content"]
    assert set(schema("give_feedback")["properties"]) == {"memory_id", "outcome", "note"}
    assert schema("give_feedback")["required"] == ["memory_id", "outcome"]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_schema_is_valid_json_schema_for_both_drafts_the_apis_use(tool: Any) -> None:
    # WHEN / THEN both drafts' validators accept the schema (they raise if not), an object's
    Draft202012Validator.check_schema(tool.input_schema)
    Draft7Validator.check_schema(tool.input_schema)
    assert tool.input_schema["type"] == "object"
    assert tool.input_schema["additionalProperties"] is False


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_no_schema_has_references_titles_or_null_branches(tool: Any) -> None:
    # WHEN
    keys = {key for key, _ in _walk(tool.input_schema)}
    # THEN
    assert not keys & {"$ref", "$defs", "definitions", "title"}
    assert not any(key == "anyOf" for key in keys)
    assert {"type": "null"} not in [v for _, v in _walk(tool.input_schema)]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_names_and_descriptions_suit_every_api(tool: Any) -> None:
    # WHEN / THEN
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name)
    assert 20 <= len(tool.description) <= 1024
    for name, prop in tool.input_schema["properties"].items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"


def test_constraints_come_from_the_contract_models_not_from_a_second_copy() -> None:
    # GIVEN
    search = schema("search_memory")["properties"]
    remember = schema("remember")["properties"]
    # WHEN / THEN
    assert search["max_results"]["maximum"] == MAX_RESULTS
    assert search["max_results"]["default"] == 10
    assert search["query"]["maxLength"] == MAX_QUERY_CHARS
    assert search["max_days_ago"]["maximum"] == MAX_DAYS_AGO
    assert search["grain"]["enum"] == [g.value for g in Grain] + ["all"]
    assert search["grain"]["default"] == "all"
    assert (remember["importance"]["minimum"], remember["importance"]["maximum"]) == (0, 1)
    assert remember["ttl_days"]["maximum"] == MAX_TTL_DAYS
    assert remember["topic"]["maxLength"] == MAX_TOPIC_CHARS
    assert schema("forget")["properties"]["id"]["pattern"] == r"^[a-z]{1,8}_[a-z2-7]{16,64}$"
    context = schema("recall_context")["properties"]
    assert (context["token_budget"]["minimum"], context["token_budget"]["maximum"]) == (
        MIN_CONTEXT_TOKENS,
        MAX_CONTEXT_TOKENS,
    )
    assert context["token_budget"]["default"] == DEFAULT_CONTEXT_TOKENS
    assert (context["query"]["minLength"], context["query"]["maxLength"]) == (1, MAX_QUERY_CHARS)
    assert search["kinds"]["items"]["enum"] == [k.value for k in MemoryKind]
    assert (search["min_confidence"]["minimum"], search["min_confidence"]["maximum"]) == (0, 1)
    outcome = schema("record_outcome")["properties"]
    assert outcome["kind"]["enum"] == ["success", "failure", "insight", "pattern"]
    assert outcome["context"]["maxLength"] == outcome["outcome"]["maxLength"] == MAX_EXPERIENCE_TEXT
    assert (outcome["confidence"]["minimum"], outcome["confidence"]["maximum"]) == (0, 1)
    feedback = schema("give_feedback")["properties"]
    assert feedback["outcome"]["enum"] == ["applied", "confirmed", "refuted"]
    assert feedback["note"]["maxLength"] == MAX_NOTE_CHARS
    assert feedback["memory_id"]["pattern"] == schema("forget")["properties"]["id"]["pattern"]


#: The contract's own definition of each tool argument: the request model (or type) it feeds, or
#: per argument the model (or type) its field is taken from.
CONTRACT: dict[str, Any] = {
    "search_memory": SearchRequest,
    "recall_context": ContextRequest,
    "remember": WriteItem,
    "forget": {"id": MemoryId},
    "search_knowledge": SearchRequest,
    "record_outcome": WriteItem,
    "give_feedback": {"memory_id": MemoryId, "outcome": FeedbackRequest, "note": FeedbackRequest},
}


def _experience_kinds_only(prop: dict[str, Any]) -> dict[str, Any]:
    return {**prop, "enum": [k for k in prop["enum"] if MemoryKind(k) in EXPERIENCE_KINDS]}


#: Arguments that take the contract's field narrowed, and how: `record_outcome` writes only the
#: kinds the domain calls experiences.
NARROWED = {("record_outcome", "kind"): _experience_kinds_only}


def _contract_property(tool: str, name: str) -> dict[str, Any]:
    source = CONTRACT[tool]
    if isinstance(source, dict):
        source = source[name]
    if isinstance(source, type) and issubclass(source, BaseModel):
        prop: dict[str, Any] = llm_schema(source)["properties"][name]
    else:
        prop = TypeAdapter(source).json_schema()
    prop = NARROWED.get((tool, name), lambda p: p)(prop)
    return {k: v for k, v in prop.items() if k not in ("description", "title")}


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_argument_schema_is_the_contracts_own_schema_of_that_field(tool: Any) -> None:
    """No schema is written twice by hand: each argument's schema (type, bounds, choices, default)
    is exactly what the contract's request model says of the field it feeds; only the description,
    written for an LLM, is the tool's own."""
    # WHEN / THEN
    assert set(CONTRACT) == {t.name for t in TOOLS}, "a new tool needs its contract model here"
    for name, prop in tool.input_schema["properties"].items():
        own = {k: v for k, v in prop.items() if k != "description"}
        assert own == _contract_property(tool.name, name), f"{tool.name}.{name} drifted from the contract"


#: Keywords that would state a constraint or a schema by hand instead of taking it from the contract.
_HAND_WRITTEN = {"ge", "gt", "le", "lt", "max_length", "min_length", "pattern", "multiple_of"} | {
    "json_schema_extra"
}
_SCHEMA_KEYS = {"type", "properties", "required", "enum", "maxLength", "minLength", "minimum", "maximum"}


#: Every module that defines or serves tools. `formats.py` is left out: it is the one place that
#: rewrites pydantic's schema keywords (and `test_nested_models_and_enums_are_inlined` covers it).
TOOL_MODULES = sorted(
    {*TOOLS_PACKAGE.glob("*.py"), TOOLS_PACKAGE.parent / "local" / "mcp_server.py"}
    - {TOOLS_PACKAGE / "formats.py"}
)


@pytest.mark.parametrize("module", TOOL_MODULES, ids=lambda p: p.name)
def test_no_tool_module_states_a_constraint_or_a_schema_of_its_own(module: Path) -> None:
    # GIVEN
    tree = ast.parse(module.read_text(encoding="utf-8"))
    # WHEN / THEN
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            stated = {kw.arg for kw in node.keywords} & _HAND_WRITTEN
            assert not stated, f"{module.name}:{node.lineno} states {stated} by hand"
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            # a dict shaped like a schema is one written by hand ("type" alone is a content block)
            assert len(keys & _SCHEMA_KEYS) < 2, f"{module.name}:{node.lineno} writes a schema by hand"


def test_the_three_formats_carry_the_same_definitions() -> None:
    # WHEN / THEN
    for bedrock, anthropic, openai, tool in zip(
        bedrock_tools(), anthropic_tools(), openai_tools(), TOOLS, strict=True
    ):
        assert bedrock == {
            "toolSpec": {
                "name": tool.name,
                "description": tool.description,
                "inputSchema": {"json": tool.input_schema},
            }
        }
        assert anthropic == {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
        assert openai == {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
        }


ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    ("search_memory", {}),
    ("search_memory", {"query": "launch", "grain": "weekly", "min_days_ago": 1, "max_days_ago": 7.5,
                       "max_results": 5}),
    ("search_memory", {"grain": "all"}),
    ("search_memory", {"grain": "hourly"}),
    ("search_memory", {"max_results": 0}),
    ("search_memory", {"max_results": MAX_RESULTS + 1}),
    ("search_memory", {"min_days_ago": -1}),
    ("search_memory", {"query": "x" * (MAX_QUERY_CHARS + 1)}),
    ("search_memory", {"limit": 3}),
    ("remember", {"content": "Alice prefers email."}),
    ("remember", {"content": "x", "topic": "t", "importance": 1, "ttl_days": 30}),
    ("remember", {"topic": "no content"}),
    ("remember", {"content": "x", "importance": 1.5}),
    ("remember", {"content": "x", "ttl_days": 0}),
    ("remember", {"content": "x", "kind": "fact"}),
    ("recall_context", {"query": "launch"}),
    ("recall_context", {"query": "launch", "token_budget": MIN_CONTEXT_TOKENS}),
    ("recall_context", {"query": "launch", "token_budget": MIN_CONTEXT_TOKENS - 1}),
    ("recall_context", {"query": "launch", "token_budget": MAX_CONTEXT_TOKENS + 1}),
    ("recall_context", {"query": ""}),
    ("recall_context", {"token_budget": 100}),
    ("recall_context", {"query": "launch", "grain": "daily"}),
    ("forget", {"id": "mem_abcdefghijklmnopqrstuvwxyz"}),
    ("forget", {"id": "../../etc"}),
    ("forget", {}),
    ("search_memory", {"query": "x", "sources": ["private", "shared"]}),
    ("search_memory", {"sources": []}),
    ("search_memory", {"sources": ["everything"]}),
    ("search_knowledge", {"query": "failover"}),
    ("search_knowledge", {"query": "failover", "tags": ["ops"], "max_results": 3}),
    ("search_knowledge", {}),
    ("search_knowledge", {"query": "x", "grain": "daily"}),
    ("search_memory", {"kinds": ["pattern", "insight"], "min_confidence": 0.7, "patterns_first": True}),
    ("search_memory", {"kinds": ["lesson"]}),
    ("search_memory", {"min_confidence": 1.5}),
    ("search_memory", {"patterns_first": "yes please"}),
    ("record_outcome", {"kind": "success", "content": "Batches of 100 avoid the timeout."}),
    ("record_outcome", {"kind": "pattern", "content": "x", "context": "upload", "outcome": "done",
                        "confidence": 0.9, "run_id": "run-42"}),
    ("record_outcome", {"kind": "fact", "content": "x"}),
    ("record_outcome", {"content": "no kind"}),
    ("record_outcome", {"kind": "failure"}),
    ("record_outcome", {"kind": "insight", "content": "x", "confidence": -0.1}),
    ("record_outcome", {"kind": "insight", "content": "x", "run_id": "has spaces"}),
    ("record_outcome", {"kind": "insight", "content": "x", "outcome": "y" * (MAX_EXPERIENCE_TEXT + 1)}),
    ("record_outcome", {"kind": "insight", "content": "x", "importance": 1}),
    ("give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz", "outcome": "confirmed"}),
    ("give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz", "outcome": "applied", "note": "ok"}),
    ("give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz", "outcome": "maybe"}),
    ("give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz"}),
    ("give_feedback", {"memory_id": "../etc", "outcome": "refuted"}),
    ("give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz", "outcome": "refuted",
                       "note": "n" * (MAX_NOTE_CHARS + 1)}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "arguments"), ARGUMENTS)
def test_the_schema_and_the_model_accept_and_refuse_the_same_arguments(
    name: str, arguments: dict[str, Any]
) -> None:
    # GIVEN
    tool = TOOLS_BY_NAME[name]
    schema_ok = Draft202012Validator(tool.input_schema).is_valid(arguments)
    # WHEN
    try:
        tool.args.model_validate(arguments)
        model_ok = True
    except ValidationError:
        model_ok = False
    # THEN
    assert schema_ok == model_ok


# --- the schema cleaner on shapes the tools do not use yet ---------------------------------------


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    colour: Colour
    shade: Colour | None = None


class Outer(BaseModel):
    """An outer model."""

    inner: Inner
    inners: list[Inner] = []
    name: str | None = None


class Node(BaseModel):
    children: list[Node] = []


def test_nested_models_and_enums_are_inlined() -> None:
    # GIVEN
    out = llm_schema(Outer)

    # WHEN
    Draft202012Validator.check_schema(out)
    # THEN
    assert "$ref" not in {k for k, _ in _walk(out)}
    assert out["properties"]["inner"]["properties"]["colour"] == {"type": "string", "enum": ["red", "blue"]}
    assert out["properties"]["inner"]["properties"]["shade"] == {"type": "string", "enum": ["red", "blue"]}
    assert out["properties"]["inners"]["items"]["required"] == ["colour"]
    assert out["properties"]["name"] == {"type": "string"}
    assert Draft202012Validator(out).is_valid({"inner": {"colour": "red"}, "inners": [{"colour": "blue"}]})
    assert not Draft202012Validator(out).is_valid({"inner": {"colour": "green"}})


def test_a_recursive_model_cannot_be_a_tool() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="recursive"):
        llm_schema(Node)
