"""A call out, on loopback: the connection goes to the address the policy checked while the request
keeps the name it was given (``Host``), and a name resolved once is not resolved again for the
connection, so a second, different DNS answer (rebinding) cannot move it."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent_memory.adapters.outbound_http import send
from agent_memory.tenancy.rules.outbound import OutboundGuard, OutboundPolicy, OutboundRefusedError


class _Receiver(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.headers["Host"], self.path, body))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def receiver() -> Iterator[tuple[int, list[tuple[str, str, bytes]]]]:
    handler = type("Receiver", (_Receiver,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], handler.seen
    server.shutdown()
    server.server_close()


def test_the_request_goes_to_the_checked_address_with_the_name_as_host(
    receiver: tuple[int, list[tuple[str, str, bytes]]],
) -> None:
    # GIVEN a name whose first DNS answer is this machine and every later one a private address
    port, seen = receiver
    answers: list[Sequence[str]] = [["127.0.0.1"]]
    lookups: list[str] = []

    def resolve(host: str, port: int) -> Sequence[str]:
        lookups.append(host)
        return answers.pop(0) if answers else ["10.0.0.7"]

    guard = OutboundGuard(OutboundPolicy(allow_loopback=True), resolve)

    # WHEN a request is sent to it, and then another
    answer = send(guard, "POST", f"http://receiver.test:{port}/in?x=1", b"{}", {"X-A": "1"}, 5.0)
    with pytest.raises(OutboundRefusedError):
        send(guard, "POST", f"http://receiver.test:{port}/in", b"{}", {}, 5.0)

    # THEN the first reached the receiver under its name, after one lookup; the second went nowhere
    assert answer.status == 204
    assert seen == [(f"receiver.test:{port}", "/in?x=1", b"{}")]
    assert lookups == ["receiver.test", "receiver.test"]
