"""The HTTP half of the OpenAI-compatible adapters: one JSON POST, its retries, and its errors.

Hosted providers and self-hosted servers (vLLM, Ollama, LM Studio, llama.cpp) speak the same
``POST {base}/embeddings`` and ``POST {base}/chat/completions``, so the embedder and the summarizer
share this client and differ only in the payload they send and the answer they read. It uses the
standard library's ``http.client`` on purpose (no HTTP dependency enters the deployment for two
calls), through the outbound policy: an endpoint that resolves to a private, loopback or
link-local address is never called, and never sent the key (`tenancy.rules.outbound`).

The transport is a plain callable (`Transport`), so tests answer from a script instead of the
network, and the retry and error mapping below are exercised without a socket.

The key is often the *tenant's* key with their own provider, so it is treated as a secret end to
end: it goes into the ``Authorization`` header and nowhere else (not in an error message, a log
line, a ``repr``), and neither does the request body (it holds the tenant's memories). Error
messages name the endpoint's host, the model and the HTTP status, which is what an operator needs
to fix a setting, and nothing the provider answered (some providers echo part of the key back).

Statuses, and why:

* **401, 403**: the provider refused the key. `ProviderKeyRejectedError`, at once: retrying with the
  same key cannot help, and no other key is ever tried instead.
* **400, 404, 405, 413, 422**: a wrong base URL or path, an unknown model, or a request the model
  refuses. `ConfigurationError`: no retry fixes a setting.
* **429, 5xx**: the provider is busy or unwell. Retried here a couple of times with backoff (a
  short blip should not cost a queue round trip), then `DependencyError`, and the queue retries
  the whole job later. Timeouts and connection failures are a `DependencyError` straight away.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from agent_memory.adapters.outbound_http import outbound_guard, send
from agent_memory.errors import ConfigurationError, DependencyError, ProviderKeyRejectedError
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.outbound import OutboundGuard, OutboundRefusedError

logger = logging.getLogger(__name__)

#: Attempts per request when the provider answers 429 or 5xx (the first one included).
MAX_ATTEMPTS = 3
#: Seconds to wait before the 2nd and the 3rd attempt.
BACKOFF_S = (1.0, 2.0)

_KEY_REJECTED = frozenset({401, 403})
_CONFIGURATION = frozenset({400, 404, 405, 413, 422})


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request. Its ``repr`` leaves out the headers (the key) and the body (memories)."""

    method: str
    url: str
    headers: dict[str, str] = field(repr=False)
    body: bytes = field(repr=False)
    timeout_s: float


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """One HTTP answer, whatever its status (an error status is an answer, not an exception)."""

    status: int
    body: bytes = field(repr=False)


#: Sends one request and returns the answer, or raises `DependencyError` when there is no answer
#: (timeout, refused connection, DNS failure).
Transport = Callable[[HttpRequest], HttpResponse]


def guarded_transport(guard: OutboundGuard) -> Transport:
    """The default `Transport`: one request through the outbound policy (`adapters.outbound_http`):
    the endpoint's host resolved and checked, the connection pinned to that address. A refused
    address is a `ConfigurationError` raised before anything is sent, so the provider key never
    leaves for it; an error status is returned as an answer."""

    def transport(request: HttpRequest) -> HttpResponse:
        host = urlsplit(request.url).netloc
        method, url, body = request.method, request.url, request.body
        try:
            answer = send(guard, method, url, body, request.headers, request.timeout_s)
        except OutboundRefusedError as exc:
            raise ConfigurationError(f"the OpenAI-compatible endpoint may not be called: {exc}") from None
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            # A socket or protocol error (no header, no body in it); the message names the host only.
            raise DependencyError(f"{host} is unreachable ({type(exc).__name__})") from exc
        return HttpResponse(status=answer.status, body=answer.body)

    return transport


class OpenAICompatibleClient:
    """JSON POSTs to an OpenAI-compatible API at ``endpoint`` (e.g. ``https://api.openai.com/v1``,
    ``http://localhost:11434/v1``), with ``api_key`` as a Bearer token when given.

    ``timeout_s`` bounds each attempt (a summary takes longer than an embedding: give the
    summarizer's client more). ``transport`` and ``sleep`` are injectable so tests run without a
    network and without waiting; the default transport goes through the process's outbound
    policy (`guarded_transport`).
    """

    def __init__(
        self,
        endpoint: str,
        api_key: str | None,
        transport: Transport | None = None,
        timeout_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = _endpoint_parts(endpoint)
        if timeout_s <= 0:
            raise ConfigurationError(f"timeout_s must be positive, not {timeout_s}")
        self._host = parts.netloc
        self._endpoint = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))
        self._display = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self._api_key = api_key or None
        self._transport = transport or guarded_transport(outbound_guard(get_settings()))
        self._timeout_s = timeout_s
        self._sleep = sleep

    @property
    def host(self) -> str:
        """The endpoint's host (with its port, if any): what messages and model ids name."""
        return self._host

    def __repr__(self) -> str:
        key = "<set>" if self._api_key else None
        return f"OpenAICompatibleClient(endpoint={self._display!r}, api_key={key!r})"

    def post_json(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` to ``endpoint + path`` and return the JSON object it answers.

        Raises `ProviderKeyRejectedError`, `ConfigurationError` or `DependencyError` (see the module).
        """
        model = payload.get("model")
        what = f"{self._host} ({model})" if isinstance(model, str) else self._host
        request = self._request(path, payload)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            response = self._transport(request)
            status = response.status
            if 200 <= status < 300:
                return self._json(response.body, what)
            if status in _KEY_REJECTED:
                raise ProviderKeyRejectedError(f"{what} refused the provider key: HTTP {status}")
            if status in _CONFIGURATION:
                raise ConfigurationError(
                    f"{what} refused the request: HTTP {status} (check the endpoint URL and the model name)"
                )
            if status != 429 and status < 500:
                raise DependencyError(f"{what} answered an unexpected HTTP {status}")
            if attempt < MAX_ATTEMPTS:
                delay = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1]
                logger.warning(
                    "%s answered HTTP %d; retrying in %.1f s (attempt %d of %d)",
                    what,
                    status,
                    delay,
                    attempt + 1,
                    MAX_ATTEMPTS,
                )
                self._sleep(delay)
                continue
            raise DependencyError(f"{what} answered HTTP {status} {MAX_ATTEMPTS} times in a row")
        raise AssertionError("unreachable")  # pragma: no cover

    def _request(self, path: str, payload: dict[str, Any]) -> HttpRequest:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return HttpRequest(
            method="POST",
            url=self._url(path),
            headers=headers,
            body=json.dumps(payload).encode(),
            timeout_s=self._timeout_s,
        )

    def _url(self, path: str) -> str:
        parts = urlsplit(self._endpoint)
        joined = parts.path + "/" + path.lstrip("/")
        return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))

    @staticmethod
    def _json(body: bytes, what: str) -> dict[str, Any]:
        try:
            answer = json.loads(body)
        except ValueError as exc:  # a garbled answer: nothing says it will recur
            raise DependencyError(
                f"{what} answered with invalid JSON (is the endpoint an OpenAI-compatible API?)"
            ) from exc
        if not isinstance(answer, dict):
            raise DependencyError(f"{what} answered with JSON that is not an object")
        return answer


def _endpoint_parts(endpoint: str) -> SplitResult:
    """``endpoint`` split, or a `ConfigurationError` (that does not repeat it: it may hold a secret)."""
    try:
        parts = urlsplit(endpoint.strip())
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:  # a port that is not a number, an unbalanced IPv6 bracket
        valid = False
    if not valid:
        raise ConfigurationError("the OpenAI-compatible endpoint must be an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise ConfigurationError(
            f"the OpenAI-compatible endpoint for {parts.hostname} carries credentials: "
            "give the key as the API key, not in the URL"
        )
    return parts
