"""One SQLite connection per thread, WAL, and transactions that fail as DependencyError."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread, connect
from agent_memory.errors import DependencyError

SCHEMA = "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"


def test_connect_opens_the_file_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    # WHEN
    conn = connect(tmp_path / "nested" / "x.db", busy_timeout_ms=1234)
    # THEN
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
    conn.close()


def test_each_thread_gets_its_own_connection_and_reuses_it(tmp_path: Path) -> None:
    # GIVEN
    db = ConnectionPerThread(tmp_path / "x.db", SCHEMA)
    seen: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: seen.extend([db.get(), db.get()]))
    worker.start()
    worker.join()
    # WHEN / THEN
    assert seen[0] is seen[1]
    assert seen[0] is not db.get()
    assert db.get() is db.get()


def test_a_failing_block_rolls_back_everything_it_wrote(tmp_path: Path) -> None:
    db = ConnectionPerThread(tmp_path / "x.db", SCHEMA)
    with pytest.raises(sqlite3.IntegrityError), db.transaction() as conn:
        conn.execute("INSERT INTO t VALUES ('a', 1)")
        conn.execute("INSERT INTO t VALUES ('a', 2)")
    with db.transaction(write=False) as conn:
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0


def test_a_lock_held_past_the_busy_timeout_is_a_dependency_error(tmp_path: Path) -> None:
    # GIVEN another process-like connection holding the write lock
    holder = connect(tmp_path / "x.db")
    holder.executescript(SCHEMA)
    holder.execute("BEGIN IMMEDIATE")
    db = ConnectionPerThread(tmp_path / "x.db", busy_timeout_ms=50)

    # WHEN a writer cannot get it in time, THEN it is told to retry later; readers still read
    with pytest.raises(DependencyError, match="unavailable"), db.transaction():
        pass
    with db.transaction(write=False) as conn:
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    holder.rollback()


def test_close_closes_every_threads_connection(tmp_path: Path) -> None:
    # GIVEN connections opened by a worker thread and by this one
    db = ConnectionPerThread(tmp_path / "x.db", SCHEMA)
    opened: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: opened.append(db.get()))
    worker.start()
    worker.join()
    opened.append(db.get())

    # WHEN the runtime shuts down
    db.close()

    # THEN all are closed, and a later use opens a new one
    for conn in opened:
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    assert db.get().execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # a fresh one opens on demand
