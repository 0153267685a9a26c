"""SQLite connections for the embedded adapters: one per thread, WAL, explicit transactions.

The local runtime serves HTTP from a ``ThreadingHTTPServer`` (a thread per request) next to a
queue worker thread, and a second process (the CLI) may open the same files. SQLite handles that
well when every thread has its own connection, the database is in WAL mode (readers never block
the writer) and writers wait for the lock (``busy_timeout``) instead of failing at once.

Transactions are explicit: connections run in autocommit mode and `ConnectionPerThread.transaction`
issues ``BEGIN IMMEDIATE`` for writes, which takes the write lock up front. A deferred transaction
that reads and then writes can fail with "database is locked" when another writer got in between;
an immediate one simply waits its turn.

The memory store's file is handled the same way (`sqlite_database.SqliteDatabase` is a
`ConnectionPerThread` with pragmas of its own), so every SQLite file of the runtime shares this.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_memory.errors import DependencyError
from agent_memory.private_files import private_file, private_parent

#: How long a connection waits for another writer's lock before giving up.
DEFAULT_BUSY_TIMEOUT_MS = 10_000


class WeakReferableConnection(sqlite3.Connection):
    """A plain connection that can be weakly referenced (the C type cannot)."""


def open_private(path: Path | str, **kwargs: Any) -> sqlite3.Connection:
    """``sqlite3.connect`` of a database file (and its WAL) that only its owner may read, in a
    directory made the owner's alone when this makes it (one that exists keeps its mode)."""
    if str(path) != ":memory:":
        private_parent(Path(path).parent)
    conn = sqlite3.connect(str(path), **kwargs)
    private_file(path)
    # Deleted and overwritten content is zeroed in the file, not left in free pages and cells:
    # a forgotten memory's text must not outlive its erasure on disk (`scrub_wal` does the log).
    conn.execute("PRAGMA secure_delete = ON")
    return conn


#: Tries of a truncating checkpoint before `scrub_wal` gives up (the next one truncates).
SCRUB_ATTEMPTS = 20


def scrub_wal(conn: sqlite3.Connection) -> None:
    """Copy the write-ahead log into the database and truncate it to zero bytes, so frames that
    held rows since deleted (with `open_private`'s ``secure_delete``, zeroed in the database)
    are gone from the log too. Outside a transaction; a reader still on an old snapshot keeps
    its frames: the checkpoint is tried again (a few times, briefly) until none does."""
    for attempt in range(SCRUB_ATTEMPTS):
        (busy, _, _) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
        time.sleep(0.005 * (attempt + 1))
    logging.getLogger(__name__).warning("write-ahead log not truncated: a reader held it")


def connect(path: Path | str, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """Open ``path`` in WAL mode, autocommit, with a busy timeout and rows addressable by name.

    ``check_same_thread`` is off only so that `ConnectionPerThread.close` may close a connection
    from the thread shutting the runtime down; each connection is still used by one thread.
    """
    conn = open_private(
        path,
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,
        check_same_thread=False,
        factory=WeakReferableConnection,
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode = WAL")
    # NORMAL is durable against application crashes in WAL mode; only an OS crash or power loss
    # can lose the last commits, which the local runtime accepts for much cheaper commits.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class ConnectionPerThread:
    """Hands each thread its own connection to one database file.

    ``schema`` (SQL statements, ``CREATE ... IF NOT EXISTS``) is applied once, when the object is
    made, so every process that opens the file brings it up to date.

    Connections live as long as their thread: when a request thread ends, its connection is
    released with it, so a long-running server does not accumulate them.

    ``name`` is how errors call the file (its path unless given). A subclass that needs other
    pragmas on its connections overrides `_open`.
    """

    def __init__(
        self,
        path: Path | str,
        schema: str = "",
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        name: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = str(self.path) if name is None else name
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        if schema:
            try:
                self.get().executescript(schema)
            except sqlite3.OperationalError as exc:
                raise DependencyError(f"cannot initialise {self.path}: {exc}") from exc

    def _open(self) -> sqlite3.Connection:
        """A new connection to the file (`get` opens one per thread with this)."""
        return connect(self.path, busy_timeout_ms=self._busy_timeout_ms)

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._open()
            except sqlite3.OperationalError as exc:
                raise DependencyError(f"cannot open {self.name}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._all.add(conn)
        return conn

    @contextmanager
    def transaction(
        self, *, write: bool = True, busy_timeout_ms: int | None = None
    ) -> Iterator[sqlite3.Connection]:
        """Run the block in one transaction: committed on success, rolled back on any error.

        ``write=True`` takes the write lock at once (``BEGIN IMMEDIATE``); ``write=False`` gives
        a consistent read snapshot. A lock that cannot be had within the busy timeout, a full disk
        or a corrupt file surface as `DependencyError`: retrying later may succeed.
        ``busy_timeout_ms`` shortens the wait for the lock for this transaction only.
        """
        conn = self.get()
        if busy_timeout_ms is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        try:
            with transaction(conn, self.name, write=write) as tx:
                yield tx
        finally:
            if busy_timeout_ms is not None:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")

    def close(self) -> None:
        """Close every connection this object opened (at shutdown, when no thread still uses them)."""
        with self._lock:
            conns = list(self._all)
            self._all = weakref.WeakSet()
        for conn in conns:
            conn.close()
        self._local = threading.local()


@contextmanager
def transaction(conn: sqlite3.Connection, name: str, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction on ``conn``: committed on success, rolled back on any error.

    ``write=True`` takes the write lock at once (``BEGIN IMMEDIATE``); ``write=False`` gives a
    consistent read snapshot. Lock timeouts, a full disk or a corrupt file surface as
    `DependencyError` naming ``name``: retrying later may succeed.
    """
    try:
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    except sqlite3.OperationalError as exc:
        raise DependencyError(f"{name} is unavailable: {exc}") from exc
    try:
        yield conn
    except sqlite3.OperationalError as exc:
        conn.rollback()
        raise DependencyError(f"{name} is unavailable: {exc}") from exc
    except BaseException:
        conn.rollback()
        raise
    try:
        conn.commit()
    except sqlite3.OperationalError as exc:
        conn.rollback()
        raise DependencyError(f"{name} is unavailable: {exc}") from exc
