"""More processes serving the local HTTP API, so one server uses every core of its machine.

Why processes and not threads: the API handler runs one request at a time in a process (the
Powertools resolver keeps the request it is routing on the shared app, `server._API_LOCK`), and
even with per-request resolvers most of a search is Python holding the GIL. A process is what a
Lambda instance is: its own handler, container and caches. So the runtime runs the API in N
processes that all listen on one port (``SO_REUSEPORT``: the kernel spreads new connections over
them), each with its own connections to the same WAL database:

* The first process is the one `agent-memory serve` started. It serves requests too, and it alone
  runs the writer, the summarize worker and the scheduler, so they behave exactly as with one
  process: one consumer of each queue, one scheduler firing.
* The others (`serve_api_worker`) only answer requests. What they enqueue reaches the writer
  through the queue's file (`adapters.local_queue` polls for other processes' sends); what the
  writer commits they see on their next read (the vector cache watches the agent's generation).
* A worker that dies is started again; workers stop with the runtime, and on their own when the
  process that started them is gone (a killed ``serve`` does not leave the port held).

Linux only: elsewhere ``SO_REUSEPORT`` does not spread connections, and one process serves.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from typing import Any

from agent_memory.local.background import BackgroundLoop
from agent_memory.observability import logger

#: Seconds between looks at the workers (restart the dead) and, in a worker, at its parent.
SUPERVISE_EVERY_S = 1.0


def can_share_port() -> bool:
    """Whether several processes can listen on one port with the kernel spreading connections."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def process_count(requested: int) -> int:
    """How many processes serve the API: ``requested``, or one per CPU when it is 0; always 1
    where the port cannot be shared."""
    if not can_share_port():
        return 1
    return requested or max(1, os.cpu_count() or 1)


class ChildProcesses(BackgroundLoop):
    """``count`` processes running ``target(*args, parent_pid)``, restarted when one dies, until
    `stop`. ``target`` runs until SIGTERM or until this process is gone (`run_until_stopped`)."""

    def __init__(self, name: str, target: Callable[..., None], args: tuple[Any, ...], count: int) -> None:
        super().__init__(
            f"{name}-processes", failure=f"{name} supervision failed", backoff_s=SUPERVISE_EVERY_S
        )
        self._name, self._target, self._args, self._count = name, target, args, count
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded process
        self._processes: list[BaseProcess] = []
        self.restarts = 0

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes if p.pid is not None]

    def start(self) -> None:
        self._processes = [self._spawn() for _ in range(self._count)]
        super().start()

    def _spawn(self) -> BaseProcess:
        process = self._context.Process(
            target=self._target,
            args=(*self._args, os.getpid()),
            name=f"agent-memory-{self._name}",
            daemon=True,
        )
        process.start()
        return process

    def _step(self) -> float:
        for i, process in enumerate(self._processes):
            if not process.is_alive() and not self._stop.is_set():
                logger.warning(
                    "%s process exited; starting another", self._name, extra={"exitcode": process.exitcode}
                )
                self._processes[i] = self._spawn()
                self.restarts += 1
        return SUPERVISE_EVERY_S

    def stop(self, timeout: float = 5.0) -> None:
        super().stop(timeout)  # no restarts from here on
        for process in self._processes:
            process.terminate()
        deadline = time.monotonic() + timeout
        for process in self._processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1.0)


class ApiWorkers(ChildProcesses):
    """``count`` API worker processes on ``host:port`` (`serve_api_worker`)."""

    def __init__(self, host: str, port: int, count: int) -> None:
        super().__init__("api", serve_api_worker, (host, port), count)


def run_until_stopped(parent_pid: int, on_stop: Callable[[], None]) -> threading.Event:
    """In a child process: call ``on_stop`` once, on SIGTERM or when ``parent_pid`` is no longer
    this process's parent (a killed ``serve`` leaves nothing behind); the event is set then.
    Ctrl-C reaches the whole process group: the parent decides, so the child ignores SIGINT."""
    stopping = threading.Event()

    def stop(*_: Any) -> None:
        if not stopping.is_set():
            stopping.set()
            on_stop()

    def watch_parent() -> None:
        while not stopping.wait(SUPERVISE_EVERY_S):
            if os.getppid() != parent_pid:
                stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()
    return stopping


def serve_api_worker(host: str, port: int, parent_pid: int) -> None:
    """A worker process: the API on ``host:port`` (shared) until SIGTERM or its parent is gone.

    Settings come from the environment, which the process inherits from the runtime that
    started it (`LocalRuntime` checks they are the settings it runs with).
    """
    from agent_memory import container
    from agent_memory.local.server import http_server

    container.reset()
    httpd = http_server(host, port, container.local_keys(), reuse_port=True)
    container.store()  # open the store (and check its model) before taking traffic
    run_until_stopped(parent_pid, lambda: threading.Thread(target=httpd.shutdown, daemon=True).start())
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()


__all__ = [
    "ApiWorkers",
    "ChildProcesses",
    "can_share_port",
    "process_count",
    "run_until_stopped",
    "serve_api_worker",
]
