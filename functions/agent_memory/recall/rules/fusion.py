"""Fusion: how a store's two hit lists become one list of candidates, the one rule both stores follow.

A module of its own, apart from the ranking's rules (`recall.rules.ranking`), because the stores
apply it, not the service: each adapter fuses its vector and lexical hits by it before anything is
ranked, so every backend hands over the same evidence, and imports only this.

A store finds up to ``limit`` nearest neighbours of the query vector (with their cosines) and up
to ``limit`` lexical hits (with their engine's raw scores: BM25 in OpenSearch, higher is better;
FTS5's ``bm25()``, lower is better). The service ranks what the store returns (*Scoring* in
`recall.rules.ranking`); the store only has to hand over the same evidence in the same order on
every backend:

- **Order:** the vector hits in vector order, then the lexical-only hits in lexical order.
- **Lexical scores** are divided by the best hit's, so the top lexical hit scores 1.0 and the rest
  lie in (0, 1] whichever direction the engine counts.
- **Cosines** are filled in for the lexical-only hits when the query has a vector, so every
  candidate carries one (a record that has no vector any more is dropped).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def scaled_to_best(raw: Mapping[K, float]) -> dict[K, float]:
    """Each score divided by the best one (the largest in magnitude): the best scores 1.0."""
    best = max(raw.values(), key=abs, default=0.0)
    return {key: (score / best if best != 0 else 1.0) for key, score in raw.items()}


def fused_order(vector_hits: Sequence[K], lexical_hits: Sequence[K]) -> list[K]:
    """Vector hits first, in their order, then the lexical hits the vector search did not find."""
    seen = set(vector_hits)
    return [*vector_hits, *(key for key in lexical_hits if key not in seen)]


def lacking_cosine(order: Sequence[K], similarity: Mapping[K, float]) -> list[K]:
    """The candidates whose cosine the store still has to compute (the lexical-only hits)."""
    return [key for key in order if key not in similarity]
