"""Retries over real HTTP: the client's `http.client` transport against a tiny scripted server.

The server is `http.server` on 127.0.0.1 (loopback only: sockets stay closed to anything else),
answering from a script such as "429 Retry-After: 2, then 503, then 200". The client's sleep is
injected, so no test waits for real.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts

from agent_memory.client import (
    AuthenticationError,
    MemoryClient,
    RateLimitError,
    RetryPolicy,
    ServerError,
    TransportError,
)

STATS = {"records": {"working": 1}, "pending_writes": 0, "oldest": None, "newest": None}


@dataclass
class Step:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class ScriptedServer:
    """Answers each request with the next `Step`; records what it was sent and on which socket."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.seen: list[Seen] = []
        self.peers: list[tuple[str, int]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.seen.append(Seen(self.command, self.path, dict(self.headers), body))
                outer.peers.append(self.client_address)
                step = outer.script.pop(0) if outer.script else Step(500, {"error": "script ran out"})
                data = json.dumps(step.body).encode() if step.body is not None else b""
                self.send_response(step.status)
                for name, value in step.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if step.close:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _answer  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"


@pytest.fixture(autouse=True)
def _loopback_only(_network_policy: None) -> Iterator[None]:
    """Unit tests have no sockets; these need loopback, and only loopback."""
    enable_socket()
    socket_allow_hosts(["127.0.0.1"])
    yield
    disable_socket()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def client_for(server: ScriptedServer, sleeps: list[float], **kwargs: Any) -> MemoryClient:
    kwargs.setdefault("retry", RetryPolicy(max_attempts=4, base_delay_s=0.25, random=lambda: 1.0))
    return MemoryClient(server.url, api_key="am_key", sleep=sleeps.append, timeout_s=2.0, **kwargs)


def throttled(retry_after: str | None = None) -> Step:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Step(429, {"error": {"code": "throttled", "message": "slow down", "details": []}}, headers)


def unavailable(retry_after: str | None = None) -> Step:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = {"error": {"code": "dependency_unavailable", "message": "try later", "details": []}}
    return Step(503, body, headers)


def test_429_and_503_are_retried_honouring_retry_after_then_the_answer_comes_back(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    # GIVEN a service that throttles (Retry-After: 2), then is unavailable (Retry-After as a date
    # about 5 s ahead), then unavailable without a hint, then answers
    ahead = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    server.script = [throttled("2"), unavailable(ahead), unavailable(), Step(200, STATS)]

    # WHEN the client asks once
    with client_for(server, sleeps) as client:
        stats = client.stats("bot")

    # THEN it got the answer after 4 requests, waiting as told, then its own backoff (3rd retry: 1 s)
    assert stats.records == {"working": 1}
    assert len(server.seen) == 4
    assert sleeps[0] == 2.0
    assert 3.0 <= sleeps[1] <= 5.0
    assert sleeps[2] == 1.0
    assert all(s.headers["Authorization"] == "Bearer am_key" for s in server.seen)


def test_retries_run_out_into_a_typed_error_with_the_body(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    # GIVEN
    server.script = [unavailable("0")] * 2 + [
        Step(503, {"error": {"code": "dependency_unavailable", "message": "store down", "details": []}},
             {"X-Amzn-RequestId": "req-9"})
    ]  # fmt: skip

    # WHEN / THEN
    with (
        client_for(server, sleeps, retry=RetryPolicy(max_attempts=3)) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.search("bot", "x")

    assert (caught.value.code, caught.value.message, caught.value.request_id) == (
        "dependency_unavailable",
        "store down",
        "req-9",
    )
    assert len(server.seen) == 3
    assert sleeps == [0.0, 0.0]
    # the same body each time: a retried write is deduplicated by the service
    assert len({s.body for s in server.seen}) == 1


def test_a_long_retry_after_is_handed_to_the_caller_instead_of_waited(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    # GIVEN
    server.script = [throttled("120")]

    # WHEN / THEN
    with client_for(server, sleeps) as client, pytest.raises(RateLimitError) as caught:
        client.remember("bot", "x")

    assert caught.value.retry_after_s == 120.0
    assert sleeps == []
    assert len(server.seen) == 1


def test_a_401_is_not_retried(server: ScriptedServer, sleeps: list[float]) -> None:
    # GIVEN
    server.script = [
        Step(401, {"error": {"code": "unauthorized", "message": "missing or invalid API key", "details": []}})
    ]

    # WHEN / THEN
    with client_for(server, sleeps) as client, pytest.raises(AuthenticationError):
        client.stats("bot")

    assert len(server.seen) == 1


def test_connections_are_kept_alive_and_a_closed_one_is_replaced(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    # GIVEN three answers; the second tells the client it closes the connection
    server.script = [Step(200, STATS), Step(200, STATS, close=True), Step(200, STATS)]

    # WHEN
    with client_for(server, sleeps) as client:
        for _ in range(3):
            client.stats("bot")

    # THEN the first two rode one connection, the third a new one, and nothing was retried
    assert server.peers[0] == server.peers[1] != server.peers[2]
    assert sleeps == []


def test_a_server_that_is_gone_is_a_transport_error_after_the_retries(sleeps: list[float]) -> None:
    # GIVEN a port nothing listens on any more
    srv = ScriptedServer()
    url = srv.url
    srv.httpd.server_close()

    # WHEN a client allowed three attempts asks for stats
    client = MemoryClient(
        url, api_key="k", sleep=sleeps.append, retry=RetryPolicy(max_attempts=3, random=lambda: 1.0)
    )
    with pytest.raises(TransportError) as caught:
        client.stats("bot")

    # THEN it fails with a transport error after three attempts and two backoffs
    assert caught.value.attempts == 3
    assert sleeps == [0.25, 0.5]
