"""Embedders: the implementations of the `Embedder` port, and the factory that picks one from settings.

``hashing`` is deterministic and dependency-free (tests), ``minilm`` is the local model of the
embedded default, ``minilm-memory`` the same model fine-tuned for memory search (its weights made by
``make train-embedder``), ``bedrock`` is Titan Text Embeddings v2 in AWS. None of them loads a model or
builds a client until the first `embed`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.embedders.minilm import DIMENSION as MINILM_DIMENSION
from agent_memory.adapters.embedders.minilm import MiniLmEmbedder
from agent_memory.adapters.embedders.minilm_memory import MemoryMiniLmEmbedder
from agent_memory.adapters.embedders.titan import BedrockTitanEmbedder
from agent_memory.errors import ConfigurationError
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider

if TYPE_CHECKING:
    from agent_memory.ports import Embedder
    from agent_memory.settings import Settings

__all__ = [
    "BedrockTitanEmbedder",
    "HashingEmbedder",
    "MemoryMiniLmEmbedder",
    "MiniLmEmbedder",
    "build_embedder",
    "build_tenant_embedder",
    "enabled_embedding_models",
]


def build_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names, sized by ``settings.embedding_dimension``.

    A dimension the chosen model cannot give is a `ConfigurationError` here, at start-up, rather
    than a mismatch with the vector index later.
    """
    if settings.embedder == "hashing":
        return HashingEmbedder(dimension=settings.embedding_dimension)
    if settings.embedder in _LOCAL_MODELS:
        if settings.embedding_dimension != MINILM_DIMENSION:
            raise ConfigurationError(
                f"embedder {settings.embedder!r} gives {MINILM_DIMENSION} dimensions, not "
                f"{settings.embedding_dimension}: set AGENT_MEMORY_EMBEDDING_DIMENSION="
                f"{MINILM_DIMENSION} or choose another AGENT_MEMORY_EMBEDDER"
            )
        return _LOCAL_MODELS[settings.embedder](threads=settings.embedder_threads)
    if settings.embedder == "bedrock":
        return BedrockTitanEmbedder(
            model_id=settings.bedrock_embedding_model_id,
            dimension=settings.embedding_dimension,
            region=settings.aws_region,
        )
    raise ConfigurationError(f"unknown embedder {settings.embedder!r}")


#: The local MiniLM models by name: each its own model id, so its own embedding space.
_LOCAL_MODELS: dict[str, type[MiniLmEmbedder]] = {
    "minilm": MiniLmEmbedder,
    "minilm-memory": MemoryMiniLmEmbedder,
}

#: How long one embedding request of a tenant's endpoint may take (a search waits for it).
TENANT_EMBED_TIMEOUT_S = 30.0


def build_tenant_embedder(choice: ModelChoice, key: str | None, settings: Settings) -> Embedder:
    """The embedder of a tenant's choice (checked when it was set: `enabled_embedding_models`),
    with the tenant's own key for an OpenAI-compatible endpoint (never the operator's)."""
    if choice.provider is ModelProvider.LOCAL:
        if choice.model in _LOCAL_MODELS:
            return _LOCAL_MODELS[choice.model](threads=settings.embedder_threads)
        return HashingEmbedder(dimension=choice.dimension or settings.embedding_dimension)
    if choice.provider is ModelProvider.BEDROCK:
        return BedrockTitanEmbedder(
            model_id=choice.model, dimension=choice.dimension or 1024, region=settings.aws_region
        )
    from agent_memory.adapters.embedders.openai_compatible_embedder import OpenAICompatibleEmbedder
    from agent_memory.adapters.openai_http import OpenAICompatibleClient

    assert choice.endpoint is not None and choice.dimension is not None  # the settings check them
    client = OpenAICompatibleClient(choice.endpoint, key, timeout_s=TENANT_EMBED_TIMEOUT_S)
    return OpenAICompatibleEmbedder(client, choice.model, choice.dimension)


def enabled_embedding_models(settings: Settings) -> dict[ModelProvider, frozenset[str] | None]:
    """What a tenant may choose as its embedding model here, per provider (None: any model).

    Bedrock: the deployment's Titan model (the one model its functions may invoke), at any of its
    sizes; none where the deployment embeds locally. Local: the bundled models, where they run
    (not in a deployment that embeds with Bedrock: its functions do not ship them). An
    OpenAI-compatible endpoint: any model it serves, with the tenant's key."""
    if settings.embedder == "bedrock":
        return {
            ModelProvider.BEDROCK: frozenset({settings.bedrock_embedding_model_id}),
            ModelProvider.OPENAI: None,
        }
    return {ModelProvider.LOCAL: frozenset(LOCAL_EMBEDDING_MODELS), ModelProvider.OPENAI: None}


#: The local models a tenant may choose, and the dimension each gives (None: any it asks for).
LOCAL_EMBEDDING_MODELS: dict[str, int | None] = {
    "minilm": MINILM_DIMENSION,
    "minilm-memory": MINILM_DIMENSION,
    "hashing": None,
}
