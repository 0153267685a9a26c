"""A daemon thread that repeats one step until stopped: the loop the local scheduler and the
queue workers share.

One place for starting, stopping and surviving a failed step, so every background part of the
local runtime stops the same way (`stop` wakes a waiting loop at once) and none of them can die
of an exception and silently stop doing its work.
"""

from __future__ import annotations

import threading

from agent_memory.observability import logger


class BackgroundLoop:
    """Runs `_step` on a daemon thread until `stop`, waiting between steps as `_step` says.

    A step that raises is logged with ``failure`` and followed by a wait of ``backoff_s``, so a
    persistent failure neither kills the thread nor spins it.
    """

    def __init__(self, thread_name: str, *, failure: str, backoff_s: float) -> None:
        self._thread_name = thread_name
        self._failure = failure
        self._backoff_s = backoff_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _step(self) -> float:
        """One round of work; how many seconds to wait before the next (0: at once)."""
        raise NotImplementedError

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                wait = self._step()
            except Exception:  # never let the loop die: log, back off, go on
                logger.exception(self._failure)
                wait = self._backoff_s
            if wait > 0:
                self._stop.wait(wait)
