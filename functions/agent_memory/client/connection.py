"""`Connection`: what every call of the client shares, one HTTP exchange with the API.

The base URL and credentials, the transport, the retry policy (and the injectable ``sleep`` and
``clock`` that let retries and defaults be tested without waiting), the paths of agents and
documents, paging, and the typed errors a response turns into. `MemoryClient` is this plus one
method per route, grouped by capability (`KnowledgeCalls`, `AdminCalls`, its own memory calls).
"""

from __future__ import annotations

import http.client
import logging
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from pydantic import BaseModel, ValidationError

from agent_memory.client.api_errors import TransportError, UnexpectedResponseError, error_from_response
from agent_memory.client.credentials import ApiKeyAuth, Auth, NoAuth
from agent_memory.client.retry import RetryPolicy, parse_retry_after
from agent_memory.client.transport import HttpTransport, RawResponse, Transport
from agent_memory.contract.v1 import AuditResponse, ListResponse
from agent_memory.contract.v1_knowledge import DocumentsResponse

logger = logging.getLogger("agent_memory.client")

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", ListResponse, AuditResponse, DocumentsResponse)

DEFAULT_TIMEOUT_S = 10.0
USER_AGENT = "agent-memory-client/1"


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Connection:
    """The HTTP side of `MemoryClient`: one call, retried per the policy, answered typed."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        auth: Auth | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = _utcnow,
        user_agent: str = USER_AGENT,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if api_key is not None and auth is not None:
            raise ValueError("give api_key or auth, not both")
        self.base_url = base_url.rstrip("/")
        self._auth: Auth = auth or (ApiKeyAuth(api_key) if api_key is not None else NoAuth())
        self._timeout_s = timeout_s
        self._retry = retry or RetryPolicy()
        self._transport = transport or HttpTransport()
        self._sleep = sleep
        self._clock = clock
        self._user_agent = user_agent

    def close(self) -> None:
        self._transport.close()

    # --- plumbing ------------------------------------------------------------------------------

    @staticmethod
    def _follow(fetch: Callable[[str | None], P]) -> Iterator[P]:
        """Pages from ``fetch(cursor)``, lazily, until one has no ``next_cursor``."""
        cursor: str | None = None
        while True:
            page = fetch(cursor)
            yield page
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    @staticmethod
    def _document_path(doc_id: str, *parts: str) -> str:
        if not doc_id:
            raise ValueError("doc_id is empty")
        return "/v1/knowledge/documents/" + "/".join(quote(p, safe="") for p in (doc_id, *parts))

    @staticmethod
    def _agent_path(agent_id: str, *parts: str) -> str:
        if not agent_id:
            raise ValueError("agent_id is empty")
        return "/v1/agents/" + "/".join(quote(p, safe="") for p in (agent_id, *parts))

    def _send(
        self,
        method: str,
        path: str,
        response_model: type[M],
        request: BaseModel | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> M:
        body = request.model_dump_json(exclude_none=True, by_alias=True).encode() if request else None
        raw = self._send_raw(method, path, body=body, query=query, extra_headers=headers)
        try:
            return response_model.model_validate_json(raw.body)
        except ValidationError as exc:
            raise UnexpectedResponseError(
                f"{method} {path}: the {raw.status} response is not a {response_model.__name__}: {exc}",
                raw.status,
            ) from exc

    def _send_raw(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        query: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> RawResponse:
        """One call, retried per the policy; returns a success response or raises a typed error.
        ``extra_headers`` are the route's own (``Idempotency-Key``), sent (and signed) on every
        attempt."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.base_url + path + (f"?{urlencode(params)}" if params else "")
        headers = {"Accept": "application/json", "User-Agent": self._user_agent, **(extra_headers or {})}
        if body is not None:
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            attempt += 1
            sent = {**headers, **self._auth.headers(method, url, headers, body)}
            try:
                response = self._transport.send(method, url, sent, body, self._timeout_s)
            except ssl.SSLCertVerificationError as exc:  # asking again will not fix a certificate
                raise TransportError(f"{method} {path}: {exc}", attempt) from exc
            except (OSError, http.client.HTTPException) as exc:
                if not self._retry.retry_on_connection_errors or attempt >= self._retry.max_attempts:
                    message = f"{method} {path}: {exc!r} after {attempt} attempt(s)"
                    raise TransportError(message, attempt) from exc
                delay = self._retry.backoff(attempt)
                logger.debug("retrying %s %s in %.2f s after %r", method, path, delay, exc)
                self._sleep(delay)
                continue
            if response.status < 400:
                return response
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if self._retry.retryable_status(response.status) and attempt < self._retry.max_attempts:
                delay_s = self._retry.delay(attempt, retry_after)
                if delay_s is not None:
                    logger.debug("retrying %s %s in %.2f s after %s", method, path, delay_s, response.status)
                    self._sleep(delay_s)
                    continue
            raise error_from_response(response.status, response.headers, response.body, retry_after)
