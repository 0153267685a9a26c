"""Amazon Comprehend ``DetectPiiEntities``: the managed detector a tenant may add to the local one.

Comprehend finds what patterns cannot (a phone number written out in an unusual way, a password
stated in a sentence), at a price per character and one call per write; its findings join the
local engine's (`writing.rules.redaction.redact`), whose validators stay in force. Only the entity types
that map to a placeholder kind are kept (names and postal addresses are not redacted: a memory of
who said what needs them). Comprehend reads at most 100 KB of UTF-8 a call, so a longer text is
read in overlapping windows. Errors after botocore's retries are a `DependencyError`: the write is
then refused, never stored unredacted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.aws_clients import request_path_client
from agent_memory.errors import DependencyError
from agent_memory.writing.rules.redaction import PiiKind, Span

#: Comprehend's entity types that have a placeholder here.
KINDS: dict[str, PiiKind] = {
    "EMAIL": PiiKind.EMAIL,
    "PHONE": PiiKind.PHONE,
    "CREDIT_DEBIT_NUMBER": PiiKind.CARD,
    "INTERNATIONAL_BANK_ACCOUNT_NUMBER": PiiKind.IBAN,
    "IP_ADDRESS": PiiKind.IP,
    "PASSWORD": PiiKind.SECRET,
    "AWS_ACCESS_KEY": PiiKind.SECRET,
    "AWS_SECRET_KEY": PiiKind.SECRET,
    "PIN": PiiKind.SECRET,
    "CREDIT_DEBIT_CVV": PiiKind.SECRET,
}
#: Characters per call: 100 KB of UTF-8 holds at least 25,000 characters of any script.
WINDOW_CHARS = 24_000
#: Windows overlap by this many characters, so an entity across a border is whole in one of them.
OVERLAP_CHARS = 200
#: Findings below this confidence are left to the local engine.
MIN_SCORE = 0.5


class ComprehendPiiDetector:
    """`ports.pii.PiiDetector` on Amazon Comprehend (``comprehend:DetectPiiEntities``)."""

    def __init__(self, client: Any = None, region: str | None = None, language: str = "en") -> None:
        self._client = request_path_client("comprehend", region, client)
        self._language = language

    def detect(self, text: str) -> list[Span]:
        spans: list[Span] = []
        for offset in _windows(len(text)):
            window = text[offset : offset + WINDOW_CHARS]
            if not window.strip():
                continue
            try:
                response = self._client.detect_pii_entities(Text=window, LanguageCode=self._language)
            except (BotoCoreError, ClientError) as exc:
                raise DependencyError("the personal-data detector is unavailable") from exc
            for entity in response.get("Entities", []):
                kind = KINDS.get(entity.get("Type", ""))
                if kind is None or float(entity.get("Score", 0.0)) < MIN_SCORE:
                    continue
                start, end = int(entity["BeginOffset"]), int(entity["EndOffset"])
                spans.append(Span(kind, offset + start, offset + end))
        return spans


def _windows(length: int) -> Sequence[int]:
    """The start of each window over a text of ``length`` characters."""
    if length <= WINDOW_CHARS:
        return [0]
    step = WINDOW_CHARS - OVERLAP_CHARS
    return list(range(0, length - OVERLAP_CHARS, step))
