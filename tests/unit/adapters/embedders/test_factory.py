"""`build_embedder`: settings pick the embedder and its size; impossible sizes fail at start-up."""

from __future__ import annotations

import pytest

from agent_memory.adapters.embedders import (
    BedrockTitanEmbedder,
    HashingEmbedder,
    MiniLmEmbedder,
    build_embedder,
)
from agent_memory.errors import ConfigurationError
from agent_memory.ports import Embedder
from agent_memory.settings import Settings


def test_hashing_is_sized_by_the_embedding_dimension() -> None:
    # WHEN
    embedder = build_embedder(Settings(embedder="hashing", embedding_dimension=64))
    # THEN
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimension == 64
    assert embedder.embed(["hello"]).shape == (1, 64)


def test_minilm_is_the_default_and_loads_nothing_when_built() -> None:
    # GIVEN default settings; WHEN the embedder is built (no model file is touched yet)
    embedder = build_embedder(Settings())
    # THEN it is the local model, at its own dimension
    assert isinstance(embedder, MiniLmEmbedder)
    assert (embedder.model_id, embedder.dimension) == ("all-MiniLM-L6-v2-int8", 384)


def test_minilm_with_another_dimension_is_a_configuration_error() -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="AGENT_MEMORY_EMBEDDING_DIMENSION=384"):
        build_embedder(Settings(embedder="minilm", embedding_dimension=768))


def test_bedrock_takes_model_dimension_and_region_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN settings for Titan in eu-west-1 (AWS_REGION is what Lambda sets)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    settings = Settings(
        embedder="bedrock", embedding_dimension=512, bedrock_embedding_model_id="amazon.titan-embed-text-v2:0"
    )
    # WHEN the embedder is built
    embedder = build_embedder(settings)
    # THEN it is Titan of that size, and its client (built on first use) targets that region
    assert isinstance(embedder, BedrockTitanEmbedder)
    assert (embedder.model_id, embedder.dimension) == ("amazon.titan-embed-text-v2:0", 512)
    assert embedder.client.meta.region_name == "eu-west-1"


def test_bedrock_with_the_local_default_dimension_is_a_configuration_error() -> None:
    # WHEN / THEN
    # 384 is MiniLM's size; Titan v2 gives 256, 512 or 1024
    with pytest.raises(ConfigurationError, match="AGENT_MEMORY_EMBEDDING_DIMENSION"):
        build_embedder(Settings(embedder="bedrock"))


@pytest.mark.parametrize(("name", "dimension"), [("hashing", 384), ("minilm", 384), ("bedrock", 1024)])
def test_every_choice_implements_the_embedder_port(name: str, dimension: int) -> None:
    # WHEN
    embedder = build_embedder(Settings(embedder=name, embedding_dimension=dimension))  # type: ignore[arg-type]
    # THEN
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == dimension
