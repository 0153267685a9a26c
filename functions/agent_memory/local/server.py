"""The local HTTP server: turns requests into API Gateway proxy events for the same `api` handler.

It plays API Gateway's part: it checks the bearer key (hashed, against ``auth.db``), fills the
authorizer context, refuses oversized bodies with 413, and returns the handler's response as is.
A `QueueWorker` drains the local FIFO queue into the writer in the background (in a process of
its own, `local.worker.WriterProcess`, when the API is served by several), a second one
drains summarize jobs into the summarize worker, a third the change events' outbox into the
webhook delivery, and the `LocalScheduler` fires the cascade on its schedules (unless turned off).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
import uuid
from collections import deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import parse_qs, urlsplit

from agent_memory import container
from agent_memory.adapters.local_change_feed import CHANGES_QUEUE_ARN
from agent_memory.adapters.local_jobs import JOBS_QUEUE_ARN
from agent_memory.errors import ConfigurationError
from agent_memory.handlers import (
    api,
    # Imported now, in one thread: the scheduler thread would import it on its first firing, and
    # Powertools modules imported from two threads at once can be seen half-initialised.
    summarize_dispatch,  # noqa: F401
    summarize_worker,
    webhook_delivery,
)
from agent_memory.handlers.export_routes import FILE_HEADER
from agent_memory.local.api_workers import ApiWorkers, process_count
from agent_memory.local.console import console_response, is_console_path
from agent_memory.local.lambda_context import LocalContext
from agent_memory.local.scheduler import LocalScheduler
from agent_memory.local.worker import QueueWorker, WriterProcess
from agent_memory.model.limits import MAX_BODY_BYTES
from agent_memory.observability import discard_unpublished_metrics, logger
from agent_memory.ports import KeyStore
from agent_memory.private_files import private_dir
from agent_memory.settings import Settings, get_settings
from agent_memory.tenancy.rules.keys import bearer_token

STAGE = "local"


class FairLock:
    """A lock handed to its waiters in the order they came (`threading.Lock` is not: under
    contention a thread can lose the race again and again, and its request waits many turns)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._waiters: deque[threading.Lock] = deque()
        self._held = False

    def __enter__(self) -> None:
        with self._guard:
            if not self._held:
                self._held = True
                return
            turn = threading.Lock()
            turn.acquire()
            self._waiters.append(turn)
        turn.acquire()  # released by the holder that hands the lock over

    def __exit__(self, *exc: object) -> None:
        with self._guard:
            if self._waiters:
                self._waiters.popleft().release()  # still held: now by the next in line
            else:
                self._held = False


#: One request at a time through the API handler, as one Lambda instance runs them: the
#: Powertools resolver keeps the current request on the shared app (event, route arguments,
#: logger keys), so two threads inside it at once read each other's request. A browser (the
#: console) sends requests in parallel; the threads still read bodies and write responses
#: concurrently. First come, first served: with many clients, no request waits behind others
#: that arrived after it.
_API_LOCK = FairLock()


#: A request (its line, headers and body) must arrive whole within this many seconds of the
#: server starting to wait for it, however slowly its bytes trickle in; an idle kept-alive
#: connection is closed after as long.
REQUEST_TIMEOUT_S = 30.0
#: Seconds a single read may wait for the next bytes.
IDLE_TIMEOUT_S = 15.0
#: Headers that frame a request or say who sends it: two of one are refused, as a proxy in front
#: could read the other one (request smuggling, a key switched behind a cache).
SINGLE_HEADERS = ("content-length", "transfer-encoding", "authorization", "content-type", "host")

#: What a ``Content-Length`` may be: ASCII decimal digits, nothing else; a chunk's size: hex digits.
_DIGITS = re.compile(r"[0-9]{1,20}")
_HEX_DIGITS = re.compile(rb"[0-9A-Fa-f]{1,16}")

#: The error body's code for each refusal the server makes before the handler runs. Messages are
#: fixed: the standard library's quote the request line back.
_REFUSALS = {
    400: ("bad_request", "the request is malformed"),
    408: ("request_timeout", f"the request did not arrive within {REQUEST_TIMEOUT_S:.0f} s"),
    413: ("payload_too_large", f"request body is larger than {MAX_BODY_BYTES} bytes"),
    414: ("uri_too_long", "the request line is too long"),
    431: ("request_header_fields_too_large", "a header is too large, or there are too many"),
    505: ("http_version_not_supported", "HTTP/1.0 and HTTP/1.1 only"),
}


def _error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "details": []}}).encode()


def _read_chunked(stream: BinaryIO, limit: int) -> bytes | None:
    """Decode an HTTP/1.1 chunked body; None when it grows past `limit`. Raises ValueError when
    the framing is broken."""
    body = bytearray()
    while True:
        size_line = stream.readline(1026)
        digits = size_line.split(b";", 1)[0].strip(b" \t\r\n")
        if not _HEX_DIGITS.fullmatch(digits):  # not `int(..., 16)` alone: it reads +5, -5 and 0x5
            raise ValueError("malformed chunk size")
        size = int(digits, 16)
        if size == 0:
            break
        if len(body) + size > limit:
            return None
        chunk = stream.read(size)
        if len(chunk) != size or stream.readline(3).strip():
            raise ValueError("truncated chunk")
        body += chunk
    while stream.readline(8192).strip():  # trailers, ignored
        pass
    return bytes(body)


def build_event(
    method: str,
    raw_path: str,
    headers: dict[str, str],
    body: str | None,
    authorizer: dict[str, str],
    source_ip: str,
) -> dict[str, Any]:
    """An API Gateway REST (v1 proxy) event, as the deployed stack would deliver it."""
    parts = urlsplit(raw_path)
    multi = parse_qs(parts.query, keep_blank_values=True)
    path = parts.path
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/{proxy+}",
            "httpMethod": method,
            "path": f"/{STAGE}{path}",
            "stage": STAGE,
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": int(time.time() * 1000),
            "identity": {"sourceIp": source_ip},
            "authorizer": authorizer,
        },
        "body": body,
        "isBase64Encoded": False,
    }


class _Handler(BaseHTTPRequestHandler):
    server_version = "agent-memory-local"
    protocol_version = "HTTP/1.1"
    # A request line that cannot be parsed is answered as HTTP/1.1 (status line, headers, JSON),
    # not as HTTP/0.9 (a bare body).
    default_request_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    request_timeout_s = REQUEST_TIMEOUT_S
    keys: KeyStore  # set on the subclass the server builds

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without NODELAY, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every response on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reading = threading.Lock()
        self._watchdog: threading.Timer | None = None

    def handle_one_request(self) -> None:
        """One request, read within `REQUEST_TIMEOUT_S` (a watchdog answers 408 and closes)."""
        self._watchdog = threading.Timer(self.request_timeout_s, self._timed_out)
        self._watchdog.daemon = True
        self._watchdog.start()
        try:
            super().handle_one_request()
        finally:
            self._read_done()

    def _read_done(self) -> None:
        with self._reading:
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None

    def _timed_out(self) -> None:
        with self._reading:
            if self._watchdog is None:  # the request was read in time: the handler owns the socket
                return
            self._watchdog = None
            self.close_connection = True
            try:
                self.wfile.write(self._refusal_bytes(408))
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _refusal_bytes(self, status: int) -> bytes:
        code, message = _REFUSALS.get(status, ("bad_request", HTTPStatus(status).phrase))
        body = _error_body(code, message)
        head = (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        return head.encode("ascii") + body

    def parse_request(self) -> bool:
        """The standard parse, then the framing read strictly (400 otherwise), as a proxy in front
        would have to read it for the two never to disagree on where a request ends: framing
        headers sent once; ``Transfer-Encoding`` exactly ``chunked``, if sent; ``Content-Length``
        plain decimal digits, if sent (not ``+2``, ``-1``, ``0x2``, ``1_0`` or a folded line,
        which ``int`` would read); never both."""
        if not super().parse_request():
            return False
        for name in SINGLE_HEADERS:
            if len(self.headers.get_all(name) or []) > 1:
                self.send_error(400, f"duplicate {name} header")
                return False
        length, coding = self.headers.get("Content-Length"), self.headers.get("Transfer-Encoding")
        if length is not None and coding is not None:
            self.send_error(400, "both Content-Length and Transfer-Encoding")
            return False
        if coding is not None and coding.strip(" \t").lower() != "chunked":
            self.send_error(400, "Transfer-Encoding other than chunked")
            return False
        if length is not None and not _DIGITS.fullmatch(length.strip(" \t")):
            self.send_error(400, "Content-Length is not a decimal number")
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: handlers log structured
        return

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every refusal the standard library makes (400, 414, 431, 505...) in the documented
        error body, and the connection closed: what follows a malformed request cannot be
        trusted to start a new one."""
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method no route has (HEAD, OPTIONS, QUERY, ...)
            self._no_such_method()
            return
        self._read_done()
        self.close_connection = True
        self.log_error("refused: %d %s", code, message or "")
        payload = self._refusal_bytes(code)
        if self.command == "HEAD":
            payload = payload[: payload.index(b"\r\n\r\n") + 4]
        self.wfile.write(payload)

    def _no_such_method(self) -> None:
        """Answered as API Gateway does (404, the documented error body, no key needed), not with
        the standard library's 501 page."""
        if self._read_body() is None:
            return
        self._read_done()
        body = _error_body("not_found", "no such route")
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._read_done()  # the watchdog must not answer over a response
        self.send_response(status)
        sent = {k.lower() for k in (headers or {})}
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if "content-type" not in sent:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_file(self, path: Path, headers: dict[str, str]) -> None:
        """Stream an export file the download route named (`export_routes.FILE_HEADER`), a
        megabyte at a time: only a file under the data directory's ``exports/``."""
        exports = (get_settings().data_dir / "exports").resolve()
        try:
            resolved = path.resolve(strict=True)
            if not resolved.is_relative_to(exports):
                raise FileNotFoundError(path)
            stream = resolved.open("rb")
        except OSError:
            self._send(404, _error_body("not_found", "export not found"))
            return
        with stream:
            self._read_done()
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(os.fstat(stream.fileno()).st_size))
            self.end_headers()
            shutil.copyfileobj(stream, self.wfile, 1 << 20)

    def _read_body(self) -> bytes | None:
        """The request body, whole, or None once an error has been answered.

        A chunked body is read (clients that stream JSON send one) up to the same limit as a
        sized one; answering before the client has finished sending would break its pipe."""
        too_large = _error_body("payload_too_large", f"request body is larger than {MAX_BODY_BYTES} bytes")
        if self.headers.get("Transfer-Encoding") is not None:  # chunked: `parse_request` allows no other
            try:
                raw = _read_chunked(cast("BinaryIO", self.rfile), MAX_BODY_BYTES)
            except ValueError:
                self.close_connection = True
                self._send(400, _error_body("bad_request", "malformed chunked body"))
                return None
            if raw is None:
                self.close_connection = True
                self._send(413, too_large)
            return raw
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send(400, _error_body("bad_request", "invalid Content-Length"))
            return None
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # do not read a body we refuse
            self._send(413, too_large)
            return None
        return self.rfile.read(length) if length else b""

    def _dispatch(self) -> None:
        raw = self._read_body()
        self._read_done()
        if raw is None:
            return
        if urlsplit(self.path).path == "/health":
            self._send(200, json.dumps({"status": "ok", "process": os.getpid()}).encode())
            return
        if is_console_path(urlsplit(self.path).path):  # static files: no key needed to load the page
            status, payload, headers = console_response(self.command, urlsplit(self.path).path)
            self._send(status, payload, headers)
            return
        token = bearer_token(self.headers.get("Authorization"))
        caller = self.keys.lookup(token) if token else None
        if caller is None:
            self._send(
                401, _error_body("unauthorized", "missing or invalid API key"), {"WWW-Authenticate": "Bearer"}
            )
            return
        try:
            body = raw.decode("utf-8") if raw else None
        except UnicodeDecodeError:
            self._send(400, _error_body("invalid_json", "the request body is not UTF-8"))
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
        event = build_event(
            self.command,
            self.path,
            headers,
            body,
            {**caller.to_authorizer(), "principalId": caller.key_id},
            self.client_address[0],
        )
        try:
            with _API_LOCK:
                result = api.handler(event, cast("Any", LocalContext(function_name="api")))
        except Exception:  # API Gateway answers 502 when the function fails; so do we
            logger.exception("api handler failed")
            self._send(502, _error_body("bad_gateway", "the API function failed"))
            return
        finally:
            discard_unpublished_metrics()
        out_headers = dict(result.get("headers") or {})
        for name, values in (result.get("multiValueHeaders") or {}).items():
            out_headers.setdefault(name, ", ".join(values))
        file = out_headers.pop(FILE_HEADER, None)
        if file is not None and int(result.get("statusCode", 500)) == 200:
            self._send_file(Path(file), out_headers)
            return
        self._send(
            int(result.get("statusCode", 500)), (result.get("body") or "").encode("utf-8"), out_headers
        )


class _HttpServer(ThreadingHTTPServer):
    """The standard threading server, with a listen backlog for many clients connecting at once
    (the default 5 drops SYNs, which clients retry only after a second) and, for API worker
    processes, a port shared with the other processes (`local.api_workers`)."""

    daemon_threads = True
    request_queue_size = 256
    reuse_port = False

    def server_bind(self) -> None:
        if self.reuse_port:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()


def http_server(host: str, port: int, keys: KeyStore, *, reuse_port: bool = False) -> ThreadingHTTPServer:
    """The API's HTTP server on ``host:port``, bound and listening, checking keys in ``keys``."""
    handler_cls = type("Handler", (_Handler,), {"keys": keys})
    server = _HttpServer((host, port), handler_cls, bind_and_activate=False)
    server.reuse_port = reuse_port
    try:
        server.server_bind()
        server.server_activate()
    except BaseException:
        server.server_close()
        raise
    return server


#: Seconds before a failed summarize job is retried, times its receive count (a refresh waiting
#: for its child's write needs the writer to catch up, not a quick retry).
JOB_RETRY_BASE_DELAY_S = 2.0


class LocalRuntime:
    """The API server, the queue workers and the scheduler, started and stopped together.

    ``scheduler`` overrides ``settings.scheduler_enabled`` (``serve --no-scheduler``).
    ``processes`` is how many processes serve the API (`local.api_workers.process_count`); this
    one is the first, and the only one running the queue workers and the scheduler. With more than
    one, the writer runs in a process of its own at lower priority (`WriterProcess`: ``worker`` is
    None), so that no search shares an interpreter with a bulk load. One unless asked: tests and
    benchmarks that drive the runtime in-process rely on one process.
    """

    def __init__(
        self,
        settings: Settings,
        host: str = "127.0.0.1",
        port: int = 8000,
        scheduler: bool | None = None,
        *,
        processes: int = 1,
    ) -> None:
        self.settings = settings
        private_dir(settings.data_dir)  # memory, keys and queues: the owner's alone
        self.keys = container.local_keys()
        processes = process_count(processes)
        if processes > 1 and settings != get_settings():
            raise ConfigurationError(
                "API worker processes read their settings from the environment: "
                "run several processes only with the environment's settings"
            )
        self.processes = processes
        self.httpd = http_server(host, port, self.keys, reuse_port=processes > 1)
        bound_host, bound_port = self.httpd.server_address[:2]
        self.api_workers = (
            ApiWorkers(str(bound_host), int(bound_port), processes - 1) if processes > 1 else None
        )
        queue = container.local_writes()
        assert queue is not None, "the local runtime needs the local queue"
        self.writer_process = WriterProcess() if processes > 1 else None
        self.worker = QueueWorker(queue) if self.writer_process is None else None
        jobs = container.local_job_fifo()
        assert jobs is not None, "the local runtime needs the local job queue"
        self.job_worker = QueueWorker(
            jobs,
            handler=summarize_worker.handler,
            name="summarize-worker",
            queue_arn=JOBS_QUEUE_ARN,
            retry_base_delay_s=JOB_RETRY_BASE_DELAY_S,
        )
        feed = container.current().feed
        #: Change events from the outbox to the tenants' webhooks, never on a request's thread.
        self.delivery_worker = (
            QueueWorker(
                feed.outbox,
                handler=webhook_delivery.handler,
                name="webhook-delivery",
                queue_arn=CHANGES_QUEUE_ARN,
                retry_delay_s=feed.delivery.retry_delay_s,
            )
            if settings.change_feed == "local"
            else None
        )
        enabled = settings.scheduler_enabled if scheduler is None else scheduler
        self.scheduler = (
            LocalScheduler(
                timezone=settings.timezone,
                state_path=settings.data_dir / "scheduler.json",
                clock=container.clock(),
            )
            if enabled
            else None
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def _start_background(self) -> None:
        container.store()  # open the store (and check its model) before taking traffic
        if self.api_workers is not None:
            self.api_workers.start()
        if self.writer_process is not None:
            self.writer_process.start()
        if self.worker is not None:
            self.worker.start()
        self.job_worker.start()
        if self.delivery_worker is not None:
            self.delivery_worker.start()
        if self.scheduler is not None:
            self.scheduler.start()

    def start(self) -> None:
        self._start_background()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="http", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self._start_background()
        try:
            self.httpd.serve_forever()
        finally:
            self.stop()

    def stop(self) -> None:
        if self.api_workers is not None:
            self.api_workers.stop()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.delivery_worker is not None:
            self.delivery_worker.stop()
        self.job_worker.stop()
        if self.worker is not None:
            self.worker.stop()
        if self.writer_process is not None:
            self.writer_process.stop()


__all__ = ["LocalRuntime", "build_event"]
