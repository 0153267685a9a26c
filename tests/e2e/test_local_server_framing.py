"""The local server at the byte level: every refusal it makes itself (a malformed request line,
a header too large, too many headers, a path too long, framing headers sent twice, a request that
trickles in) is answered with a status line and the documented JSON error body, then closed."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.local.server import LocalRuntime


def _exchange(runtime: LocalRuntime, raw: bytes, read_timeout_s: float = 10.0) -> tuple[int, dict[str, Any]]:
    host, port = runtime.httpd.server_address[:2]
    with socket.create_connection((host, port), timeout=read_timeout_s) as conn:
        conn.sendall(raw)
        return _response(conn)


def _response(conn: socket.socket) -> tuple[int, dict[str, Any]]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"closed without a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = conn.recv(65536)
        assert chunk
        rest += chunk
    assert headers["content-type"] == "application/json"
    return status, json.loads(rest[:length])


def _assert_error(body: dict[str, Any], code: str) -> None:
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body


GOOD = b"GET /health HTTP/1.1\r\nHost: x\r\n"
POST = b"POST /health HTTP/1.1\r\nHost: x\r\n"
CHUNKED = b"Transfer-Encoding: chunked\r\n\r\n"
BAD = "bad_request"
#: Framing a lenient reader takes and a proxy in front may read otherwise (request smuggling):
#: a transfer coding that is not exactly chunked, a length or chunk size that ``int`` reads but
#: that is not plain digits.
CODINGS = (b"xchunked", b"chunked, gzip", b"gzip, chunked", b"identity", b"chunkedx")
LENGTHS = (b"+2", b"-1", b"0x2", b"1_0", b"2, 2", b"\x0b2", b"2\r\n 0", b"\xd9\xa2", b"9" * 30)
CHUNK_SIZES = (b"+2", b"-2", b"0x2", b"2_", b"")
TOO_LARGE = "request_header_fields_too_large"


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"GARBAGE\r\n\r\n", 400, "bad_request"),
        (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
        (b"GET /health HTTP/1.1 extra words\r\n\r\n", 400, "bad_request"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "uri_too_long"),
        (GOOD + b"X-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431, "request_header_fields_too_large"),
        (
            GOOD + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n",
            431,
            "request_header_fields_too_large",
        ),
        (b"POST /health HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}", 400, "bad_request"),
        (GOOD + b"Authorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n", 400, "bad_request"),
        (GOOD + b"Content-Type: application/json\r\nContent-Type: text/plain\r\n\r\n", 400, "bad_request"),
        (
            b"POST /health HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400,
            "bad_request",
        ),
        *[(POST + b"Transfer-Encoding: " + coding + b"\r\n\r\n0\r\n\r\n", 400, BAD) for coding in CODINGS],
        *[(POST + b"Content-Length: " + length + b"\r\n\r\n{}", 400, BAD) for length in LENGTHS],
        *[(POST + CHUNKED + size + b"\r\n{}\r\n0\r\n\r\n", 400, BAD) for size in CHUNK_SIZES],
    ],
)
def test_refusals_the_server_makes_itself_carry_the_error_body(
    runtime: LocalRuntime, raw: bytes, status: int, code: str
) -> None:
    # WHEN
    got, body = _exchange(runtime, raw)
    # THEN
    assert got == status, body
    _assert_error(body, code)


@pytest.fixture
def short_timeout(runtime: LocalRuntime) -> Iterator[float]:
    handler = runtime.httpd.RequestHandlerClass
    before = handler.request_timeout_s  # type: ignore[attr-defined]
    handler.request_timeout_s = 1.0  # type: ignore[attr-defined]
    yield 1.0
    handler.request_timeout_s = before  # type: ignore[attr-defined]


def test_a_request_trickled_in_is_cut_off_with_a_408(runtime: LocalRuntime, short_timeout: float) -> None:
    # GIVEN
    host, port = runtime.httpd.server_address[:2]
    started = time.monotonic()
    # WHEN
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(b"GET /health HTTP/1.1\r\n")
        for _ in range(3):  # a byte at a time: each read gets data, the whole never arrives
            time.sleep(short_timeout / 2)
            try:
                conn.sendall(b"X")
            except OSError:
                break
        status, body = _response(conn)
    # THEN
    assert status == 408
    _assert_error(body, "request_timeout")
    assert time.monotonic() - started < short_timeout * 4


def test_a_request_in_time_is_served_and_an_idle_connection_is_closed_after_the_timeout(
    runtime: LocalRuntime, short_timeout: float
) -> None:
    host, port = runtime.httpd.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(GOOD + b"\r\n")
        assert _response(conn) == (200, {"status": "ok", "process": os.getpid()})
        # WHEN the connection then idles past the timeout THEN the server closes it (after a 408)
        time.sleep(short_timeout * 2)
        rest = b""
        while chunk := conn.recv(65536):
            rest += chunk
        assert rest == b"" or rest.startswith(b"HTTP/1.1 408 ")
