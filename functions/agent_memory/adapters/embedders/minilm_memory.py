"""all-MiniLM-L6-v2 fine-tuned for memory search: questions against chat turns in their setting.

The same network, tokenizer, pooling and 384 dimensions as `minilm` (this class is `MiniLmEmbedder`
with other weights), trained by ``make train-embedder`` (training/train_embedder.py) on pairs of a
question and the turn that answers it, written as the store embeds a turn. Its vectors are not
comparable with the stock model's, so it has its own model id: a store that switches is
re-embedded by the embedding-space machinery (`tenancy.rules.embedding_spaces`), never mixed.

The weights are not in the package. A run on LoCoMo's tuning half (the default of
``make train-embedder``) carries its CC BY-NC 4.0 terms and may not be redistributed; a run on the
project's own conversations alone (``TRAIN_SOURCES=owned``) may ship, but the one chosen on the
tuning set did not beat the stock model on both held-out sets through the HTTP API
(docs/decisions.md, "A memory-tuned MiniLM"), so it is not shipped either. ``make train-embedder``
writes the weights to ``.build/embedders/minilm-memory/model.int8.onnx`` of the checkout (the
default here), or they are given as a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_memory.adapters.embedders.minilm import MiniLmEmbedder
from agent_memory.errors import ConfigurationError

MODEL_ID = "all-MiniLM-L6-v2-memory-int8-v1"
#: Where ``make train-embedder`` puts the weights, in a source checkout (an editable install).
DEFAULT_MODEL_PATH = (
    Path(__file__).resolve().parents[4] / ".build" / "embedders" / "minilm-memory" / "model.int8.onnx"
)


class MemoryMiniLmEmbedder(MiniLmEmbedder):
    """Implements the `Embedder` port with the memory-tuned MiniLM (384 dimensions)."""

    def __init__(self, model_path: str | Path | None = None, threads: int = 0) -> None:
        path = Path(model_path) if model_path is not None else DEFAULT_MODEL_PATH
        super().__init__(model_path=path, threads=threads)
        self._weights = path

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def _build(self) -> tuple[Any, Any, frozenset[str]]:
        if not self._weights.is_file():
            raise ConfigurationError(
                f"embedder 'minilm-memory' needs its weights at {self._weights}: "
                "make them with `make train-embedder`"
            )
        return super()._build()
