"""Embedders: the implementations of the `Embedder` port, and the factory that picks one from settings.

``hashing`` is deterministic and dependency-free (tests), ``minilm`` is the local model of the
embedded default, ``bedrock`` is Titan Text Embeddings v2 in AWS. None of them loads a model or
builds a client until the first `embed`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.embedders.minilm import DIMENSION as MINILM_DIMENSION
from agent_memory.adapters.embedders.minilm import MiniLmEmbedder
from agent_memory.adapters.embedders.titan import BedrockTitanEmbedder
from agent_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from agent_memory.ports import Embedder
    from agent_memory.settings import Settings

__all__ = ["BedrockTitanEmbedder", "HashingEmbedder", "MiniLmEmbedder", "build_embedder"]


def build_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names, sized by ``settings.embedding_dimension``.

    A dimension the chosen model cannot give is a `ConfigurationError` here, at start-up, rather
    than a mismatch with the vector index later.
    """
    if settings.embedder == "hashing":
        return HashingEmbedder(dimension=settings.embedding_dimension)
    if settings.embedder == "minilm":
        if settings.embedding_dimension != MINILM_DIMENSION:
            raise ConfigurationError(
                f"embedder 'minilm' gives {MINILM_DIMENSION} dimensions, not "
                f"{settings.embedding_dimension}: set AGENT_MEMORY_EMBEDDING_DIMENSION="
                f"{MINILM_DIMENSION} or choose another AGENT_MEMORY_EMBEDDER"
            )
        return MiniLmEmbedder(threads=settings.embedder_threads)
    if settings.embedder == "bedrock":
        return BedrockTitanEmbedder(
            model_id=settings.bedrock_embedding_model_id,
            dimension=settings.embedding_dimension,
            region=settings.aws_region,
        )
    raise ConfigurationError(f"unknown embedder {settings.embedder!r}")
