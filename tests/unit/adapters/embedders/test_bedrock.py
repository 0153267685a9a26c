"""The Titan v2 embedder against a stubbed bedrock-runtime client (botocore Stubber, no network)."""

from __future__ import annotations

import io
import json
import threading
import time
from typing import Any

import numpy as np
import pytest
from botocore.exceptions import EndpointConnectionError
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from agent_memory.adapters.embedders.titan import MAX_INPUT_CHARS, BedrockTitanEmbedder
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.ports import Embedder

MODEL = "amazon.titan-embed-text-v2:0"


@pytest.fixture
def sent_bodies(bedrock: Any) -> list[dict[str, Any]]:
    """The JSON bodies of the InvokeModel calls, as the client was asked to send them."""
    bodies: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        bodies.append(json.loads(params["body"]))

    bedrock.meta.events.register("provide-client-params.bedrock-runtime.InvokeModel", capture)
    return bodies


def titan_answer(payload: dict[str, Any] | bytes) -> dict[str, Any]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def expected_call(model_id: str = MODEL) -> dict[str, Any]:
    return {"modelId": model_id, "body": ANY, "contentType": "application/json", "accept": "application/json"}


def unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def test_each_text_is_one_titan_call_with_the_documented_body(
    bedrock: Any, bedrock_stub: Stubber, sent_bodies: list[dict[str, Any]]
) -> None:
    # GIVEN Titan answers two calls, with vectors that are not quite unit length
    first = [3.0, 4.0] + [0.0] * 254
    second = [0.0] * 255 + [2.0]
    bedrock_stub.add_response(
        "invoke_model", titan_answer({"embedding": first, "inputTextTokenCount": 4}), expected_call()
    )
    bedrock_stub.add_response(
        "invoke_model", titan_answer({"embedding": second, "inputTextTokenCount": 3}), expected_call()
    )
    embedder = BedrockTitanEmbedder(dimension=256, client=bedrock, max_workers=1)
    # WHEN two texts are embedded
    vectors = embedder.embed(["Alice moved the launch.", "Bob agreed."])
    # THEN each call asked for exactly that text, the dimension and normalised output
    assert sent_bodies == [
        {"inputText": "Alice moved the launch.", "dimensions": 256, "normalize": True},
        {"inputText": "Bob agreed.", "dimensions": 256, "normalize": True},
    ]
    # AND the rows are the answers, in order, re-normalised to unit length as float32
    assert vectors.shape == (2, 256)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0], unit(first), atol=1e-7)
    np.testing.assert_allclose(vectors[1], unit(second), atol=1e-7)


def test_the_configured_model_id_is_the_one_invoked(bedrock: Any, bedrock_stub: Stubber) -> None:
    # GIVEN
    bedrock_stub.add_response(
        "invoke_model", titan_answer({"embedding": [1.0] * 512}), expected_call("my-provisioned-titan")
    )
    embedder = BedrockTitanEmbedder(model_id="my-provisioned-titan", dimension=512, client=bedrock)
    # WHEN / THEN
    assert embedder.model_id == "my-provisioned-titan"
    assert embedder.embed(["hello"]).shape == (1, 512)


def test_long_texts_are_cut_to_fit_titans_token_limit(
    bedrock: Any, bedrock_stub: Stubber, sent_bodies: list[dict[str, Any]]
) -> None:
    # GIVEN
    bedrock_stub.add_response("invoke_model", titan_answer({"embedding": [1.0] * 1024}), expected_call())
    # WHEN
    BedrockTitanEmbedder(client=bedrock).embed(["x" * 60_000])
    # THEN
    assert sent_bodies[0]["inputText"] == "x" * MAX_INPUT_CHARS


def test_empty_input_makes_no_call(bedrock: Any, bedrock_stub: Stubber) -> None:
    # WHEN
    vectors = BedrockTitanEmbedder(dimension=512, client=bedrock).embed([])
    # THEN
    assert vectors.shape == (0, 512)
    assert vectors.dtype == np.float32


def test_a_blank_text_is_refused_before_any_call(bedrock: Any, bedrock_stub: Stubber) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationFailedError, match="blank"):
        BedrockTitanEmbedder(client=bedrock).embed(["fine", "   "])


@pytest.mark.parametrize("dimension", [256, 512, 1024])
def test_titan_dimensions_are_accepted(dimension: int) -> None:
    # WHEN / THEN
    assert BedrockTitanEmbedder(dimension=dimension).dimension == dimension


@pytest.mark.parametrize("dimension", [0, 128, 384, 768, 1536])
def test_other_dimensions_are_a_configuration_error_naming_the_choices(dimension: int) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=r"256, 512, 1024.*AGENT_MEMORY_EMBEDDING_DIMENSION"):
        BedrockTitanEmbedder(dimension=dimension)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("ServiceUnavailableException", 503),
        ("ModelTimeoutException", 408),
        ("InternalServerException", 500),
    ],
)
def test_failures_that_survive_retries_are_a_dependency_error(
    bedrock: Any, bedrock_stub: Stubber, code: str, status: int
) -> None:
    # GIVEN Bedrock answers with a transient error (botocore has already retried it)
    bedrock_stub.add_client_error(
        "invoke_model", service_error_code=code, service_message="slow down", http_status_code=status
    )
    # WHEN a text is embedded
    with pytest.raises(DependencyError) as raised:
        BedrockTitanEmbedder(client=bedrock).embed(["hello"])
    # THEN the caller may retry later, and the details say what failed
    assert raised.value.status == 503
    assert raised.value.details == [{"service": "bedrock-runtime", "code": code, "model_id": MODEL}]


@pytest.mark.parametrize(
    ("code", "status"),
    [("ValidationException", 400), ("AccessDeniedException", 403), ("ResourceNotFoundException", 404)],
)
def test_failures_no_retry_can_fix_are_a_configuration_error(
    bedrock: Any, bedrock_stub: Stubber, code: str, status: int
) -> None:
    # GIVEN
    bedrock_stub.add_client_error("invoke_model", service_error_code=code, http_status_code=status)
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=code):
        BedrockTitanEmbedder(client=bedrock).embed(["hello"])


def test_an_unreachable_endpoint_is_a_dependency_error() -> None:
    # GIVEN
    class Unreachable:
        def invoke_model(self, **_: Any) -> dict[str, Any]:
            raise EndpointConnectionError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    # WHEN / THEN
    with pytest.raises(DependencyError, match="unreachable"):
        BedrockTitanEmbedder(client=Unreachable()).embed(["hello"])


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"embeddings": [[0.1] * 1024]}, ConfigurationError),  # another model family's shape
        ({"embedding": "not numbers"}, ConfigurationError),
        ({"embedding": [0.1] * 512}, ConfigurationError),  # a dimension other than asked for
        ({"embedding": [0.0] * 1024}, DependencyError),
        (b"{not json", DependencyError),
    ],
)
def test_malformed_answers_are_never_returned_as_vectors(
    bedrock: Any, bedrock_stub: Stubber, answer: dict[str, Any] | bytes, error: type[Exception]
) -> None:
    # GIVEN
    bedrock_stub.add_response("invoke_model", titan_answer(answer), expected_call())
    # WHEN / THEN
    with pytest.raises(error):
        BedrockTitanEmbedder(client=bedrock).embed(["hello"])


def test_a_batch_is_embedded_concurrently_and_returned_in_order() -> None:
    # GIVEN a client that answers each text with a vector naming its index, and that only lets
    # its first two calls finish once both are in flight (a sequential embedder would time out)
    both_in_flight = threading.Barrier(2, timeout=5)
    calls = 0
    lock = threading.Lock()

    class Indexing:
        def invoke_model(self, *, body: str, **_: Any) -> dict[str, Any]:
            nonlocal calls
            with lock:
                calls += 1
                first_two = calls <= 2
            if first_two:
                both_in_flight.wait()
            index = int(json.loads(body)["inputText"].split()[-1])
            return titan_answer({"embedding": [0.0] * index + [1.0] + [0.0] * (255 - index)})

    texts = [f"text {i}" for i in range(12)]
    # WHEN they are embedded with a pool of four
    vectors = BedrockTitanEmbedder(dimension=256, client=Indexing(), max_workers=4).embed(texts)
    # THEN row i is the answer for text i
    assert calls == 12
    np.testing.assert_array_equal(vectors.argmax(axis=1), np.arange(12))


def test_a_batch_never_has_more_calls_in_flight_than_its_pool() -> None:
    # GIVEN a client that counts the calls in flight, each held a moment so that they overlap
    in_flight = most = 0
    lock = threading.Lock()

    class Slow:
        def invoke_model(self, **_: Any) -> dict[str, Any]:
            nonlocal in_flight, most
            with lock:
                in_flight += 1
                most = max(most, in_flight)
            time.sleep(0.02)
            with lock:
                in_flight -= 1
            return titan_answer({"embedding": [1.0] + [0.0] * 255})

    # WHEN a writer's receive of 40 texts is embedded with a pool of three
    vectors = BedrockTitanEmbedder(dimension=256, client=Slow(), max_workers=3).embed(
        [f"turn {i}" for i in range(40)]
    )
    # THEN the calls overlapped, never more than three at once, and every text has its vector
    assert 1 < most <= 3
    assert vectors.shape == (40, 256)


def test_without_a_client_one_is_built_on_first_use_with_adaptive_retries() -> None:
    # GIVEN an embedder given only a region
    embedder = BedrockTitanEmbedder(region="eu-west-1")
    # WHEN its client is first needed
    client = embedder.client
    # THEN it is a bedrock-runtime client for that region, retrying adaptively, built once
    assert client.meta.service_model.service_name == "bedrock-runtime"
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.config.retries["mode"] == "adaptive"
    assert client.meta.config.retries["total_max_attempts"] >= 3
    assert client.meta.config.connect_timeout <= 10
    assert client.meta.config.read_timeout <= 60
    assert embedder.client is client


def test_it_implements_the_embedder_port() -> None:
    # WHEN / THEN
    assert isinstance(BedrockTitanEmbedder(), Embedder)


def test_max_workers_must_be_positive() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="max_workers"):
        BedrockTitanEmbedder(max_workers=0)
