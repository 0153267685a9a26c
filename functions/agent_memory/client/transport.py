"""One HTTP exchange over the standard library's `http.client`, with kept-alive connections.

No third-party HTTP library: the client installs with the package's own dependencies. Idle
connections are pooled per origin (a TLS handshake to API Gateway costs more than a memory
search); a pooled connection that the server closed while idle is replaced once, transparently,
before the error counts as a failed attempt.
"""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

#: Errors that mean "the idle connection was already closed", not "the server is down".
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


@dataclass(frozen=True)
class RawResponse:
    status: int
    #: Header names in lower case (HTTP header names are case-insensitive).
    headers: Mapping[str, str]
    body: bytes


class Transport(Protocol):
    """Sends one request and returns the response, whatever its status. Raises `OSError` or
    `http.client.HTTPException` when there is no response at all."""

    def send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout_s: float
    ) -> RawResponse: ...

    def close(self) -> None: ...


_Origin = tuple[str, str, int]


class HttpTransport:
    """`Transport` over `http.client`; thread-safe (each request holds its own connection)."""

    def __init__(self, max_idle_per_origin: int = 4, ssl_context: ssl.SSLContext | None = None) -> None:
        self._max_idle = max_idle_per_origin
        self._ssl_context = ssl_context
        self._idle: dict[_Origin, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout_s: float
    ) -> RawResponse:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        default_port = 443 if parts.scheme == "https" else 80
        origin: _Origin = (parts.scheme, parts.hostname, parts.port or default_port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        conn, reused = self._take(origin, timeout_s)
        try:
            return self._exchange(origin, conn, method, target, headers, body)
        except _STALE:
            if not reused:
                raise
        conn = self._connect(origin, timeout_s)
        return self._exchange(origin, conn, method, target, headers, body)

    def _exchange(
        self,
        origin: _Origin,
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> RawResponse:
        try:
            conn.request(method, target, body=body, headers=dict(headers))
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            conn.close()
            raise
        result = RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        if response.will_close:
            conn.close()
        else:
            self._give_back(origin, conn)
        return result

    def _connect(self, origin: _Origin, timeout_s: float) -> http.client.HTTPConnection:
        scheme, host, port = origin
        if scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=self._ssl_context)
        return http.client.HTTPConnection(host, port, timeout=timeout_s)

    def _take(self, origin: _Origin, timeout_s: float) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            idle = self._idle.get(origin)
            conn = idle.pop() if idle else None
        if conn is None:
            return self._connect(origin, timeout_s), False
        conn.timeout = timeout_s
        if conn.sock is not None:
            conn.sock.settimeout(timeout_s)
        return conn, True

    def _give_back(self, origin: _Origin, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self._max_idle:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            conns = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for conn in conns:
            conn.close()
