"""The operating system's name for the calling thread, so ``top -H``, ``ps -L`` and ``/proc``
show which part of the runtime a thread is (Python 3.11 names its threads for Python alone).

The writer's thread and the model's bulk session are named: on a shared machine their CPU
seconds, read by thread (`benchmarks/ingest.py`), say where a bulk load's work goes. A thread a
named one starts (onnxruntime's workers) inherits the name. Linux only, best effort: elsewhere, or
where the call is refused, the thread keeps the name it had.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

#: ``prctl``'s option that sets the calling thread's name (``linux/prctl.h``).
_PR_SET_NAME = 15
#: The kernel keeps 15 bytes of a thread's name.
_MAX_NAME_BYTES = 15


def name_os_thread(name: str) -> None:
    """Give the calling thread ``name`` (cut to what the kernel keeps) where the OS has names."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None)  # the process's own symbols, libc's among them: no library search
        libc.prctl(_PR_SET_NAME, name.encode()[:_MAX_NAME_BYTES], 0, 0, 0)
