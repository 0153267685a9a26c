"""Several processes serving the local API (`local.api_workers`): one port, one writer, one truth.

What must hold: connections are spread over the processes; a write accepted by any process is
stored once by the one writer and found by a search in every process; another tenant's key sees
nothing of it in any process; a worker that dies is replaced; stopping the runtime stops them all.
The writer runs in a process that serves no request, at a lower priority than the API's.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.e2e.conftest import Api, settled_stats, unique, wait_until

from agent_memory.errors import ConfigurationError
from agent_memory.local import api_workers
from agent_memory.local.server import LocalRuntime
from agent_memory.local.worker import WRITER_NICE
from agent_memory.settings import Settings, get_settings
from agent_memory.tenancy.rules.keys import NewKey

pytestmark = pytest.mark.skipif(not api_workers.can_share_port(), reason="needs SO_REUSEPORT (Linux)")


@pytest.fixture
def two_processes(local_env: Path) -> Iterator[LocalRuntime]:
    runtime = LocalRuntime(get_settings(), host="127.0.0.1", port=0, scheduler=False, processes=2)
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


def _serving_pids(api: Api, want: int) -> set[int]:
    """Process ids answering ``/health`` on new connections, until ``want`` of them are seen."""
    seen: set[int] = set()

    def enough() -> bool:
        seen.add(api("GET", "/health")[1]["process"])
        return len(seen) >= want

    wait_until(enough, timeout_s=30, interval_s=0.0)
    return seen


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_every_process_serves_and_sees_every_write(two_processes: LocalRuntime) -> None:
    # GIVEN a runtime in two processes, and two tenants
    api = Api(two_processes.url)
    pids = _serving_pids(api, 2)
    tenant, other = unique("t"), unique("t")
    _, key = two_processes.keys.create(NewKey(tenant, "pro"))
    _, other_key = two_processes.keys.create(NewKey(other, "pro"))

    # WHEN twenty writes arrive over new connections (so through both processes)
    accepted = []
    for i in range(20):
        status, body = api(
            "POST", "/v1/agents/a1/memories", {"items": [{"content": f"harbour crane {i}"}]}, key
        )
        assert status == 202, body
        accepted += [a["id"] for a in body["accepted"]]

    # THEN the one writer stored each once, and searches in every process find them
    assert settled_stats(api, key, "a1")["records"]["working"] == 20
    found: dict[int, set[str]] = {}

    def searched_everywhere() -> bool:
        status, body = api(
            "POST", "/v1/agents/a1/memories/search", {"query": "harbour crane", "max_results": 25}, key
        )
        pid = api("GET", "/health")[1]["process"]
        assert status == 200, body
        found.setdefault(pid, set()).update(r["id"] for r in body["results"])
        return len(found) == 2

    wait_until(searched_everywhere, timeout_s=30, interval_s=0.0)
    assert pids == set(found)
    assert set().union(*found.values()) == set(accepted)
    # AND the other tenant sees none of it, whichever process answers
    for _ in range(6):
        status, body = api("POST", "/v1/agents/a1/memories/search", {"query": "harbour crane"}, other_key)
        assert (status, body["results"]) == (200, [])


def test_a_worker_that_dies_is_replaced_and_stop_ends_them_all(two_processes: LocalRuntime) -> None:
    # GIVEN the worker process (the one that is not this one)
    api = Api(two_processes.url)
    assert two_processes.api_workers is not None
    (worker,) = two_processes.api_workers.pids

    # WHEN it is killed
    os.kill(worker, signal.SIGKILL)

    # THEN another takes its place and serves
    wait_until(lambda: two_processes.api_workers.restarts == 1, timeout_s=10)
    (replacement,) = two_processes.api_workers.pids
    assert replacement != worker
    assert replacement in _serving_pids(api, 2)
    # AND stopping the runtime stops it
    two_processes.stop()
    wait_until(lambda: not _alive(replacement), timeout_s=10)


def _nice(pid: int) -> int:
    """A process's nice value (its main thread's), from ``/proc``."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _of_threads(pid: int, what: str) -> list[str]:
    """A file of each thread of a process, from ``/proc`` (a thread that ended meanwhile: none)."""
    read = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            read.append((task / what).read_text().strip())
    return read


def test_the_writer_runs_in_a_process_of_its_own_below_the_apis_priority(two_processes: LocalRuntime) -> None:
    # GIVEN a runtime in two processes, and a write it has stored
    api = Api(two_processes.url)
    serving = _serving_pids(api, 2)
    _, key = two_processes.keys.create(NewKey(unique("t"), "pro"))
    status, body = api("POST", "/v1/agents/a1/memories", {"items": [{"content": "crane hire"}]}, key)
    assert status == 202, body
    assert settled_stats(api, key, "a1")["records"]["working"] == 1

    # WHEN the runtime's child processes are looked for the writer's thread (this process runs no
    # queue worker of this runtime; a thread of that name here would be an earlier runtime's, in
    # the same test process, still ending its last step)
    assert two_processes.worker is None
    children = {int(c) for pids in _of_threads(os.getpid(), "children") for c in pids.split()}
    writers = [pid for pid in children if "writer-worker" in _of_threads(pid, "comm")]

    # THEN one process runs it, one that serves no request, at the API's priority lowered by WRITER_NICE
    assert len(writers) == 1, writers
    (writer,) = writers
    assert writer not in serving
    assert _nice(writer) == min(19, _nice(os.getpid()) + WRITER_NICE)


def test_worker_processes_refuse_settings_that_are_not_the_environments(local_env: Path) -> None:
    # GIVEN settings that differ from what a worker process would read from the environment
    settings = Settings(data_dir=local_env, embedder="hashing", dedup_threshold=0.5)

    # WHEN a runtime of two processes is built with them
    with pytest.raises(ConfigurationError, match="environment"):
        LocalRuntime(settings, host="127.0.0.1", port=0, processes=2)

    # THEN one process takes them as they are
    LocalRuntime(settings, host="127.0.0.1", port=0).httpd.server_close()


def test_process_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a machine of 3 CPUs
    monkeypatch.setattr(os, "cpu_count", lambda: 3)

    # WHEN counts are asked for, with and without a shareable port
    counts = [api_workers.process_count(n) for n in (0, 1, 5)]
    monkeypatch.setattr(api_workers, "can_share_port", lambda: False)
    without = [api_workers.process_count(n) for n in (0, 1, 5)]

    # THEN 0 is one per CPU, and without a shareable port one process serves
    assert counts == [3, 1, 5]
    assert without == [1, 1, 1]


class Pinned:
    """One keep-alive connection, so every request on it is served by the same process."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1", "e2e tests talk to loopback only"
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        self.pid = self("GET", "/health")[1]["process"]

    def __call__(self, method: str, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")


def _one_connection_per_process(url: str, want: int) -> list[Pinned]:
    """A kept-alive connection to each of ``want`` processes, none of them idle for long.

    Found twice: first until every process has answered (one still starting, with the writer's
    process starting beside it on a loaded machine, can take longer than the server keeps an
    idle connection open: the first connection was closed under the test, a broken pipe), then
    at once again, every process up, so no connection handed back has sat idle."""
    by_pid: dict[int, Pinned] = {}

    def enough() -> bool:
        pinned = Pinned(url)
        if pinned.pid in by_pid:
            pinned.conn.close()
        else:
            by_pid[pinned.pid] = pinned
        return len(by_pid) >= want

    wait_until(enough, timeout_s=60, interval_s=0.0)
    for pinned in by_pid.values():
        pinned.conn.close()
    by_pid.clear()
    wait_until(enough, timeout_s=10, interval_s=0.0)
    return list(by_pid.values())


def test_redaction_turned_on_holds_on_every_process_from_its_answer(two_processes: LocalRuntime) -> None:
    # GIVEN a tenant whose settings both processes have read (and cached) with redaction off
    api = Api(two_processes.url)
    first, second = _one_connection_per_process(two_processes.url, 2)
    tenant = unique("t")
    _, key = two_processes.keys.create(NewKey(tenant, "pro"))
    _, admin = two_processes.keys.create(NewKey(tenant, "pro", admin=True))
    for process in (first, second):
        status, body = process("POST", "/v1/agents/a1/memories", {"items": [{"content": "warm up"}]}, key)
        assert status == 202, body

    # WHEN one process turns redaction on, and six writes follow its answer on both processes
    status, body = first(
        "PUT", "/v1/admin/settings", {"version": 0, "settings": {"redaction": {"enabled": True}}}, key=admin
    )
    assert status == 200, body
    accepted = []
    for n in range(6):
        content = f"mail jane.doe{n}@example.com phone +49 170 5550142"
        status, body = (first, second)[n % 2](
            "POST", "/v1/agents/a1/memories", {"items": [{"content": content}]}, key
        )
        assert status == 202, body
        accepted += [a["id"] for a in body["accepted"]]

    # THEN none of them is stored with the address or the number, whichever process took it
    settled_stats(api, key, "a1", timeout_s=30)
    for memory_id in accepted:
        status, memory = api("GET", f"/v1/agents/a1/memories/{memory_id}", key=key)
        assert status == 200, memory
        assert "@example.com" not in memory["content"] and "5550142" not in memory["content"], memory
