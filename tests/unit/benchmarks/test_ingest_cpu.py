"""The bulk-ingest benchmark's CPU accounting (benchmarks/ingest.py `server_cpu`): a thread the
runtime names for the OS (`adapters.os_threads`) is counted under its role, the rest as the API's;
a child process that runs the writer (`local.worker.WriterProcess`) is the writer's, whole."""

from __future__ import annotations

import os
import subprocess
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


#: A child that burns 0.3 s of CPU on a thread named as the writer's (still running when read) and
#: 0.3 s on its main thread.
_WRITER_CHILD = """
import sys, threading, time
from agent_memory.adapters.os_threads import name_os_thread

def busy(seconds):
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass

stop, used = threading.Event(), threading.Event()

def writer():
    name_os_thread("writer-worker")
    busy(0.3)
    used.set()
    stop.wait()

thread = threading.Thread(target=writer)
thread.start()
busy(0.3)
used.wait()
print("done", flush=True)
sys.stdin.read()
stop.set()
"""


def test_a_child_process_that_runs_the_writer_is_counted_as_the_writers_whole() -> None:
    # GIVEN a child process with the writer's thread, that has used 0.3 s there and 0.3 s besides
    before = ingest.server_cpu(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"

        # WHEN this process's CPU and its children's is read by role
        used = ingest.used_between(before, ingest.server_cpu(os.getpid()))
    finally:
        child.communicate("", timeout=30)

    # THEN all of the child's CPU is the writer's, none of it the API's
    assert used["writer"] >= 0.55
    assert used["api"] < 0.3
    assert used["embedding"] == 0.0
