"""Run the tool calls an LLM makes, in any of the three APIs' shapes, and answer in the same shape.

    tools = MemoryTools(MemoryClient(url, api_key=key), agent_id="support-bot")
    results = tools.run_tool_calls(response["output"]["message"]["content"])  # Bedrock Converse
    messages.append({"role": "user", "content": results})

A failure the LLM can act on (invalid arguments, an unknown id, a throttled or unreachable
service) comes back as an *error result* with a readable message, not as an exception: the model
sees it and can correct itself. A block that is not a tool call at all is a programming error
and raises `ValueError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError

from agent_memory.client.api_errors import (
    ApiError,
    NotFoundError,
    TransportError,
    UnexpectedResponseError,
)
from agent_memory.tools import specs
from agent_memory.tools.formats import JsonObject

Format = Literal["bedrock", "anthropic", "openai"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any
    format: Format


@dataclass(frozen=True)
class ToolResult:
    call: ToolCall
    text: str
    is_error: bool = False

    def to_bedrock(self) -> JsonObject:
        """A ``toolResult`` content block for the next ``user`` message."""
        return {
            "toolResult": {
                "toolUseId": self.call.id,
                "content": [{"text": self.text}],
                "status": "error" if self.is_error else "success",
            }
        }

    def to_anthropic(self) -> JsonObject:
        """A ``tool_result`` content block for the next ``user`` message."""
        block: JsonObject = {"type": "tool_result", "tool_use_id": self.call.id, "content": self.text}
        if self.is_error:
            block["is_error"] = True
        return block

    def to_openai(self) -> JsonObject:
        """A ``tool`` role message (OpenAI has no error flag: the text says it)."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.text}

    def to_block(self) -> JsonObject:
        """The result in the format the call came in."""
        return {"bedrock": self.to_bedrock, "anthropic": self.to_anthropic, "openai": self.to_openai}[
            self.call.format
        ]()


def _as_dict(block: Any) -> Mapping[str, Any]:
    """SDK objects (Anthropic's ``ToolUseBlock``, OpenAI's tool call) as plain dicts."""
    if isinstance(block, Mapping):
        return block
    dump = getattr(block, "model_dump", None)
    if callable(dump):
        return dump()
    if hasattr(block, "__dict__"):
        return vars(block)
    raise ValueError(f"not a tool call: {block!r}")


def parse_tool_call(block: Any) -> ToolCall | None:
    """The tool call in one content block, or ``None`` for a block that is not one (text)."""
    data = _as_dict(block)
    if "toolUse" in data:  # Bedrock Converse content block
        data = _as_dict(data["toolUse"])
    if "toolUseId" in data:
        return ToolCall(str(data["toolUseId"]), str(data["name"]), data.get("input") or {}, "bedrock")
    if data.get("type") == "tool_use":
        return ToolCall(str(data["id"]), str(data["name"]), data.get("input") or {}, "anthropic")
    if "function" in data and data.get("type", "function") == "function":
        function = _as_dict(data["function"])
        return ToolCall(str(data["id"]), str(function["name"]), function.get("arguments") or {}, "openai")
    return None


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _validation_text(exc: ValidationError, schema: Mapping[str, Any]) -> str:
    """One short line per wrong argument; a choice names its options (pydantic's own message for a
    union such as ``Grain | "all"`` lists each branch and its internal type tags)."""
    by_field: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        field = str(error["loc"][0]) if error["loc"] else "arguments"
        by_field.setdefault(field, []).append(str(error["msg"]))
    problems = []
    for field, messages in by_field.items():
        choices = schema.get("properties", {}).get(field, {}).get("enum")
        if choices and len(messages) > 1:
            problems.append(f"{field}: must be one of {', '.join(map(str, choices))}")
        else:
            problems.append(f"{field}: {'; '.join(dict.fromkeys(messages))}")
    return "; ".join(problems)


class MemoryTools:
    """The memory tools of one agent (and optionally one end user), ready for an LLM loop."""

    def __init__(
        self,
        client: specs.MemoryApi,
        agent_id: str,
        *,
        user_id: str | None = None,
        tools: Sequence[specs.ToolSpec] = specs.TOOLS,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.context = specs.ToolContext(client, agent_id, user_id, clock)
        self.tools = tuple(tools)
        self._by_name = {t.name: t for t in self.tools}

    # --- definitions ----------------------------------------------------------------------------

    def bedrock(self) -> list[JsonObject]:
        return specs.bedrock_tools(self.tools)

    def anthropic(self) -> list[JsonObject]:
        return specs.anthropic_tools(self.tools)

    def openai(self) -> list[JsonObject]:
        return specs.openai_tools(self.tools)

    # --- execution ------------------------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> tuple[str, bool]:
        """Run one tool by name: ``(text, is_error)``."""
        tool = self._by_name.get(name)
        if tool is None:
            return f"Unknown tool {name!r}; the memory tools are: {', '.join(self._by_name)}.", True
        try:
            if isinstance(arguments, str):  # OpenAI sends the arguments as a JSON string
                arguments = json.loads(arguments) if arguments.strip() else {}
            args = tool.args.model_validate(arguments or {})
            return tool.run(self.context, args), False
        except json.JSONDecodeError as exc:
            return f"The arguments of {name} are not valid JSON: {exc.msg}.", True
        except ValidationError as exc:
            return f"Invalid arguments for {name}: {_validation_text(exc, tool.input_schema)}.", True
        except NotFoundError as exc:
            return f"Not found: {exc.message}. It may never have been stored, or is already forgotten.", True
        except ApiError as exc:
            details = "; ".join(f"{'.'.join(map(str, d.loc))}: {d.msg}" for d in exc.details)
            return f"The memory service refused {name}: {exc.message}" + (
                f" ({details})" if details else ""
            ), True
        except TransportError as exc:
            return f"The memory service is unreachable right now ({exc.message}); try again later.", True
        except UnexpectedResponseError as exc:  # a proxy's page, or a service of another version
            return f"The memory service gave an answer {name} cannot read (HTTP {exc.status}).", True

    def execute(self, call: ToolCall) -> ToolResult:
        text, is_error = self.call(call.name, call.arguments)
        return ToolResult(call, text, is_error)

    def handle(self, block: Any) -> JsonObject:
        """Run one tool-use block and return the result block in the same format."""
        call = parse_tool_call(block)
        if call is None:
            raise ValueError(f"not a tool-use block: {block!r}")
        return self.execute(call).to_block()

    def run_tool_calls(self, blocks: Iterable[Any] | None) -> list[JsonObject]:
        """Every tool call among ``blocks`` (a message's content, or OpenAI's ``tool_calls``), run
        in order; text and other blocks are skipped. Returns the result blocks to send back."""
        results = []
        for block in blocks or ():
            call = parse_tool_call(block)
            if call is not None:
                results.append(self.execute(call).to_block())
        return results
