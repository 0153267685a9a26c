"""Requests out of this service, made only as the outbound policy allows (`tenancy.rules.outbound`).

The one place a tenant-named URL is called: the webhook sender and the OpenAI-compatible client
both send through `send`. The URL's host is resolved and checked by the `OutboundGuard` first,
and the connection then goes to exactly that address: ``http.client`` connects to the checked IP
while keeping the name for the ``Host`` header and for TLS (SNI, and the certificate checked
against the name), so a second DNS answer can never move it (rebinding). No redirect is followed
and no proxy from the environment is used: either would send the request somewhere unchecked.

`system_resolver` is the `Resolver` of a deployment (``getaddrinfo``); `outbound_guard` builds
the guard from the one validated `Settings` (``outbound_allow_loopback``).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from agent_memory.settings import Settings
from agent_memory.tenancy.rules.outbound import OutboundGuard, OutboundPolicy, Target


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer, whatever its status; ``body`` read up to the sender's limit."""

    status: int
    body: bytes


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, as the operating system's resolver answers."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def outbound_guard(settings: Settings) -> OutboundGuard:
    """The guard every call out of this process goes through, from its settings."""
    return OutboundGuard(OutboundPolicy(allow_loopback=settings.outbound_allow_loopback), system_resolver)


@cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _connection(target: Target, timeout_s: float) -> http.client.HTTPConnection:
    """A connection to ``target``'s name that connects to its checked address and nowhere else."""
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = http.client.HTTPSConnection(target.host, target.port, timeout=timeout_s, context=_tls())
    else:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout_s)
    address = str(target.address)

    def pinned(where: tuple[str, int], timeout: Any = None, source: Any = None) -> socket.socket:
        return socket.create_connection((address, where[1]), timeout, source)

    connection._create_connection = pinned  # type: ignore[attr-defined]
    return connection


def send(
    guard: OutboundGuard,
    method: str,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout_s: float,
    max_answer_bytes: int | None = None,
) -> Answer:
    """Send one request to ``url`` if the guard allows its address (`OutboundRefusedError` if not),
    pinned to that address; the answer (an error status is an answer, not an exception).
    Raises OSError or ``http.client.HTTPException`` when there is no answer."""
    target = guard.target(url)
    parts = urllib.parse.urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = _connection(target, timeout_s)
    try:
        connection.request(method, path, body=body, headers=dict(headers))
        response = connection.getresponse()
        data = response.read() if max_answer_bytes is None else response.read(max_answer_bytes)
        return Answer(response.status, data)
    finally:
        connection.close()
