"""The OpenAI-compatible HTTP client against a recording transport: the request it sends, how each
status maps to an error, the bounded retry, and that the key never leaks into an error, a log
line or a repr."""

from __future__ import annotations

import json
import logging

import pytest
from tests.fakes import refused_connections
from tests.unit.adapters.recording_transport import (
    ENDPOINT,
    HOST,
    KEY,
    RecordingTransport,
    Sleeps,
    client,
    ok,
    status,
)

from agent_memory.adapters.openai_http import (
    MAX_ATTEMPTS,
    HttpRequest,
    HttpResponse,
    OpenAICompatibleClient,
    Transport,
    guarded_transport,
)
from agent_memory.errors import (
    AgentMemoryError,
    ConfigurationError,
    DependencyError,
    ProviderKeyRejectedError,
)
from agent_memory.tenancy.rules.outbound import OutboundGuard, OutboundPolicy

PAYLOAD = {"model": "m-1", "input": ["Alice moved the launch to March 3."]}


def test_posts_json_to_the_endpoint_path_with_the_bearer_key() -> None:
    # GIVEN
    transport = RecordingTransport(ok({"data": []}))

    # WHEN
    answer = client(transport, timeout_s=12.5).post_json("/embeddings", PAYLOAD)

    # THEN
    assert answer == {"data": []}
    [request] = transport.requests
    assert (request.method, request.url, request.timeout_s) == ("POST", f"{ENDPOINT}/embeddings", 12.5)
    assert request.headers == {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"}
    assert json.loads(request.body) == PAYLOAD


def test_no_key_no_authorization_header_and_slashes_are_joined_once() -> None:
    # GIVEN a self-hosted server without a key, its endpoint written with a trailing slash
    transport = RecordingTransport(ok({}))
    keyless = OpenAICompatibleClient("http://localhost:11434/v1/", None, transport=transport)

    # WHEN
    keyless.post_json("chat/completions", {"model": "llama3"})

    # THEN
    [request] = transport.requests
    assert request.url == "http://localhost:11434/v1/chat/completions"
    assert request.headers == {"Content-Type": "application/json"}
    assert keyless.host == "localhost:11434"


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_is_provider_key_rejected_at_once(code: int) -> None:
    # GIVEN
    transport = RecordingTransport(status(code), ok({}))
    sleeps = Sleeps()

    # WHEN
    with pytest.raises(ProviderKeyRejectedError) as caught:
        client(transport, sleeps).post_json("/embeddings", PAYLOAD)

    # THEN no retry: the same key cannot start working
    assert len(transport.requests) == 1
    assert sleeps == []
    assert HOST in caught.value.message and "m-1" in caught.value.message


@pytest.mark.parametrize("code", [400, 404, 422])
def test_a_refused_request_is_a_configuration_error_naming_host_and_model_only(code: int) -> None:
    # GIVEN the provider explains itself in its body
    transport = RecordingTransport(status(code, '{"error": {"message": "The model `m-1` does not exist"}}'))

    # WHEN
    with pytest.raises(ConfigurationError) as caught:
        client(transport).post_json("/embeddings", PAYLOAD)

    # THEN the message names where and what, and repeats nothing the provider said
    assert len(transport.requests) == 1
    message = caught.value.message
    assert HOST in message and "m-1" in message and str(code) in message
    assert "does not exist" not in message


def test_429_then_200_succeeds_after_one_retry() -> None:
    # GIVEN
    transport = RecordingTransport(status(429), ok({"data": [1]}))
    sleeps = Sleeps()

    # WHEN
    answer = client(transport, sleeps).post_json("/embeddings", PAYLOAD)

    # THEN
    assert answer == {"data": [1]}
    assert len(transport.requests) == 2
    assert sleeps == [1.0]


def test_5xx_every_time_is_a_dependency_error_after_bounded_attempts() -> None:
    # GIVEN
    transport = RecordingTransport(status(500), status(502), status(500))
    sleeps = Sleeps()

    # WHEN
    with pytest.raises(DependencyError) as caught:
        client(transport, sleeps).post_json("/embeddings", PAYLOAD)

    # THEN
    assert len(transport.requests) == MAX_ATTEMPTS == 3
    assert sleeps == [1.0, 2.0]
    assert HOST in caught.value.message


def test_a_transport_failure_is_not_retried_here() -> None:
    # GIVEN the connection fails (the queue retries the job later)
    transport = RecordingTransport(DependencyError(f"{HOST} is unreachable (URLError)"))

    # WHEN / THEN
    with pytest.raises(DependencyError):
        client(transport).post_json("/embeddings", PAYLOAD)
    assert len(transport.requests) == 1


@pytest.mark.parametrize("body", [b"<html>login</html>", b"[1, 2]"])
def test_a_2xx_that_is_not_a_json_object_is_a_dependency_error(body: bytes) -> None:
    # GIVEN
    transport = RecordingTransport(HttpResponse(200, body))

    # WHEN / THEN
    with pytest.raises(DependencyError, match=HOST):
        client(transport).post_json("/embeddings", PAYLOAD)


@pytest.mark.parametrize(
    "answers",
    [
        [status(401, f'{{"error": "Incorrect API key provided: {KEY}"}}')],
        [status(404, f"no model for key {KEY}")],
        [status(500, KEY), status(503, KEY), status(429, KEY)],
        [HttpResponse(200, f"not json {KEY}".encode())],
    ],
    ids=["401", "404", "5xx", "garbled"],
)
def test_the_key_never_appears_in_an_error_a_log_line_or_a_repr(
    answers: list[HttpResponse], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a provider that even echoes the key back in its answers
    transport = RecordingTransport(*answers)
    under_test = client(transport)

    # WHEN
    with caplog.at_level(logging.DEBUG), pytest.raises(AgentMemoryError) as caught:
        under_test.post_json("/embeddings", PAYLOAD)

    # THEN
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert KEY not in caplog.text
    assert KEY not in repr(under_test) and "<set>" in repr(under_test)
    assert all(KEY not in repr(r) for r in transport.requests)


@pytest.mark.parametrize(
    "endpoint", ["llm.example.com/v1", "ftp://llm.example.com", "https://", "https://h:port/v1"]
)
def test_an_endpoint_that_is_not_an_http_url_is_a_configuration_error(endpoint: str) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError):
        OpenAICompatibleClient(endpoint, KEY)


def test_credentials_in_the_endpoint_are_refused_without_repeating_them() -> None:
    # WHEN
    with pytest.raises(ConfigurationError) as caught:
        OpenAICompatibleClient("https://user:hunter2@llm.example.com/v1", None)

    # THEN
    assert "hunter2" not in caught.value.message and HOST in caught.value.message


def request() -> HttpRequest:
    return HttpRequest(
        "POST",
        f"{ENDPOINT}/embeddings",
        {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        b"{}",
        5.0,
    )


def guarded(*answers: str, allow_loopback: bool = False) -> Transport:
    """The default transport, its DNS a stub that answers ``answers`` for every name."""
    return guarded_transport(OutboundGuard(OutboundPolicy(allow_loopback), lambda host, port: list(answers)))


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address a connection is opened to; each is refused (no packet leaves)."""
    return refused_connections(monkeypatch)


def test_the_transport_connects_to_the_address_the_name_resolved_to(
    connections: list[tuple[str, int]],
) -> None:
    # WHEN the endpoint's name resolves to a public address, which then refuses the connection
    with pytest.raises(DependencyError) as caught:
        guarded("93.184.215.14")(request())

    # THEN the connection went to that address (pinned), and the error names the host, not the key
    assert connections == [("93.184.215.14", 443)]
    assert HOST in caught.value.message
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    ("endpoint", "answers"),
    [
        ("https://api.example.com/v1", ("169.254.169.254",)),
        ("https://api.example.com/v1", ("10.0.0.8",)),
        ("https://169.254.169.254/latest", ()),
        ("https://0xa9fea9fe/latest", ()),
        ("http://127.0.0.1:9001/2018-06-01/runtime", ()),
        ("https://127.1/v1", ()),
    ],
)
def test_an_endpoint_at_a_refused_address_is_never_sent_the_key(
    connections: list[tuple[str, int]], endpoint: str, answers: tuple[str, ...]
) -> None:
    # GIVEN a client of that endpoint, with the tenant's key
    api = OpenAICompatibleClient(endpoint, KEY, transport=guarded(*answers), sleep=lambda s: None)

    # WHEN it posts
    with pytest.raises(ConfigurationError) as caught:
        api.post_json("/embeddings", PAYLOAD)

    # THEN nothing was connected to: the key never left
    assert connections == []
    assert KEY not in str(caught.value)


def test_loopback_is_called_only_where_the_policy_allows_it(connections: list[tuple[str, int]]) -> None:
    # GIVEN a server on this machine
    local = OpenAICompatibleClient(
        "http://localhost:11434/v1", None, transport=guarded("127.0.0.1", allow_loopback=True)
    )

    # WHEN it is called where loopback is allowed THEN the connection is opened to it
    with pytest.raises(DependencyError):
        local.post_json("/embeddings", PAYLOAD)
    assert connections == [("127.0.0.1", 11434)]
