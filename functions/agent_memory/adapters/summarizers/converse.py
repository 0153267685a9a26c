"""Summaries from a model on Amazon Bedrock, through the Converse API.

One ``converse`` call per summary (or per chunk, when the cascade folds a large period in parts),
at temperature 0 so a re-run of unchanged children says the same thing, with ``maxTokens`` as the
hard bound on the answer. The grain's prompt (`prompts`) is the system prompt; the children are
the user message.

Failures, from most to least likely:

* **Throttling.** The client retries in botocore's adaptive mode (which also slows the client down
  when Bedrock pushes back); a ``ThrottlingException`` that survives those retries is retried here
  with exponential backoff and full jitter, a few more times, because a summarize job has minutes,
  not milliseconds. Still throttled: `DependencyError`, and the queue retries the job later.
* **The model or the service is unwell** (timeouts, 5xx, model not ready): `DependencyError`.
* **The deployment is wrong** (no model access, unknown model id, a request the model refuses):
  `ConfigurationError` naming the setting.
* **A malformed answer** (no text block, an empty text, a stop for content filtering): a
  `DependencyError` that says what was missing. It is not a configuration error: the same
  request usually succeeds when the job is retried.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.bedrock_runtime import BedrockRuntime
from agent_memory.adapters.summarizers.model_summarizer import (
    CHARS_PER_TOKEN_BOUND,
    DEFAULT_MAX_INPUT_CHARS,
    DEFAULT_MAX_TOKENS,
    ModelSummarizer,
)
from agent_memory.adapters.summarizers.prompts import prompts_for
from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.ports import SummaryRequest, SummaryText

logger = logging.getLogger(__name__)

__all__ = ["CHARS_PER_TOKEN_BOUND", "DEFAULT_MAX_INPUT_CHARS", "DEFAULT_MAX_TOKENS", "BedrockSummarizer"]

DEFAULT_MODEL_ID = "anthropic.claude-3-haiku-20240307-v1:0"

_CONFIGURATION_ERRORS = frozenset(
    {
        "AccessDeniedException",
        "ResourceNotFoundException",
        "ValidationException",
        "UnrecognizedClientException",
    }
)
_THROTTLED = "ThrottlingException"
_REFUSED_STOPS = frozenset({"content_filtered", "guardrail_intervened"})


class BedrockSummarizer(ModelSummarizer):
    """Implements the `Summarizer` port with the Bedrock Converse API.

    ``client`` is a ``bedrock-runtime`` client; without one, a client for ``region`` is built on
    first use with adaptive retries. ``sleep`` and ``rng`` are injectable so tests run the
    backoff without waiting.
    """

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        client: Any | None = None,
        region: str | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
        throttle_retries: int = 4,
        backoff_s: float = 2.0,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(max_tokens, max_input_chars)
        self._model_id = model_id
        # a long summary takes a while to generate
        self._runtime = BedrockRuntime(client, region, read_timeout=120, max_attempts=4)
        self._throttle_retries = throttle_retries
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._sleep = sleep
        self._rng = rng or random.Random()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def client(self) -> Any:
        return self._runtime.client

    def request(self, summary: SummaryRequest) -> dict[str, Any]:
        """The ``converse`` parameters for one summary (public: tests and cost estimates read it)."""
        system, user = prompts_for(summary)
        return {
            "modelId": self._model_id,
            "system": [{"text": system}],
            "messages": [{"role": "user", "content": [{"text": user}]}],
            "inferenceConfig": {"temperature": 0.0, "maxTokens": self._max_tokens},
        }

    def summarize(self, request: SummaryRequest) -> SummaryText:
        response = self._converse(self.request(request))
        text = self._text(response)
        return self._summary(text, response.get("usage") or {}, "inputTokens", "outputTokens")

    def _converse(self, params: dict[str, Any]) -> dict[str, Any]:
        client = self.client
        for attempt in range(self._throttle_retries + 1):
            try:
                response: dict[str, Any] = client.converse(**params)
                return response
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "Unknown")
                if code == _THROTTLED and attempt < self._throttle_retries:
                    delay = self._rng.uniform(0, min(self._max_backoff_s, self._backoff_s * 2**attempt))
                    logger.warning("Bedrock throttled a summary; retrying in %.1f s", delay)
                    self._sleep(delay)
                    continue
                raise self._map_client_error(exc, code) from exc
            except BotoCoreError as exc:  # connection failures and timeouts, after retries
                raise DependencyError(f"Bedrock is unreachable: {exc}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _text(self, response: dict[str, Any]) -> str:
        stop = response.get("stopReason")
        if stop in _REFUSED_STOPS:
            raise DependencyError(f"{self._model_id} stopped without a summary: stopReason {stop!r}")
        output = response.get("output")
        message = output.get("message") if isinstance(output, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            raise DependencyError(
                f"{self._model_id} returned a malformed Converse response: no output.message.content list"
            )
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        text = "\n".join(t.strip() for t in texts if t.strip())
        if not text:
            raise DependencyError(
                f"{self._model_id} returned a malformed Converse response: no text in output.message.content"
            )
        if stop == "max_tokens":
            logger.warning("a summary reached maxTokens (%d) and was cut", self._max_tokens)
        return text

    def _map_client_error(self, exc: ClientError, code: str) -> Exception:
        message = exc.response.get("Error", {}).get("Message", "")
        details = [{"service": "bedrock-runtime", "code": code, "model_id": self._model_id}]
        if code in _CONFIGURATION_ERRORS:
            return ConfigurationError(
                f"Bedrock refused {self._model_id}: {code}: {message} "
                "(check model access and AGENT_MEMORY_BEDROCK_SUMMARY_MODEL_ID)",
                details,
            )
        if code == _THROTTLED:
            return DependencyError(f"Bedrock kept throttling summaries: {message}", details)
        return DependencyError(f"Bedrock failed to summarize: {code}: {message}", details)
