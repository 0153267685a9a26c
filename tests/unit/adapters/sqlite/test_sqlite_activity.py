"""Counts written behind (`sqlite_activity`): a search does not write the file, the counts land."""

from __future__ import annotations

import sqlite3
import time
from datetime import timedelta
from pathlib import Path

from tests.unit.adapters.sqlite.test_sqlite_store import DIM, MODEL, NOW, put, record

from agent_memory.adapters.sqlite.sqlite_activity import ActivityBuffer
from agent_memory.adapters.sqlite.sqlite_rows import to_us
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore


def _store(tmp_path: Path) -> SqliteMemoryStore:
    return SqliteMemoryStore(tmp_path / "memory.db", DIM, MODEL)


def test_counting_a_search_does_not_write_the_file_until_the_flush(tmp_path: Path) -> None:
    # GIVEN a record and another connection watching the file's version
    store, db = _store(tmp_path), tmp_path / "memory.db"
    rec = put(store, record("watched"))
    watcher = sqlite3.connect(db, isolation_level=None)
    (before,) = watcher.execute("PRAGMA data_version").fetchone()

    # WHEN a search's access, search and shared-document counts are recorded
    store.record_access("t1", "a1", [rec.id], NOW)
    store.record_search("t1", "a1", NOW, hits=1)
    store.record_document_hits("t1", ["runbook"], NOW)
    (during,) = watcher.execute("PRAGMA data_version").fetchone()
    store._activity.flush()
    (after,) = watcher.execute("PRAGMA data_version").fetchone()
    watcher.close()
    store.close()

    # THEN nothing was committed (other connections keep their page caches) until one flush
    assert during == before
    assert after != before


def test_gathered_counts_are_written_in_the_background(tmp_path: Path) -> None:
    # GIVEN a store whose counts are flushed every 50 ms
    store, db = _store(tmp_path), tmp_path / "memory.db"
    store._activity = ActivityBuffer(store._db, flush_s=0.05)
    rec = put(store, record("later"))

    # WHEN it counts accesses and a search, and nobody reads through it
    store.record_access("t1", "a1", [rec.id], NOW)
    store.record_access("t1", "a1", [rec.id], NOW - timedelta(hours=1))
    store.record_search("t1", "a1", NOW, hits=0)

    # THEN another connection sees them soon
    deadline = time.monotonic() + 5
    other = sqlite3.connect(db, isolation_level=None)
    while time.monotonic() < deadline:
        row = other.execute(
            "SELECT access_count, last_accessed_at FROM records WHERE id = ?", (rec.id,)
        ).fetchone()
        days = other.execute("SELECT searches, zero_hits FROM search_days").fetchall()
        if row[0] and days:
            break
        time.sleep(0.02)
    other.close()
    store.close()
    assert row == (2, to_us(NOW))
    assert days == [(1, 1)]
