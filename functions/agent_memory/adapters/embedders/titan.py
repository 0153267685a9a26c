"""Amazon Titan Text Embeddings v2 on Bedrock: the embedder of the AWS deployment.

Titan embeds one text per ``InvokeModel`` call, so a batch is fanned out over a small thread pool
(botocore clients are thread-safe). Botocore retries throttling and transient errors in adaptive
mode, which also slows the client down when Bedrock pushes back; what still fails after that is a
`DependencyError` (the write is retried later from the queue). Failures that no retry can fix, like
a model id without access, an unknown model, or a dimension the model does not give, are a
`ConfigurationError` naming the setting to change.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.bedrock_runtime import BedrockRuntime
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.ports import Matrix

DEFAULT_MODEL_ID = "amazon.titan-embed-text-v2:0"
#: The output sizes Titan v2 offers.
DIMENSIONS = (256, 512, 1024)
#: Titan v2 takes at most 8,192 tokens (and 50,000 characters). English runs at about 4-5
#: characters a token and dense text (code, numbers, non-Latin scripts) nearer 2-3, so 20,000
#: characters keep every text under the token limit; the tail of a longer text is not embedded.
MAX_INPUT_CHARS = 20_000

#: Errors that no retry will fix: the deployment is misconfigured (model access, model id,
#: request shape for that model). Everything else that survives botocore's retries is transient.
_CONFIGURATION_ERRORS = frozenset(
    {
        "AccessDeniedException",
        "ResourceNotFoundException",
        "ValidationException",
        "UnrecognizedClientException",
    }
)
_MAX_ATTEMPTS = 6


class BedrockTitanEmbedder:
    """Implements the `Embedder` port with Titan Text Embeddings v2 (``normalize: true``).

    ``client`` is a ``bedrock-runtime`` client; without one, a client for ``region`` (or the
    default region of the environment) is built on first use, with adaptive retries.
    """

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        dimension: int = 1024,
        client: Any | None = None,
        region: str | None = None,
        max_workers: int = 4,
    ) -> None:
        if dimension not in DIMENSIONS:
            raise ConfigurationError(
                f"Titan Text Embeddings v2 gives {', '.join(map(str, DIMENSIONS))} dimensions, "
                f"not {dimension}: set AGENT_MEMORY_EMBEDDING_DIMENSION to one of them"
            )
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self._model_id = model_id
        self._dimension = dimension
        self._max_workers = max_workers
        self._runtime = BedrockRuntime(
            client,
            region,
            read_timeout=30,
            max_attempts=_MAX_ATTEMPTS,
            max_pool_connections=max(10, max_workers),
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def client(self) -> Any:
        """The ``bedrock-runtime`` client, built on first use when none was injected."""
        return self._runtime.client

    def embed(self, texts: Sequence[str]) -> Matrix:
        if len(texts) == 0:
            return np.zeros((0, self._dimension), dtype=np.float32)
        for text in texts:
            if not text.strip():
                raise ValidationFailedError("cannot embed a blank text")
        client = self.client
        if len(texts) == 1 or self._max_workers == 1:
            rows = [self._embed_one(client, text) for text in texts]
        else:
            with ThreadPoolExecutor(max_workers=min(self._max_workers, len(texts))) as pool:
                rows = list(pool.map(lambda text: self._embed_one(client, text), texts))
        return np.stack(rows)

    def _embed_one(self, client: Any, text: str) -> np.ndarray:
        body = {"inputText": text[:MAX_INPUT_CHARS], "dimensions": self._dimension, "normalize": True}
        try:
            response = client.invoke_model(
                modelId=self._model_id,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            payload = response["body"].read()
        except ClientError as exc:
            raise self._map_client_error(exc) from exc
        except BotoCoreError as exc:  # connection failures and timeouts, after retries
            raise DependencyError(f"Bedrock is unreachable: {exc}") from exc
        return self._vector(payload)

    def _vector(self, payload: bytes) -> np.ndarray:
        try:
            answer = json.loads(payload)
        except ValueError as exc:  # a garbled answer: nothing about the setup says it will recur
            raise DependencyError(f"{self._model_id} answered with invalid JSON") from exc
        try:
            vector = np.asarray(answer["embedding"], dtype=np.float32)
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigurationError(
                f"{self._model_id} answered without a list of numbers in 'embedding': is it a Titan "
                "Text Embeddings v2 model? (AGENT_MEMORY_BEDROCK_EMBEDDING_MODEL_ID)"
            ) from exc
        if vector.shape != (self._dimension,):
            raise ConfigurationError(
                f"{self._model_id} returned a vector of shape {vector.shape}, expected "
                f"({self._dimension},): check AGENT_MEMORY_BEDROCK_EMBEDDING_MODEL_ID and "
                "AGENT_MEMORY_EMBEDDING_DIMENSION"
            )
        norm = float(np.linalg.norm(vector))
        if not math.isfinite(norm) or norm == 0.0:
            raise DependencyError(f"{self._model_id} returned a zero or non-finite vector")
        return vector / norm  # Titan normalises already; stay exact for float32 cosines

    def _map_client_error(self, exc: ClientError) -> Exception:
        code = exc.response.get("Error", {}).get("Code", "Unknown")
        message = exc.response.get("Error", {}).get("Message", "")
        details = [{"service": "bedrock-runtime", "code": code, "model_id": self._model_id}]
        if code in _CONFIGURATION_ERRORS:
            return ConfigurationError(f"Bedrock refused {self._model_id}: {code}: {message}", details)
        return DependencyError(f"Bedrock failed to embed: {code}: {message}", details)
