"""A scripted model for Strands Agents (in place of e.g. ``BedrockModel(model_id=...)``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from strands.models.model import Model

from scripted import Script, Step


class ScriptedModel(Model):
    """Streams each call's answer from the next step of its script."""

    def __init__(self, *steps: Step) -> None:
        self.script = Script(*steps)

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        results = [
            part["text"]
            for message in messages
            for block in message["content"]
            if "toolResult" in block
            for part in block["toolResult"]["content"]
            if "text" in part
        ]
        step = self.script.next(results[-1] if results else "")
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, tuple):
            start = {"toolUse": {"name": step[0], "toolUseId": f"call_{len(messages)}"}}
            yield {"contentBlockStart": {"start": start}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(step[1])}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": step}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
