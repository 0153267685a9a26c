"""Summaries from any OpenAI-compatible chat model: a hosted provider, or a self-hosted server
(vLLM, Ollama, LM Studio) that a tenant or an operator already runs.

The same call as the Bedrock summarizer (`converse`), in the other dialect: one
``POST {endpoint}/chat/completions`` per summary (or per chunk), the grain's prompt (`prompts`) as
the system message and the children as the user message, at temperature 0 so a re-run of
unchanged children says the same thing, with ``max_tokens`` as the hard bound on the answer. The
prompt version is the shared one, so a summary records the same version whichever model made it.

Statuses, retries and the secrecy of the key are the client's (`agent_memory.adapters.openai_http`).
A malformed answer (no choice, no text, a stop for content filtering) is a `DependencyError`, as
in `converse`: the same request usually succeeds when the queue retries the job. A summary takes
a while to generate: give this summarizer a client with a generous timeout (a minute or two).
"""

from __future__ import annotations

import logging
from typing import Any

from agent_memory.adapters.openai_http import OpenAICompatibleClient
from agent_memory.adapters.summarizers.model_summarizer import (
    DEFAULT_MAX_INPUT_CHARS,
    DEFAULT_MAX_TOKENS,
    ModelSummarizer,
)
from agent_memory.adapters.summarizers.prompts import prompts_for
from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.ports import SummaryRequest, SummaryText

logger = logging.getLogger(__name__)

_REFUSED_FINISHES = frozenset({"content_filter"})


class OpenAICompatibleSummarizer(ModelSummarizer):
    """Implements the `Summarizer` port with ``POST /chat/completions`` of an OpenAI-compatible API."""

    def __init__(
        self,
        client: OpenAICompatibleClient,
        model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
    ) -> None:
        if not model.strip():
            raise ConfigurationError(f"a summary model name is required for {client.host}")
        super().__init__(max_tokens, max_input_chars)
        self._client = client
        self._model = model

    @property
    def model_id(self) -> str:
        return f"openai:{self._client.host}/{self._model}"

    def request(self, summary: SummaryRequest) -> dict[str, Any]:
        """The ``/chat/completions`` payload for one summary (public: tests and cost estimates read it)."""
        system, user = prompts_for(summary)
        return {
            "model": self._model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": self._max_tokens,
        }

    def summarize(self, request: SummaryRequest) -> SummaryText:
        answer = self._client.post_json("/chat/completions", self.request(request))
        text = self._text(answer)
        usage = answer.get("usage")
        return self._summary(
            text, usage if isinstance(usage, dict) else {}, "prompt_tokens", "completion_tokens"
        )

    def _text(self, answer: dict[str, Any]) -> str:
        choices = answer.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            raise self._malformed("no choices")
        finish = choice.get("finish_reason")
        if finish in _REFUSED_FINISHES:
            raise DependencyError(
                f"{self._model} at {self._client.host} stopped without a summary: finish_reason {finish!r}"
            )
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts, as some servers answer
            content = "\n".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        text = content.strip() if isinstance(content, str) else ""
        if not text:
            raise self._malformed("no text in choices[0].message.content")
        if finish == "length":
            logger.warning("a summary reached max_tokens (%d) and was cut", self._max_tokens)
        return text

    def _malformed(self, what: str) -> DependencyError:
        return DependencyError(
            f"{self._model} at {self._client.host} returned a malformed chat completion: {what}"
        )
