"""Port of a managed personal-data detector (Amazon Comprehend in AWS), beside the local engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent_memory.writing.rules.redaction import Span


class PiiDetector(Protocol):
    """Finds personal data in a text, as spans of `writing.rules.redaction`'s kinds.

    What it finds is added to the local engine's findings (`writing.rules.redaction.redact`), never used
    instead of them. `DependencyError` when the service cannot be reached: a write is then
    refused (503) rather than stored unredacted.
    """

    def detect(self, text: str) -> Sequence[Span]: ...
