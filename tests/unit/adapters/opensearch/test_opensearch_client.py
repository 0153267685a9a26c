"""Building the OpenSearch client: SigV4 for AWS endpoints, plain URLs for self-run clusters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from botocore.credentials import Credentials
from opensearchpy import Urllib3AWSV4SignerAuth, Urllib3HttpConnection

from agent_memory.adapters.opensearch.opensearch_client import (
    RETRY_ON_STATUS,
    build_client,
    clear_client_cache,
    new_client,
    parse_endpoint,
)
from agent_memory.errors import ConfigurationError
from agent_memory.settings import Settings

AWS_ENDPOINT = "https://search-memory-abc123.eu-west-1.es.amazonaws.com"


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_client_cache()
    yield
    clear_client_cache()


def settings(endpoint: str, **kwargs: object) -> Settings:
    return Settings(store="opensearch", opensearch_endpoint=endpoint, **kwargs)  # type: ignore[arg-type]


def connection(client: object) -> Urllib3HttpConnection:
    conn = client.transport.connection_pool.connections[0]  # type: ignore[attr-defined]
    assert isinstance(conn, Urllib3HttpConnection)
    return conn


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        (AWS_ENDPOINT, ("search-memory-abc123.eu-west-1.es.amazonaws.com", 443, True, True, None)),
        ("http://localhost:9200", ("localhost", 9200, False, False, None)),
        ("https://admin:s%3Acret@localhost:9201", ("localhost", 9201, True, False, ("admin", "s:cret"))),
    ],
)
def test_the_endpoint_decides_between_sigv4_and_a_plain_url(
    endpoint: str, expected: tuple[object, ...]
) -> None:
    ep = parse_endpoint(endpoint)

    assert (ep.host, ep.port, ep.use_ssl, ep.aws, ep.basic_auth) == expected


def test_an_unreadable_endpoint_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="ftp://x"):
        parse_endpoint("ftp://x")


def test_a_local_url_gets_no_signer_and_the_retry_policy() -> None:
    # GIVEN
    client = build_client(settings("http://localhost:9200"))

    transport = client.transport
    # WHEN / THEN
    assert transport.retry_on_status == RETRY_ON_STATUS == (429, 502, 503, 504)
    assert transport.max_retries == 3
    assert transport.retry_on_timeout is True
    conn = connection(client)
    assert conn.http_auth is None
    assert conn.http_compress is True
    assert conn.host == "http://localhost:9200"


def test_an_aws_endpoint_is_signed_with_sigv4_for_a_managed_domain() -> None:
    # GIVEN
    creds = Credentials("AKIDEXAMPLE", "secret", "token")
    client = new_client(settings(AWS_ENDPOINT, aws_region="eu-west-1"), creds)

    # WHEN
    conn = connection(client)
    # THEN
    assert isinstance(conn.http_auth, Urllib3AWSV4SignerAuth)
    assert conn.use_ssl and conn.host == "https://search-memory-abc123.eu-west-1.es.amazonaws.com:443"
    assert conn.timeout == 10.0
    # signing a request offline shows the scope: region and service name
    headers = conn.http_auth("POST", f"{AWS_ENDPOINT}/_msearch", b"{}\n{}\n")
    assert "/eu-west-1/es/aws4_request" in headers["Authorization"]
    assert "x-amz-security-token" in {k.lower() for k in headers}


def test_the_client_is_built_once_per_process_and_reused() -> None:
    s = settings(AWS_ENDPOINT, aws_region="eu-west-1")

    assert build_client(s) is build_client(s)
    assert build_client(s) is not build_client(
        settings(AWS_ENDPOINT, aws_region="eu-west-1", opensearch_timeout_s=3)
    )


def test_explicit_credentials_bypass_the_cache() -> None:
    s = settings(AWS_ENDPOINT, aws_region="eu-west-1")

    assert build_client(s, Credentials("a", "b")) is not build_client(s)


def test_sigv4_without_a_region_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="AWS_REGION"):
        new_client(settings(AWS_ENDPOINT))
