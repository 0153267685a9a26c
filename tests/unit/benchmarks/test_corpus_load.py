"""The benchmarks' direct store loader (benchmarks/_corpus.py `load_memories`): the background
memories a benchmark searches are stored with the vectors the writer would give them (words and
setting composed, `tenancy.models.record_vectors`), each distinct text embedded once."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import _corpus
from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.ports import Matrix
from agent_memory.tenancy.models import record_vectors


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts += texts
        return super().embed(texts)


class KeptStore:
    def __init__(self) -> None:
        self.stored: list[Any] = []

    def put(self, records: Sequence[Any]) -> None:
        self.stored += records


def test_loaded_memories_carry_the_writers_vectors_each_text_embedded_once() -> None:
    # GIVEN 40 generated memories (a few speakers and days among them)
    memories = _corpus.generate_memories(40, seed=_corpus.DEFAULT_SEED)
    embedder, store = CountingEmbedder(), KeptStore()

    # WHEN they are loaded straight into a store
    _corpus.load_memories(store, embedder, memories, "bench", "agent")

    # THEN each is stored with the vector the writer composes for its record
    records = [s.record for s in store.stored]
    assert len(records) == 40
    expected = record_vectors(HashingEmbedder(), records)
    for stored, vector in zip(store.stored, expected, strict=True):
        assert np.allclose(stored.vector, vector, atol=1e-6)
    # AND no text went to the model twice (the warm-up aside)
    loaded = embedder.texts[1:]
    assert len(loaded) == len(set(loaded))
