"""The update judge on the CPU: MiniLM reading two statements in one pass, int8 ONNX, onnxruntime.

Trained by ``training/train_update_judge.py`` from the weights of the shipped embedder (the same
tokenizer, ``minilm_tokenizer.json``): the older and the newer statement as one pair of segments,
their token embeddings mean-pooled, one logit out, here turned into a probability. Everything it
needs is the ``local`` extra, as for the `minilm` embedder; importing this module needs none of
it, the model loads on the first call.
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

MODEL_ID = "minilm-update-judge-int8-v1"
#: The shipped weights (training/train_update_judge.py; training/README.md says how they were made).
MODEL_PATH = Path(__file__).with_name("minilm_update_judge.int8.onnx")
#: Word pieces of a pair read at most (both statements; the longer is cut first).
MAX_TOKENS = 160


class MiniLmUpdateJudge:
    """Implements the `UpdateJudge` port. Thread-safe: the model loads once under a lock."""

    def __init__(self, model_path: str | Path = MODEL_PATH, threads: int = 1) -> None:
        """Refuses, at once, a missing model file or runtime: a writer started without its judge
        would mark by other rules than the settings say."""
        self._model_path = Path(model_path)
        missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ConfigurationError(
                f"the update judge needs {', '.join(missing)}: pip install 'agent-memory[local]', "
                "or AGENT_MEMORY_UPDATE_JUDGE=none"
            )
        if not self._model_path.is_file():
            raise ConfigurationError(f"update judge model not found: {self._model_path}")
        self._threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, frozenset[str]] | None = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def replaces(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        session, tokenizer, names = self._load()
        out: list[float] = []
        # One pair a run: int8 activations are quantized over the whole batch, so padding beside a
        # longer pair would move a pair's probability (by up to 0.04 here); a write reads one.
        for encoding in tokenizer.encode_batch([(older, newer) for older, newer in pairs]):
            try:
                (logits,) = session.run(None, padded([encoding], names))
            except Exception as exc:  # onnxruntime raises its own types
                raise DependencyError(f"update judge failed: {exc}") from exc
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
