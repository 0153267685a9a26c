"""Embeddings from any OpenAI-compatible API: a hosted provider, or a self-hosted server (vLLM,
Ollama, LM Studio) that a tenant or an operator already runs.

One ``POST {endpoint}/embeddings`` per batch of texts. The answer is read defensively because
"compatible" servers differ in the details: items are put back in order by their ``index`` (a
server may answer out of order), every row is L2-normalised here (not every model normalises, and
the store's cosines assume unit vectors), and a vector of the wrong length is a
`ConfigurationError` naming both lengths, before it can reach an index built for another size.

The model id names the endpoint's host as well as the model: the same model name served by two
servers (or two quantisations of it) need not give the same vectors, and a change of either must
read as a change of embedding space. Statuses, retries and the secrecy of the key are the client's
(`agent_memory.adapters.openai_http`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from agent_memory.adapters.openai_http import OpenAICompatibleClient
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.ports import Matrix

#: Texts per request: under every provider's per-request limit (OpenAI takes 2,048 inputs).
DEFAULT_BATCH_SIZE = 64
#: Characters per text. Embedding models take 512 to 8,192 tokens and servers differ in whether
#: they truncate or refuse a longer input; 20,000 characters stay under 8,192 tokens even for
#: dense text. A server with a smaller context needs a smaller bound (or truncation on its side).
DEFAULT_MAX_INPUT_CHARS = 20_000


class OpenAICompatibleEmbedder:
    """Implements the `Embedder` port with ``POST /embeddings`` of an OpenAI-compatible API.

    ``dimension`` is the length the model gives; with ``send_dimensions`` it is also asked for
    (``"dimensions"``, for models that can shorten their vectors, like OpenAI's
    ``text-embedding-3-*``; many servers refuse the field, so it is off by default).
    """

    def __init__(
        self,
        client: OpenAICompatibleClient,
        model: str,
        dimension: int,
        send_dimensions: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
    ) -> None:
        if not model.strip():
            raise ConfigurationError(f"an embedding model name is required for {client.host}")
        if dimension < 1:
            raise ConfigurationError(f"the embedding dimension must be positive, not {dimension}")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be positive, not {batch_size}")
        if max_input_chars < 1:
            raise ConfigurationError(f"max_input_chars must be positive, not {max_input_chars}")
        self._client = client
        self._model = model
        self._dimension = dimension
        #: What every request sends beside the model and the texts.
        self._options: dict[str, Any] = {"dimensions": dimension} if send_dimensions else {}
        self._batch_size = batch_size
        self._max_input_chars = max_input_chars

    @property
    def model_id(self) -> str:
        return f"openai:{self._client.host}/{self._model}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Matrix:
        if len(texts) == 0:
            return np.zeros((0, self._dimension), dtype=np.float32)
        for text in texts:
            if not text.strip():  # providers refuse an empty input with a 400
                raise ValidationFailedError("cannot embed a blank text")
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return np.stack(rows).astype(np.float32, copy=False)

    def request(self, texts: Sequence[str]) -> dict[str, Any]:
        """The ``/embeddings`` payload for one batch (public: tests and cost estimates read it)."""
        return {
            "model": self._model,
            "input": [text[: self._max_input_chars] for text in texts],
            **self._options,
        }

    def _embed_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        answer = self._client.post_json("/embeddings", self.request(texts))
        data = answer.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            got = len(data) if isinstance(data, list) else "no"
            raise self._malformed(f"{got} items in 'data' for {len(texts)} inputs")
        by_index: dict[int, np.ndarray] = {}
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(texts):
                raise self._malformed("an item without a valid 'index'")
            if index in by_index:
                raise self._malformed(f"index {index} twice")
            by_index[index] = self._vector(item.get("embedding"))
        return [by_index[i] for i in range(len(texts))]

    def _vector(self, embedding: object) -> np.ndarray:
        if not isinstance(embedding, list):
            raise self._malformed("an item without a list of numbers in 'embedding'")
        try:
            vector = np.asarray(embedding, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise self._malformed("an item without a list of numbers in 'embedding'") from exc
        if vector.ndim != 1:
            raise self._malformed("an 'embedding' that is not a flat list of numbers")
        if vector.shape[0] != self._dimension:
            raise ConfigurationError(
                f"{self._model} at {self._client.host} returned vectors of {vector.shape[0]} "
                f"dimensions, expected {self._dimension}: set the embedding dimension to "
                f"{vector.shape[0]}, or choose a model that gives {self._dimension}"
            )
        norm = float(np.linalg.norm(vector))
        if not math.isfinite(norm) or norm == 0.0:
            raise DependencyError(
                f"{self._model} at {self._client.host} returned a zero or non-finite vector"
            )
        return vector / norm

    def _malformed(self, what: str) -> ConfigurationError:
        return ConfigurationError(
            f"{self._model} at {self._client.host} answered /embeddings with {what}: "
            "is it an OpenAI-compatible embeddings endpoint and an embedding model?"
        )
