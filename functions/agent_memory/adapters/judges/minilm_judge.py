"""What the MiniLM judges share: one cross-encoder run per pair of segments, int8 ONNX, onnxruntime.

Both judges (`minilm_update_judge`, `minilm_answer_judge`) are the shipped embedder's weights
(the same tokenizer, ``minilm_tokenizer.json``) trained to read two segments in one pass, their
token embeddings mean-pooled, one logit out, here turned into a probability; they differ in what
the segments hold (`segments`, as the training scripts build them). Everything they need is the
``local`` extra, as for the `minilm` embedder; importing this module needs none of it, the model
loads on the first call.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.adapters.embedders.minilm import TOKENIZER_PATH, cpu_session, padded
from agent_memory.errors import ConfigurationError, DependencyError

#: Word pieces of a pair read at most (both segments; the longer is cut first).
MAX_TOKENS = 160
#: Between the older and the newer statement when a question takes the first segment.
JOIN = " [SEP] "


def segments(older: str, newer: str, question: str | None = None) -> tuple[str, str]:
    """The two segments a judge reads: the older and the newer statement, or, with a question,
    the question and both statements in the order they were said (training/train_update_judge.py
    builds them the same way)."""
    if question is None:
        return older, newer
    return question, f"{older}{JOIN}{newer}"


class MiniLmJudge:
    """One judge's model and tokenizer. Thread-safe: the model loads once under a lock."""

    #: What the settings call it and how to turn it off, for the refusal at construction.
    name = "judge"
    setting = ""
    #: The shipped weights, read when no other model is given.
    default_model: Path

    def __init__(self, model_path: str | Path | None = None, threads: int = 1) -> None:
        """Refuses, at once, a missing model file or runtime: a service started without its judge
        would decide by other rules than the settings say."""
        self._model_path = Path(model_path) if model_path is not None else self.default_model
        missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ConfigurationError(
                f"the {self.name} needs {', '.join(missing)}: pip install 'agent-memory[local]', "
                f"or {self.setting}=none"
            )
        if not self._model_path.is_file():
            raise ConfigurationError(f"{self.name} model not found: {self._model_path}")
        self._threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, frozenset[str]] | None = None

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability per pair of segments, in their order."""
        if not pairs:
            return []
        session, tokenizer, names = self._load()
        out: list[float] = []
        # One pair a run: int8 activations are quantized over the whole batch, so padding beside a
        # longer pair would move a pair's probability (by up to 0.04 here).
        for encoding in tokenizer.encode_batch(list(pairs)):
            try:
                (logits,) = session.run(None, padded([encoding], names))
            except Exception as exc:  # onnxruntime raises its own types
                raise DependencyError(f"{self.name} failed: {exc}") from exc
            out.append(float(1.0 / (1.0 + np.exp(-float(np.asarray(logits).reshape(-1)[0])))))
        return out

    def _load(self) -> tuple[Any, Any, frozenset[str]]:
        with self._lock:  # uncontended after the load: next to a 2 ms model run, nothing
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> tuple[Any, Any, frozenset[str]]:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        session = cpu_session(self._model_path, self._threads)
        return session, tokenizer, frozenset(i.name for i in session.get_inputs())
