"""The opensearch-py client: built once per process, and its errors translated in one place.

A Lambda container serves many invocations; the client (and its urllib3 connection pool) is
built on first use and kept, so warm invocations reuse open TLS connections instead of paying a
handshake each time.

Two ways to reach a cluster, chosen from the endpoint alone:

- ``https://search-x.eu-west-1.es.amazonaws.com`` (or a bare host): an AWS endpoint. Requests
  are signed with SigV4 (`Urllib3AWSV4SignerAuth`), service ``es`` (a managed domain; OpenSearch
  Serverless is refused by the settings), with the credentials of the boto3 default chain (the
  Lambda role). The signer freezes refreshable credentials per request, so rotation is safe.
- ``http://localhost:9200`` or ``https://user:pass@host:9200``: a cluster you run yourself (the
  contract suite and CI use this, ``OPENSEARCH_URL``). No SigV4; basic auth when the URL has it.

Retries: 429 (throttled), 502/503/504 and timeouts are retried by the transport
(``max_retries``); everything that still fails becomes a typed domain error (`os_errors`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import boto3
from opensearchpy import ConnectionError as OpenSearchConnectionError
from opensearchpy import (
    ImproperlyConfigured,
    OpenSearch,
    SerializationError,
    TransportError,
    Urllib3AWSV4SignerAuth,
    Urllib3HttpConnection,
)

from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.settings import Settings

#: Statuses the transport retries before giving up: throttling and gateway/availability errors.
RETRY_ON_STATUS: tuple[int, ...] = (429, 502, 503, 504)
MAX_RETRIES = 3
POOL_MAXSIZE = 10


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the cluster is and how to authenticate to it."""

    host: str
    port: int
    use_ssl: bool
    url_prefix: str
    basic_auth: tuple[str, str] | None
    #: True for an AWS endpoint (SigV4), False for a self-run cluster addressed by plain URL.
    aws: bool


def parse_endpoint(endpoint: str) -> Endpoint:
    """Read an endpoint setting: an AWS https endpoint or host, or a plain URL (see module doc)."""
    raw = endpoint.strip()
    if not raw:
        raise ConfigurationError("AGENT_MEMORY_OPENSEARCH_ENDPOINT is empty")
    parts = urlsplit(raw if "://" in raw else f"https://{raw}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"cannot read OpenSearch endpoint {endpoint!r}: expected https://host[:port] "
            "(AWS, SigV4) or http://host:port (a local cluster)"
        )
    basic = (unquote(parts.username), unquote(parts.password or "")) if parts.username else None
    use_ssl = parts.scheme == "https"
    return Endpoint(
        host=parts.hostname,
        port=parts.port or (443 if use_ssl else 9200),
        use_ssl=use_ssl,
        url_prefix=parts.path.rstrip("/"),
        basic_auth=basic,
        aws=use_ssl and basic is None,
    )


def client_options(settings: Settings) -> dict[str, Any]:
    """Transport options shared by both kinds of endpoint (exposed so tests can pin them)."""
    return {
        "connection_class": Urllib3HttpConnection,
        "timeout": settings.opensearch_timeout_s,
        "max_retries": MAX_RETRIES,
        "retry_on_status": RETRY_ON_STATUS,
        "retry_on_timeout": True,
        # gzip request bodies: bulk batches of vectors shrink about 2x; the signer signs the
        # compressed bytes (Urllib3HttpConnection compresses before it calls the auth callable).
        "http_compress": True,
        "pool_maxsize": POOL_MAXSIZE,
    }


def _aws_auth(settings: Settings, credentials: Any | None) -> Urllib3AWSV4SignerAuth:
    session = boto3.Session(region_name=settings.aws_region) if settings.aws_region else boto3.Session()
    region = settings.aws_region or session.region_name
    if not region:
        raise ConfigurationError("AWS_REGION is not set: SigV4 needs the region of the OpenSearch endpoint")
    creds = credentials if credentials is not None else session.get_credentials()
    if creds is None:
        raise ConfigurationError("no AWS credentials found for signing OpenSearch requests")
    return Urllib3AWSV4SignerAuth(creds, region, settings.opensearch_service)


def new_client(settings: Settings, credentials: Any | None = None) -> OpenSearch:
    """A new client for ``settings.opensearch_endpoint`` (no caching; see `build_client`)."""
    if not settings.opensearch_endpoint:
        raise ConfigurationError("AGENT_MEMORY_OPENSEARCH_ENDPOINT is not set")
    ep = parse_endpoint(settings.opensearch_endpoint)
    host: dict[str, Any] = {"host": ep.host, "port": ep.port}
    if ep.url_prefix:
        host["url_prefix"] = ep.url_prefix
    auth: Any = _aws_auth(settings, credentials) if ep.aws else ep.basic_auth
    return OpenSearch(
        hosts=[host],
        http_auth=auth,
        use_ssl=ep.use_ssl,
        verify_certs=ep.use_ssl,
        ssl_show_warn=False,
        **client_options(settings),
    )


_cache: dict[tuple[str, str, str | None, float], OpenSearch] = {}
_cache_lock = threading.Lock()


def build_client(settings: Settings, credentials: Any | None = None) -> OpenSearch:
    """The process-wide client for these settings, built on first use and then reused.

    Explicit ``credentials`` bypass the cache: the caller owns that client's lifetime.
    """
    if credentials is not None:
        return new_client(settings, credentials)
    key = (
        settings.opensearch_endpoint or "",
        settings.opensearch_service,
        settings.aws_region,
        settings.opensearch_timeout_s,
    )
    with _cache_lock:
        client = _cache.get(key)
        if client is None:
            client = _cache[key] = new_client(settings)
        return client


def clear_client_cache() -> None:
    """Forget cached clients (tests; or after the endpoint setting changed)."""
    with _cache_lock:
        _cache.clear()


def error_type(exc: TransportError) -> str:
    """The OpenSearch error type (``index_not_found_exception``...), or '' when there is none."""
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    if isinstance(error, dict):
        return str(error.get("type", ""))
    return str(exc.error) if isinstance(exc.error, str) else ""


def error_reason(exc: TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    if isinstance(error, dict):
        root = error.get("root_cause") or [error]
        first = root[0] if isinstance(root, list) and root and isinstance(root[0], dict) else error
        return str(first.get("reason") or error.get("reason") or error.get("type") or exc.error)
    return str(exc.error)


@contextmanager
def os_errors(what: str, alias: str | None = None) -> Iterator[None]:
    """Translate opensearch-py exceptions raised while doing ``what`` into domain errors.

    - unreachable, timed out, throttled (429) or failing (5xx): `DependencyError`, retry later;
    - the index or alias does not exist: `ConfigurationError` telling how to create it;
    - 401/403: `ConfigurationError` (IAM policy or data access policy);
    - any other 4xx: `ConfigurationError` — a request the cluster refuses is a mapping or
      version mismatch (or a bug), and retrying cannot fix it.

    Callers that expect a 404 (a missing document) catch `opensearchpy.NotFoundError` inside
    the block, before it reaches this translation.
    """
    try:
        yield
    except OpenSearchConnectionError as exc:  # includes ConnectionTimeout and SSLError
        raise DependencyError(f"OpenSearch unreachable while {what}: {exc.error}") from exc
    except TransportError as exc:
        status = exc.status_code if isinstance(exc.status_code, int) else 0
        kind = error_type(exc)
        if status == 429 or status >= 500 or status == 0:
            raise DependencyError(f"OpenSearch failed while {what}: {status} {error_reason(exc)}") from exc
        if kind == "index_not_found_exception":
            raise ConfigurationError(
                f"OpenSearch index alias {alias or '?'!s} does not exist ({what}): "
                "create it with `agent-memory index bootstrap`"
            ) from exc
        if status in (401, 403):
            raise ConfigurationError(
                f"OpenSearch refused access while {what} ({status}): check the IAM role and the "
                "domain access policy"
            ) from exc
        raise ConfigurationError(
            f"OpenSearch rejected a request while {what}: {status} {kind} {error_reason(exc)}"
        ) from exc
    except (SerializationError, ImproperlyConfigured) as exc:
        raise ConfigurationError(f"OpenSearch client error while {what}: {exc}") from exc
