"""Vectors, and the models that read text for search: the embedder that turns it into vectors,
and the optional reranker that scores candidates against a query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Matrix", "Reranker", "Vector"]


Vector = npt.NDArray[np.float32]


Matrix = npt.NDArray[np.float32]


@runtime_checkable
class Reranker(Protocol):
    """Re-scores search candidates against the query with a cross-encoder (a second opinion on
    relevance that reads query and memory together). Optional: none by default."""

    @property
    def model_id(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance in [0, 1] per document, in the documents' order."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Shape ``(len(texts), dimension)``, each row of unit length. Empty input, shape (0, dim)."""
        ...
