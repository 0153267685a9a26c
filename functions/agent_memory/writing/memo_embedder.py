"""Each distinct text embedded once: the writer's memo of text → vector.

The writer needs several texts of one write embedded (its own words, its setting and the earlier
turns' words its vector is composed from: `writing.rules.contextual.vector_texts`), and the same texts
again when a later turn's context, near-duplicate check or statement comparison asks for them.
Asked one at a time, that is many small model calls; on a CPU model most of a small call is
overhead, and on Bedrock every text is a request. So the writer asks for every text a batch of
messages needs in one call (`MemoEmbedder.prefetch`: the model batches them in its best shape,
Titan fans them out over its thread pool), and every later ask of one of those texts, in that batch
or a later one, is answered from the memo. Vectors are a function of the model and the text, so the
memo never answers with a stale vector; it keeps the most recently used `KEPT_TEXTS` (a few MB) per
model. It is shared by the writer's thread and the thread a large batch is embedded on
(`WriterService.prepare`), so its table is read and changed under a lock, never held through a
model call: two threads may at worst embed one text twice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from agent_memory.ports import Embedder, Matrix, Vector

#: Texts (and their vectors) kept per model: a batch's texts and the recent writes a new write is
#: compared with (384 floats each: 4,096 are 6 MB).
KEPT_TEXTS = 4096
#: Models a writer keeps memos for (a tenant may bring its own).
KEPT_MODELS = 8


class MemoEmbedder:
    """An `Embedder` that embeds only the texts it has not embedded recently, each once."""

    def __init__(self, inner: Embedder, kept: int = KEPT_TEXTS) -> None:
        self._inner = inner
        self._kept = kept
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()
        #: Texts sent to the model and model calls made (benchmarks and tests read them).
        self.embedded = 0
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def holds(self, text: str) -> bool:
        """Whether ``text`` would be answered without a model call (now)."""
        with self._lock:
            return text in self._vectors

    def prefetch(self, texts: Sequence[str]) -> dict[str, Vector]:
        """Embed, in one call, every text of ``texts`` the memo does not hold yet (returned)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if not missing:
            return {}
        vectors = self._inner.embed(missing)
        made = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, vectors, strict=True)}
        with self._lock:
            self.calls += 1
            self.embedded += len(missing)
            self._vectors.update(made)
            self._trim(len(missing))
        return made

    def embed(self, texts: Sequence[str]) -> Matrix:
        made = self.prefetch(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            found = {
                t: v
                for t in dict.fromkeys(texts)
                if (v := made[t] if t in made else self._recalled(t)) is not None
            }
        lost = [t for t in dict.fromkeys(texts) if t not in found]
        if lost:  # dropped for the other thread's texts since they were embedded (a huge batch)
            found.update(zip(lost, np.asarray(self._inner.embed(lost), dtype=np.float32), strict=True))
        return np.stack([found[t] for t in texts])

    def _recalled(self, text: str) -> Vector | None:
        vector = self._vectors.get(text)
        if vector is not None:
            self._vectors.move_to_end(text)
        return vector

    def _trim(self, fresh: int) -> None:
        """Forget the least recently used texts beyond `KEPT_TEXTS`, never those just made (a
        batch larger than the memo is answered whole)."""
        while len(self._vectors) > max(self._kept, fresh):
            self._vectors.popitem(last=False)


class Memos:
    """One `MemoEmbedder` per embedder (a tenant's own model is its own embedder, with its own
    key: never answered by another tenant's calls), the least recently used dropped beyond
    `KEPT_MODELS`."""

    def __init__(self, kept: int = KEPT_MODELS) -> None:
        self._kept = kept
        self._memos: OrderedDict[int, MemoEmbedder] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, embedder: Embedder) -> MemoEmbedder:
        """The memo of ``embedder`` (itself, if it is one)."""
        if isinstance(embedder, MemoEmbedder):
            return embedder
        key = id(embedder)  # the memo holds the embedder, so the id is not reused while it lives
        with self._lock:
            memo = self._memos.get(key)
            if memo is None:
                memo = self._memos[key] = MemoEmbedder(embedder)
            self._memos.move_to_end(key)
            while len(self._memos) > self._kept:
                self._memos.popitem(last=False)
            return memo
