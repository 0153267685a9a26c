"""What every summarizer that calls a language model shares, whichever dialect it speaks.

The Bedrock summarizer (`converse`) and the OpenAI-compatible one (`openai_compatible_summarizer`)
differ in the request they send and how they read the answer, and in nothing else: each bounds an
answer by ``max_tokens``, takes at most ``max_input_chars`` of children per call (enough for two
full answers, or folding a large period in chunks could never shrink it), records the shared
prompt version, and reports the tokens the provider counted. That part is here, once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

from agent_memory.adapters.summarizers.prompts import PROMPT_VERSION
from agent_memory.errors import ConfigurationError
from agent_memory.ports import SummaryText

#: The longest answer, in tokens (~4 characters each in English): about 35 dated lines.
DEFAULT_MAX_TOKENS = 1_024
#: Characters of children per call. ~15,000 tokens: far inside every current model's context,
#: yet large enough that a normal day is one call; a busier one is folded in chunks.
DEFAULT_MAX_INPUT_CHARS = 60_000
#: Upper bound of characters per output token used to bound an answer's length in characters.
CHARS_PER_TOKEN_BOUND = 6


class ModelSummarizer(ABC):
    """The bounds and the answer of a `Summarizer` that calls a model; a subclass names the model
    (``model_id``) and makes the call."""

    def __init__(self, max_tokens: int, max_input_chars: int) -> None:
        if max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be positive, not {max_tokens}")
        if max_input_chars < 2 * max_tokens * CHARS_PER_TOKEN_BOUND:
            raise ConfigurationError(
                f"max_input_chars ({max_input_chars}) must hold at least two full answers "
                f"({2 * max_tokens * CHARS_PER_TOKEN_BOUND} characters), or folding in chunks cannot converge"
            )
        self._max_tokens = max_tokens
        self._max_input_chars = max_input_chars

    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @property
    def prompt_version(self) -> str:
        return PROMPT_VERSION

    @property
    def max_input_chars(self) -> int:
        return self._max_input_chars

    @property
    def max_output_chars(self) -> int:
        return self._max_tokens * CHARS_PER_TOKEN_BOUND

    def _summary(
        self, text: str, usage: Mapping[str, object], input_key: str, output_key: str
    ) -> SummaryText:
        """The answer ``text`` as a summary, with the tokens the provider counted under
        ``input_key`` and ``output_key`` in ``usage`` (0 where it counted none)."""
        return SummaryText(
            text=text,
            model_id=self.model_id,
            prompt_version=PROMPT_VERSION,
            input_tokens=_count(usage.get(input_key)),
            output_tokens=_count(usage.get(output_key)),
        )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
