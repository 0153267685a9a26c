"""The bulk-ingest benchmark's CPU accounting (benchmarks/ingest.py `server_cpu`): a thread the
runtime names for the OS (`adapters.os_threads`) is counted under its role, the rest as the API's."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import ingest
from agent_memory.adapters.os_threads import name_os_thread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _busy(name: str, seconds: float, done: threading.Event) -> None:
    name_os_thread(name)
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass
    done.wait()


def test_a_named_threads_cpu_is_counted_under_its_role_and_the_rest_under_the_api() -> None:
    # GIVEN a thread named as the writer's that has used 0.4 s of CPU, still running
    done = threading.Event()
    thread = threading.Thread(target=_busy, args=("writer-worker", 0.4, done))
    before = ingest.server_cpu(os.getpid())
    thread.start()
    deadline = time.monotonic() + 30
    while ingest.server_cpu(os.getpid())["writer"] - before["writer"] < 0.3 < deadline - time.monotonic():
        time.sleep(0.05)

    # WHEN this process's CPU is read by role
    used = ingest.used_between(before, ingest.server_cpu(os.getpid()))
    done.set()
    thread.join()

    # THEN the writer's share is that thread's, and no embedding thread is running here
    assert 0.3 <= used["writer"] < 0.8
    assert used["embedding"] == 0.0
    assert used["api"] >= 0.0
