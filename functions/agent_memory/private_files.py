"""Files and directories only the user who runs the service may read: the local runtime's data
directory (memory, keys, queues, the scheduler's state, the development key) and each file in it.

Apart from the SQLite adapters, which open their databases through these (`sqlite_util.open_private`),
because the local runtime and the CLI make private files of their own.
"""

from __future__ import annotations

from pathlib import Path

#: Memory, keys, queue: readable by the user who runs the service only. SQLite creates a database's
#: ``-wal`` and ``-shm`` files with the database file's own mode, so making the file private
#: before it enters WAL mode makes them private too.
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if needed, and make it the owner's alone."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    path.chmod(PRIVATE_DIR)
    return path


def private_parent(path: Path) -> Path:
    """Create ``path`` (and its parents) the owner's alone when it does not exist yet, and leave a
    directory that exists as it is: a database may be opened in a directory the service does not
    own (``/tmp``, a home directory), whose mode is not the service's to change. The runtime makes
    its own data directory private with `private_dir`."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    return path


def private_file(path: Path | str) -> None:
    """Make an existing file the owner's alone (files made before this rule included)."""
    if str(path) != ":memory:" and Path(path).exists():
        Path(path).chmod(PRIVATE_FILE)
