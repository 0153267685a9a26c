"""The memory-tuned MiniLM: selectable by name, its own model id (so its own embedding space), and
a clear error when its weights were never trained. Model tests skip where the weights are absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_memory.adapters.embedders import (
    LOCAL_EMBEDDING_MODELS,
    MemoryMiniLmEmbedder,
    MiniLmEmbedder,
    build_embedder,
    build_tenant_embedder,
    enabled_embedding_models,
)
from agent_memory.adapters.embedders.minilm_memory import DEFAULT_MODEL_PATH
from agent_memory.errors import ConfigurationError
from agent_memory.settings import Settings
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider


def test_it_is_chosen_by_name_and_has_a_model_id_of_its_own() -> None:
    # WHEN the deployment's embedder is the tuned model (nothing is loaded yet)
    embedder = build_embedder(Settings(embedder="minilm-memory"))
    # THEN it is the tuned class, 384 wide, with an id the stock model does not have
    assert isinstance(embedder, MemoryMiniLmEmbedder)
    assert embedder.dimension == 384
    assert embedder.model_id != MiniLmEmbedder().model_id


def test_another_dimension_is_a_configuration_error_naming_it() -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="'minilm-memory' gives 384"):
        build_embedder(Settings(embedder="minilm-memory", embedding_dimension=768))


def test_a_tenant_may_choose_it_and_gets_a_space_apart_from_the_stock_model() -> None:
    # GIVEN the two local MiniLM choices a tenant can make
    settings = Settings(embedder="minilm")
    stock = ModelChoice(provider=ModelProvider.LOCAL, model="minilm")
    tuned = ModelChoice(provider=ModelProvider.LOCAL, model="minilm-memory")
    # WHEN the tenant's embedder is built
    embedder = build_tenant_embedder(tuned, None, settings)
    # THEN it is the tuned model, it is offered, and its vectors live in another space
    assert isinstance(embedder, MemoryMiniLmEmbedder)
    assert "minilm-memory" in (enabled_embedding_models(settings)[ModelProvider.LOCAL] or ())
    assert LOCAL_EMBEDDING_MODELS["minilm-memory"] == 384
    assert tuned.space != stock.space


def test_missing_weights_say_how_to_make_them(tmp_path: Path) -> None:
    # GIVEN weights that were never trained
    embedder = MemoryMiniLmEmbedder(model_path=tmp_path / "model.int8.onnx")
    # WHEN / THEN the first embedding says what to run
    with pytest.raises(ConfigurationError, match="make train-embedder"):
        embedder.embed(["hello"])


@pytest.mark.model
def test_trained_weights_embed_like_the_stock_model_but_not_identically() -> None:
    # GIVEN the weights `make train-embedder` made (skipped where they were never made)
    pytest.importorskip("onnxruntime")
    if not DEFAULT_MODEL_PATH.is_file():
        pytest.skip(f"no trained weights at {DEFAULT_MODEL_PATH}")
    texts = ["Caroline on 08 May 2023: I went to a support group yesterday.", "What did Caroline do?"]
    # WHEN both models embed the same texts
    tuned = MemoryMiniLmEmbedder().embed(texts)
    stock = MiniLmEmbedder().embed(texts)
    # THEN the tuned rows are unit vectors of 384, close to the stock ones but moved
    assert tuned.shape == (2, 384)
    assert np.allclose(np.linalg.norm(tuned, axis=1), 1.0, atol=1e-4)
    agreement = (tuned * stock).sum(axis=1)
    assert np.all(agreement > 0.5) and np.all(agreement < 0.9999)
