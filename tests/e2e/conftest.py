"""End-to-end fixtures: the real local HTTP server on loopback, driven by the standard library.

Everything goes over a socket to ``127.0.0.1``: the server's key check, the API Gateway event it
builds, the `api` handler, the local FIFO queue and the background writer. Starting and stopping a
runtime costs about a second (the HTTP loop and the queue worker each poll at 0.5 s), so each test
module shares one runtime and tests keep apart by using their own tenants and agents.
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from tests.environment import configure_local_env

# Imported here, before any runtime starts: the server imports the api handler lazily in its request
# threads while the queue worker imports the writer handler in its own thread, and those concurrent
# first imports of Powertools can fail (see test_local_http.py::test_runtime_imports_its_handlers_
# before_serving). Loading them up front keeps every other e2e test deterministic.
import agent_memory.handlers.api
import agent_memory.handlers.writer  # noqa: F401
from agent_memory import container
from agent_memory.local.server import LocalRuntime
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.keys import NewKey

GRAINS = ("working", "daily", "weekly", "monthly", "quarterly", "yearly")

T = TypeVar("T")


def unique(prefix: str) -> str:
    """A fresh id (valid as a tenant or agent id), so tests sharing a runtime never meet."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# --- the HTTP client ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    data: bytes

    def json(self) -> Any:
        return json.loads(self.data) if self.data else None


_UNSET: Any = object()


class Api:
    """A tiny JSON client over `http.client`: one connection per request, nothing hidden.

    ``key`` sends ``Authorization: Bearer <key>``; ``authorization`` sends that header verbatim
    (for garbled ones); neither sends no header. ``body`` is encoded as JSON, ``raw`` is sent as is.
    """

    def __init__(self, base_url: str, timeout_s: float = 30.0) -> None:
        parts = urlsplit(base_url)
        assert parts.hostname == "127.0.0.1", "e2e tests talk to loopback only"
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout_s = timeout_s

    def request(
        self,
        method: str,
        path: str,
        body: Any = _UNSET,
        key: str | None = None,
        *,
        raw: bytes | str | None = None,
        authorization: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> HttpResponse:
        sent: dict[str, str] = {"Accept": "application/json", **(headers or {})}
        payload: bytes | None = None
        if raw is not None:
            payload = raw.encode("utf-8") if isinstance(raw, str) else raw
        elif body is not _UNSET:
            payload = json.dumps(body).encode("utf-8")
        if payload is not None:
            sent.setdefault("Content-Type", "application/json")
        if authorization is not None:
            sent["Authorization"] = authorization
        elif key is not None:
            sent["Authorization"] = f"Bearer {key}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request(method, path, body=payload, headers=sent)
            response = conn.getresponse()
            return HttpResponse(response.status, dict(response.getheaders()), response.read())
        finally:
            conn.close()

    def __call__(
        self,
        method: str,
        path: str,
        body: Any = _UNSET,
        key: str | None = None,
        **kwargs: Any,
    ) -> tuple[int, Any]:
        """``(status, parsed JSON body)`` of one request."""
        response = self.request(method, path, body, key, **kwargs)
        return response.status, response.json()


# --- waiting without sleeping blindly -----------------------------------------------------------


def wait_until(condition: Callable[[], T], timeout_s: float = 30.0, interval_s: float = 0.01) -> T:
    """Poll ``condition`` until it returns something truthy, and return that; fail at the deadline.

    The deadline is generous because it only costs time when the test fails: the suite runs in
    several processes on two cores, and a write stored in 50 ms when idle can take seconds there."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout_s} s; last value: {value!r}")
        time.sleep(interval_s)


def settled_stats(api: Api, key: str, agent: str, timeout_s: float = 30.0) -> dict[str, Any]:
    """The agent's stats once every accepted write is stored (``pending_writes == 0``).

    Read once more after ``pending_writes`` reached 0: the stats route counts records *before* it
    counts pending writes, so one answer can show the last write neither pending nor counted yet
    (reported as a product bug). A read that starts after pending reached 0 sees every record.
    """

    def stats() -> dict[str, Any]:
        status, body = api("GET", f"/v1/agents/{agent}/stats", key=key)
        assert status == 200, body
        return body  # type: ignore[no-any-return]

    wait_until(lambda: stats()["pending_writes"] == 0, timeout_s)
    settled = stats()
    assert settled["pending_writes"] == 0, settled
    return settled


def assert_error(body: Any, code: str | None = None) -> dict[str, Any]:
    """The documented error shape: ``{"error": {"code", "message", "details": [...]}}``."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert isinstance(error["code"], str) and error["code"], error
    assert isinstance(error["message"], str) and error["message"], error
    assert isinstance(error["details"], list), error
    if code is not None:
        assert error["code"] == code, error
    return error


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def local_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Settings for the embedded runtime in a fresh data directory, for one test."""
    data_dir = tmp_path / "data"
    configure_local_env(monkeypatch, data_dir)
    yield data_dir
    container.reset()


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`local_env` for a whole module (the shared runtime outlives one test's monkeypatch)."""
    with pytest.MonkeyPatch.context() as mp:
        data_dir = tmp_path_factory.mktemp("e2e") / "data"
        configure_local_env(mp, data_dir)
        yield data_dir
        container.reset()


@pytest.fixture(scope="module")
def runtime(module_env: Path) -> Iterator[LocalRuntime]:
    """The local runtime (HTTP server + queue worker) on an ephemeral loopback port."""
    rt = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
    rt.start()
    yield rt
    rt.stop()


@pytest.fixture(scope="module")
def api(runtime: LocalRuntime) -> Api:
    return Api(runtime.url)


@pytest.fixture
def new_key(runtime: LocalRuntime) -> Callable[..., tuple[str, str, str]]:
    """Create a key for a fresh tenant (or the one given): returns ``(tenant, key_id, key)``."""

    def make(
        tenant: str | None = None,
        plan: str = "pro",
        admin: bool = False,
        agents: frozenset[str] = frozenset(),
    ) -> tuple[str, str, str]:
        tenant = tenant or unique("t")
        key_id, key = runtime.keys.create(NewKey(tenant, plan, admin=admin, agents=agents))
        return tenant, key_id, key

    return make
