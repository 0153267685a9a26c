"""The OpenAI-compatible embedder against a recording transport: the /embeddings request, batching,
order by index, normalisation, and the answers it refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.unit.adapters.recording_transport import (
    ENDPOINT,
    HOST,
    KEY,
    RecordingTransport,
    client,
    ok,
    status,
)

from agent_memory.adapters.embedders.openai_compatible_embedder import OpenAICompatibleEmbedder
from agent_memory.errors import (
    ConfigurationError,
    DependencyError,
    ProviderKeyRejectedError,
    ValidationFailedError,
)
from agent_memory.ports import Embedder

MODEL = "text-embedding-3-small"


def embeddings(*vectors: list[float], order: list[int] | None = None) -> dict[str, Any]:
    """An /embeddings answer with one item per vector, listed in ``order`` (default: as given)."""
    indexes = order if order is not None else list(range(len(vectors)))
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in indexes],
        "model": MODEL,
        "usage": {"prompt_tokens": 5, "total_tokens": 5},
    }


def embedder(transport: RecordingTransport, dimension: int = 2, **kwargs: Any) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(client(transport), MODEL, dimension, **kwargs)


def test_one_request_with_model_and_input_and_a_unit_vector_per_text() -> None:
    # GIVEN
    transport = RecordingTransport(ok(embeddings([3.0, 4.0], [0.0, 2.0])))
    under_test = embedder(transport)

    # WHEN
    matrix = under_test.embed(["Alice moved the launch.", "Bob told Globex."])

    # THEN
    assert isinstance(under_test, Embedder)
    assert matrix.dtype == np.float32 and matrix.shape == (2, 2)
    np.testing.assert_allclose(matrix, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)
    [request] = transport.requests
    assert (request.method, request.url) == ("POST", f"{ENDPOINT}/embeddings")
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert transport.bodies() == [{"model": MODEL, "input": ["Alice moved the launch.", "Bob told Globex."]}]


def test_the_model_id_names_the_host_and_the_model() -> None:
    # WHEN / THEN
    assert embedder(RecordingTransport()).model_id == f"openai:{HOST}/{MODEL}"


def test_dimensions_are_sent_only_when_asked() -> None:
    # GIVEN
    transport = RecordingTransport(ok(embeddings([1.0, 0.0])), ok(embeddings([1.0, 0.0])))

    # WHEN
    embedder(transport, send_dimensions=True).embed(["a"])
    embedder(transport).embed(["a"])

    # THEN
    assert transport.bodies() == [
        {"model": MODEL, "input": ["a"], "dimensions": 2},
        {"model": MODEL, "input": ["a"]},
    ]


def test_rows_follow_the_index_not_the_order_of_the_answer() -> None:
    # GIVEN a server that answers out of order
    transport = RecordingTransport(ok(embeddings([1.0, 0.0], [0.0, 1.0], [1.0, 1.0], order=[2, 0, 1])))

    # WHEN
    matrix = embedder(transport).embed(["first", "second", "third"])

    # THEN
    h = 1 / np.sqrt(2)
    np.testing.assert_allclose(matrix, [[1.0, 0.0], [0.0, 1.0], [h, h]], rtol=1e-6)


def test_texts_go_in_batches_and_come_back_in_order() -> None:
    # GIVEN five texts, two per request
    transport = RecordingTransport(
        ok(embeddings([1.0, 0.0], [2.0, 0.0])),
        ok(embeddings([0.0, 1.0], [0.0, 2.0])),
        ok(embeddings([1.0, 1.0])),
    )

    # WHEN
    matrix = embedder(transport, batch_size=2).embed(["a", "b", "c", "d", "e"])

    # THEN
    assert [body["input"] for body in transport.bodies()] == [["a", "b"], ["c", "d"], ["e"]]
    h = 1 / np.sqrt(2)
    np.testing.assert_allclose(matrix, [[1, 0], [1, 0], [0, 1], [0, 1], [h, h]], rtol=1e-6)


def test_each_text_is_cut_to_max_input_chars() -> None:
    # GIVEN
    transport = RecordingTransport(ok(embeddings([1.0, 0.0], [1.0, 0.0])))

    # WHEN
    embedder(transport, max_input_chars=5).embed(["abcdefgh", "xyz"])

    # THEN
    assert transport.bodies()[0]["input"] == ["abcde", "xyz"]


def test_no_texts_no_request() -> None:
    # GIVEN
    transport = RecordingTransport()

    # WHEN
    matrix = embedder(transport, dimension=8).embed([])

    # THEN
    assert matrix.shape == (0, 8) and matrix.dtype == np.float32
    assert transport.requests == []


def test_a_blank_text_is_refused_before_any_request() -> None:
    # GIVEN
    transport = RecordingTransport()

    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        embedder(transport).embed(["a", "  "])
    assert transport.requests == []


def test_a_vector_of_another_length_is_a_configuration_error_naming_both() -> None:
    # GIVEN a model that gives 3 dimensions where 2 were set
    transport = RecordingTransport(ok(embeddings([1.0, 2.0, 3.0])))

    # WHEN
    with pytest.raises(ConfigurationError) as caught:
        embedder(transport).embed(["a"])

    # THEN
    assert "3 dimensions" in caught.value.message and "expected 2" in caught.value.message
    assert HOST in caught.value.message and MODEL in caught.value.message


@pytest.mark.parametrize(
    "answer",
    [
        {"object": "list"},
        {"data": "nope"},
        {"data": []},
        {"data": [{"index": 0, "embedding": "AAAA"}]},
        {"data": [{"index": 0, "embedding": ["x", "y"]}]},
        {"data": [{"index": 0, "embedding": [[1.0, 0.0]]}]},
        {"data": [{"embedding": [1.0, 0.0]}]},
        {"data": [{"index": 5, "embedding": [1.0, 0.0]}]},
        {"data": [{"index": True, "embedding": [1.0, 0.0]}]},
        {"data": [1.0]},
    ],
    ids=[
        "no-data",
        "data-not-a-list",
        "too-few",
        "base64",
        "not-numbers",
        "nested",
        "no-index",
        "index-out-of-range",
        "bool-index",
        "items-not-objects",
    ],
)
def test_a_malformed_answer_is_a_configuration_error(answer: dict[str, Any]) -> None:
    # GIVEN
    transport = RecordingTransport(ok(answer))

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=HOST):
        embedder(transport).embed(["a"])


def test_an_index_given_twice_is_a_configuration_error() -> None:
    # GIVEN
    transport = RecordingTransport(ok(embeddings([1.0, 0.0], [0.0, 1.0], order=[0, 0])))

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="twice"):
        embedder(transport).embed(["a", "b"])


def test_a_zero_vector_is_a_dependency_error() -> None:
    # GIVEN
    transport = RecordingTransport(ok(embeddings([0.0, 0.0])))

    # WHEN / THEN
    with pytest.raises(DependencyError):
        embedder(transport).embed(["a"])


def test_a_refused_key_reaches_the_caller_without_retry() -> None:
    # GIVEN
    transport = RecordingTransport(status(401))

    # WHEN
    with pytest.raises(ProviderKeyRejectedError) as caught:
        embedder(transport).embed(["a"])

    # THEN
    assert len(transport.requests) == 1
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    "kwargs", [{"dimension": 0}, {"batch_size": 0}, {"max_input_chars": 0}], ids=["dim", "batch", "chars"]
)
def test_settings_that_cannot_work_are_refused(kwargs: dict[str, int]) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError):
        embedder(RecordingTransport(), **kwargs)
