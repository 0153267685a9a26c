"""A scripted LLM for LlamaIndex (in place of e.g. ``OpenAI(model="gpt-5")``): LlamaIndex's own
function-calling mock, answering with the steps of a script."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM

from scripted import Script, Step


def scripted_llm(*steps: Step) -> MockFunctionCallingLLM:
    """An LLM that answers each chat with the next step of its script."""
    script = Script(*steps)

    def answer(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        results = [m.content or "" for m in messages if m.role == MessageRole.TOOL]
        step = script.next(results[-1] if results else "")
        if isinstance(step, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=step)
        call = ToolCallBlock(tool_call_id=f"call_{len(messages)}", tool_name=step[0], tool_kwargs=step[1])
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])

    return MockFunctionCallingLLM(response_generator=answer)
