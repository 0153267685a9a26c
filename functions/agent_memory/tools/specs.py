"""The memory tools: each is an argument model (its schema and description) and a function that
runs it against the client and returns the text the LLM reads.

Adding a tool is one argument model in `tools.models`, one function here and one `ToolSpec` in
`TOOLS`; every format (Bedrock, Anthropic, OpenAI, MCP) and the dispatcher pick it up from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, Protocol

from pydantic import BaseModel

from agent_memory.contract.v1 import ContextResponse, ForgetResponse, SearchResponse, WriteResponse
from agent_memory.contract.v1_experience import FeedbackResponse
from agent_memory.experience.rules.confidence import DEFAULT_CONFIDENCE, FeedbackOutcome
from agent_memory.model.grains import Grain
from agent_memory.tools.formats import (
    JsonObject,
    anthropic_tool,
    bedrock_tool,
    llm_schema,
    openai_tool,
    tool_description,
)
from agent_memory.tools.models import (
    ForgetArgs,
    GiveFeedbackArgs,
    RecallContextArgs,
    RecordOutcomeArgs,
    RememberArgs,
    SearchKnowledgeArgs,
    SearchMemoryArgs,
)
from agent_memory.tools.text import (
    MEMORY_ONLY,
    context_text,
    date_label,
    experience_label,
    filters_text,
    knowledge_results_text,
    memory_line,
    search_results_text,
    window_text,
)


class MemoryApi(Protocol):
    """What the tools need of the client (`agent_memory.client.MemoryClient` is one)."""

    def search(self, agent_id: str, query: Any = None, **fields: Any) -> SearchResponse: ...

    def context(self, agent_id: str, query: Any, /, **fields: Any) -> ContextResponse: ...

    def write(self, agent_id: str, items: Sequence[Any]) -> WriteResponse: ...

    def forget(self, agent_id: str, memory_id: str) -> ForgetResponse: ...

    def feedback(
        self, agent_id: str, memory_id: str, outcome: Any, note: str | None = None
    ) -> FeedbackResponse: ...


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ToolContext:
    """Whose memory the tools act on: the LLM chooses arguments, never the agent or the user."""

    client: MemoryApi
    agent_id: str
    user_id: str | None = None
    clock: Callable[[], datetime] = field(default=_utcnow)


@dataclass(frozen=True)
class ToolSpec:
    args: type[BaseModel]
    run: Callable[[ToolContext, Any], str]

    @property
    def name(self) -> str:
        return self.args.__name__

    @property
    def description(self) -> str:
        return tool_description(self.args)

    @cached_property
    def input_schema(self) -> JsonObject:
        return llm_schema(self.args)


def search_memory(ctx: ToolContext, args: Any) -> str:
    fields: dict[str, Any] = args.model_dump(exclude_none=True)
    if ctx.user_id is not None:
        fields["user_id"] = ctx.user_id
    response = ctx.client.search(ctx.agent_id, **fields)
    window = window_text(str(args.grain), args.min_days_ago, args.max_days_ago)
    window += filters_text(args.kinds, args.min_confidence, args.patterns_first)
    return search_results_text(response.results, window, args.sources or MEMORY_ONLY)


def search_knowledge(ctx: ToolContext, args: Any) -> str:
    """Shared knowledge only. No user is passed: knowledge is the tenant's, the same for every
    end user, and the user filter narrows memories alone."""
    fields: dict[str, Any] = {**args.model_dump(exclude_none=True), "sources": ["shared"]}
    response = ctx.client.search(ctx.agent_id, **fields)
    return knowledge_results_text(response.results, args.query, args.tags)


def recall_context(ctx: ToolContext, args: Any) -> str:
    fields: dict[str, Any] = args.model_dump(exclude_none=True)
    if ctx.user_id is not None:
        fields["user_id"] = ctx.user_id
    query = fields.pop("query")
    return context_text(query, ctx.client.context(ctx.agent_id, query, **fields))


def remember(ctx: ToolContext, args: Any) -> str:
    now = ctx.clock()
    item: dict[str, Any] = {**args.model_dump(exclude_none=True), "occurred_at": now}
    if ctx.user_id is not None:
        item["user_id"] = ctx.user_id
    [accepted] = ctx.client.write(ctx.agent_id, [item]).accepted
    line = memory_line(Grain.WORKING.value, date_label(None, now), args.content, accepted.id)
    return f"Remembered (searchable within seconds):\n{line}"


def record_outcome(ctx: ToolContext, args: Any) -> str:
    """An experience is written like any memory (one item, dated by the clock, for the bound
    user); the line shows the confidence it starts with."""
    now = ctx.clock()
    item: dict[str, Any] = {**args.model_dump(exclude_none=True), "occurred_at": now}
    if ctx.user_id is not None:
        item["user_id"] = ctx.user_id
    [accepted] = ctx.client.write(ctx.agent_id, [item]).accepted
    confidence = DEFAULT_CONFIDENCE if args.confidence is None else args.confidence
    label = experience_label(args.kind, confidence)
    line = memory_line(Grain.WORKING.value, date_label(None, now), args.content, accepted.id, detail=label)
    return f"Recorded (searchable within seconds):\n{line}"


#: What each outcome does to the experience's confidence, as the result tells the model.
FEEDBACK_EFFECTS: Mapping[FeedbackOutcome, str] = {
    FeedbackOutcome.APPLIED: "counted as applied; its confidence stays as it is until confirmed or refuted",
    FeedbackOutcome.CONFIRMED: "its confidence rises",
    FeedbackOutcome.REFUTED: "its confidence falls",
}


def give_feedback(ctx: ToolContext, args: Any) -> str:
    response = ctx.client.feedback(ctx.agent_id, args.memory_id, args.outcome, args.note)
    outcome = FeedbackOutcome(response.outcome)
    effect = FEEDBACK_EFFECTS[outcome]
    return f"Feedback on {response.id}: {outcome.value}, {effect} (counted within a second)."


def forget(ctx: ToolContext, args: Any) -> str:
    forgotten = ctx.client.forget(ctx.agent_id, args.id)
    text = f"Forgot {forgotten.id}: it will not be returned by search again."
    if stale := len(forgotten.stale_summaries):
        noun = "summary" if stale == 1 else "summaries"
        text += f" {stale} {noun} made from it will be re-made without it."
    return text


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(SearchMemoryArgs, search_memory),
    ToolSpec(RecallContextArgs, recall_context),
    ToolSpec(RememberArgs, remember),
    ToolSpec(ForgetArgs, forget),
    ToolSpec(SearchKnowledgeArgs, search_knowledge),
    ToolSpec(RecordOutcomeArgs, record_outcome),
    ToolSpec(GiveFeedbackArgs, give_feedback),
)
TOOLS_BY_NAME: Mapping[str, ToolSpec] = {t.name: t for t in TOOLS}


def bedrock_tools(tools: Sequence[ToolSpec] = TOOLS) -> list[JsonObject]:
    """For ``converse(toolConfig={"tools": bedrock_tools()})``."""
    return [bedrock_tool(t.name, t.description, t.input_schema) for t in tools]


def anthropic_tools(tools: Sequence[ToolSpec] = TOOLS) -> list[JsonObject]:
    """For ``messages.create(tools=anthropic_tools())``."""
    return [anthropic_tool(t.name, t.description, t.input_schema) for t in tools]


def openai_tools(tools: Sequence[ToolSpec] = TOOLS) -> list[JsonObject]:
    """For ``chat.completions.create(tools=openai_tools())``."""
    return [openai_tool(t.name, t.description, t.input_schema) for t in tools]
