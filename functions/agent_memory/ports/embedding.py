"""Vectors, and the models that read text: the embedder that turns it into vectors, the optional
reranker that scores candidates against a query, and the optional judges that read two statements
together (the update judge on write, the answer judge with a search's question)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["AnswerJudge", "Embedder", "Matrix", "Reranker", "UpdateJudge", "Vector"]


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


@runtime_checkable
class UpdateJudge(Protocol):
    """Reads an older and a newer statement of one person together and says how likely the newer
    one replaces a value the older one stated ("I'm on the renal ward" -> "transferred to ICU"),
    rather than restating it, adding a second value beside it or saying another thing of the same
    topic. Optional: without one, supersession by meaning follows its nearness rules."""

    @property
    def model_id(self) -> str: ...

    def replaces(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability in [0, 1] per (older, newer) pair, in the pairs' order."""
        ...


@runtime_checkable
class AnswerJudge(Protocol):
    """Reads a question and two statements of one person together and says how likely the newer
    one is what the question should be answered with now, the older one no longer ("How do I get
    to work?": "I take bus 31 to work" -> "Picked up the e-bike, rode in to the office"). Optional:
    without one, a search orders what it found by its rules alone."""

    @property
    def model_id(self) -> str: ...

    def answers(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability in [0, 1] per (older, newer) pair, in the pairs' order."""
        ...
