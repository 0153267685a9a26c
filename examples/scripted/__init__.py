"""Scripted stand-ins for a chat model, so that the examples run offline and the test suite can run
them: each answers with the next step of its script instead of asking a model provider. In your
agent, pass your model where an example passes one of these.

A step is what the model says next: a string (its answer to the user) or ``(tool, arguments)``
(a tool call). An argument ``"{id}"`` is replaced by the first memory id the last tool result
named, as a real model copies an id from a search result to forget it.
"""

from __future__ import annotations

import re
from typing import Any

Step = str | tuple[str, dict[str, Any]]

_MEMORY_ID = re.compile(r"\(id (\S+?)\)")


class Script:
    """The steps of one scripted model, taken in order."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)

    def next(self, last_tool_result: str) -> Step:
        """The next step, its ``"{id}"`` arguments filled from ``last_tool_result``."""
        step = self.steps.pop(0)
        if isinstance(step, str):
            return step
        name, arguments = step
        ids = _MEMORY_ID.findall(last_tool_result)
        return name, {k: ids[0] if v == "{id}" and ids else v for k, v in arguments.items()}
