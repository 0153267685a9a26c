"""A scripted model for the OpenAI Agents SDK (in place of e.g. ``model="gpt-5"``)."""

from __future__ import annotations

import json
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from scripted import Script, Step


class ScriptedModel(Model):
    """Answers each call with the next step of its script."""

    def __init__(self, *steps: Step) -> None:
        self.script = Script(*steps)

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        results = [
            i["output"] for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        step = self.script.next(str(results[-1]) if results else "")
        output: Any
        if isinstance(step, tuple):
            output = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{len(input)}",
                name=step[0],
                arguments=json.dumps(step[1]),
            )
        else:
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            output = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
