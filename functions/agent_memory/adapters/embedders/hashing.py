"""A deterministic feature-hashing embedder: no model, no download, numpy only.

It exists so that tests and quick local runs exercise the real code paths (dedup-on-write, vector
search, ranking) with vectors that behave like sentence embeddings in the ways those paths care
about: the same text always maps to the same vector, in every process on every machine; texts that
share most of their words are close; texts about different things are far apart. It understands no
meaning ("car" and "automobile" are unrelated to it), so it is not for production retrieval.

How a text becomes a vector:

* Lower-cased words (letters and digits, inner apostrophes kept) give three feature families:
  word unigrams, word bigrams and character 3-grams inside each word (with ``<`` and ``>`` marking
  the word's edges, so "launch" and "launches" share most of them). Unigrams carry the content;
  character 3-grams make the embedder forgive inflections and typos; bigrams are a light
  tie-breaker for word order. Each family is normalised on its own, then weighted (1, 0.7 and
  0.15), so the balance between them does not drift with the text's length.
* Counts are sublinear (``1 + ln tf``), so a repeated word does not dominate. Every word gets the
  same character-gram mass whatever its length, so changing one long word does not count for more
  than changing a short one.
* Features are hashed into the vector with ``blake2b`` (stable; Python's ``hash()`` is salted per
  process) with a hashed sign, so collisions cancel out on average instead of piling up.
* Component 0 is a constant shared by every text, the *prior*: ``cos = PRIOR + (1 - PRIOR) * f`` where
  ``f`` is the cosine of the hashed features. Without it one changed word in a 12-word sentence
  gives ``f`` of about 11/12 = 0.917 for any bag of features in which every word has an equal
  share: below the default dedup threshold (0.92, set for neural embedders), so tests could not
  produce a near-duplicate. With it, such pairs land at about 0.93 (above 0.92 for ~99% of random
  one-word changes of 12-word chat turns) and unrelated sentences stay below 0.5 (~0.3 on average).
* A text with no word at all (only punctuation or emoji) is hashed from its raw characters, and a
  blank text is the prior alone: each gets a stable, non-zero unit vector.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from agent_memory.ports import Matrix

#: Bump when the features or weights change: vectors of different versions must not be mixed.
VERSION = 1

#: Share of every vector's squared length given to the constant component (see the module doc).
PRIOR = 0.2

_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.15
_CHAR_WEIGHT = 0.7


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, slots: int) -> tuple[int, float]:
    """The slot (1 .. slots) and sign of a feature, from a stable 64-bit hash."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return 1 + digest % slots, (1.0 if digest >> 63 else -1.0)


def _char_grams(token: str) -> list[str]:
    marked = f"<{token}>"
    return [marked[i : i + 3] for i in range(len(marked) - 2)]


def _families(text: str) -> list[tuple[float, dict[str, float]]]:
    """(weight, {feature: value}) for each feature family present in ``text``."""
    words = _WORD.findall(text.lower())
    if not words:
        raw = " ".join(text.split())
        if not raw:
            return []
        symbols = Counter(f"s:{gram}" for gram in _char_grams(raw))
        return [(1.0, {f: 1.0 + math.log(n) for f, n in symbols.items()})]

    unigrams = Counter(f"w:{w}" for w in words)
    bigrams = Counter(f"b:{a} {b}" for a, b in itertools.pairwise(words))
    chars: dict[str, float] = {}
    for word in words:
        grams = _char_grams(word)
        share = 1.0 / math.sqrt(len(grams))  # every word adds the same squared mass
        for gram in grams:
            chars[f"c:{gram}"] = chars.get(f"c:{gram}", 0.0) + share
    return [
        (_UNIGRAM_WEIGHT, {f: 1.0 + math.log(n) for f, n in unigrams.items()}),
        (_BIGRAM_WEIGHT, {f: 1.0 + math.log(n) for f, n in bigrams.items()}),
        (_CHAR_WEIGHT, chars),
    ]


class HashingEmbedder:
    """Implements the `Embedder` port with feature hashing; see the module docstring."""

    def __init__(self, dimension: int = 384) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 8:
            raise ValueError(f"dimension must be an integer >= 8, got {dimension!r}")
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"hashing-v{VERSION}-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text)
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        slots = self._dimension - 1
        features = np.zeros(self._dimension, dtype=np.float64)
        for weight, family in _families(text):
            block = np.zeros(self._dimension, dtype=np.float64)
            for feature, value in family.items():
                slot, sign = _bucket(feature, slots)
                block[slot] += sign * value
            norm = float(np.linalg.norm(block))
            if norm > 0.0:
                features += (weight / norm) * block
        norm = float(np.linalg.norm(features))
        if norm > 0.0:
            features *= math.sqrt(1.0 - PRIOR) / norm
            features[0] = math.sqrt(PRIOR)
        else:
            features[0] = 1.0
        return features / np.linalg.norm(features)
