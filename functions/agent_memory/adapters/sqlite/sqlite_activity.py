"""Access counts and search counts, written behind: a search never writes to the memory file.

Why: every search used to end in two or three small write transactions (the access counts of the
records it returned, the day's search count for the console, and the hits of the shared documents
it blended in). In WAL mode a commit makes every other
connection of the file (the other request threads, the other API processes) drop its page cache
and FTS5's cached index structure before its next read. With two connections searching in turn,
at 100,000 memories of one agent, that cost each search ~10 ms: service p50 15 -> 26 ms, p95 22
-> 34 ms. The counts are best effort (a busy file skipped them), so they are gathered per process
and written by one background thread at most once per `FLUSH_S`, in one transaction, however many
searches there were: a busy server commits once a second instead of twice per search.

What a reader sees: `get`, `list`, `search_days`, `get_document` and `list_documents` flush
first, so a process reads what it counted; a search's own results may show counts up to `FLUSH_S`
old. A flush that finds the file locked (`ACCESS_BUSY_TIMEOUT_MS`) is logged and tried again at
the next one; at most `MAX_PENDING` distinct records, documents and days each wait, beyond which
new counts are dropped and logged. A process that
dies loses at most its last second of counts; `close` writes what is pending.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from agent_memory.adapters.sqlite.sqlite_database import ACCESS_BUSY_TIMEOUT_MS, SqliteDatabase
from agent_memory.adapters.sqlite.sqlite_rows import to_us
from agent_memory.errors import DependencyError

logger = logging.getLogger(__name__)

#: Seconds between two writes of the gathered counts.
FLUSH_S = 1.0
#: Distinct records, documents and (agent, day)s of each kind kept while the file cannot be written.
MAX_PENDING = 100_000

#: What is counted, per key, and how a flush adds it to the file: (count, latest at in µs) of a
#: record's accesses and of a shared document's hits, (searches, zero-hit searches) of a day.
_WRITES = {
    "access": (
        "UPDATE records SET access_count = access_count + ?, "
        "last_accessed_at = max(coalesce(last_accessed_at, ?), ?) "
        "WHERE tenant_id = ? AND agent_id = ? AND id = ?",
        lambda key, n, at: (n, at, at, *key),
    ),
    "documents": (
        "UPDATE knowledge_documents SET hits = hits + ?, last_hit_at = max(coalesce(last_hit_at, 0), ?) "
        "WHERE tenant_id = ? AND doc_id = ?",
        lambda key, n, at: (n, at, *key),
    ),
    "days": (
        "INSERT INTO search_days (tenant_id, agent_id, day, searches, zero_hits) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, agent_id, day) DO UPDATE SET "
        "searches = searches + excluded.searches, zero_hits = zero_hits + excluded.zero_hits",
        lambda key, n, zero: (*key, n, zero),
    ),
}

_Counts = dict[tuple[str, ...], tuple[int, int]]


class ActivityBuffer:
    """The counts of one process waiting to be written (see the module docstring)."""

    def __init__(self, db: SqliteDatabase, *, flush_s: float = FLUSH_S) -> None:
        self._db = db
        self._flush_s = flush_s
        self._lock = threading.Lock()
        self._write = threading.Lock()  # one flush at a time: a reader's and the thread's
        self._pending: dict[str, _Counts] = {kind: {} for kind in _WRITES}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._dropped = 0

    def access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Count one access to each of ``record_ids`` (a duplicate counts once) at ``at``."""
        at_us = to_us(at)
        self._add("access", [((tenant_id, agent_id, r), 1, at_us) for r in dict.fromkeys(record_ids)])

    def document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        """Count one hit on each of the shared documents ``doc_ids`` (a duplicate counts once)."""
        at_us = to_us(at)
        self._add("documents", [((tenant_id, d), 1, at_us) for d in dict.fromkeys(doc_ids)])

    def search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Count one search on ``at``'s UTC day, and whether it found nothing."""
        day = at.astimezone(UTC).date().isoformat()
        self._add("days", [((tenant_id, agent_id, day), 1, 1 if hits == 0 else 0)])

    def _add(self, kind: str, counts: Sequence[tuple[tuple[str, ...], int, int]]) -> None:
        """Add ``(key, n, second)`` to what waits: counts add up; the second value is a latest
        time (accesses, hits), kept at its maximum, or a count (a day's zero-hit searches)."""
        if not counts:
            return
        adds = kind == "days"
        with self._lock:
            pending = self._pending[kind]
            for key, n, second in counts:
                held = pending.get(key)
                if held is None:
                    if len(pending) >= MAX_PENDING:
                        self._dropped += 1
                        continue
                    pending[key] = (n, second)
                else:
                    pending[key] = (held[0] + n, held[1] + second if adds else max(held[1], second))
        self._start()

    def flush(self) -> None:
        """Write what is pending now, in one transaction; on a busy file keep it for the next."""
        with self._write:
            with self._lock:
                pending, dropped = self._pending, self._dropped
                self._pending, self._dropped = {kind: {} for kind in _WRITES}, 0
            if dropped:
                logger.warning("activity counts dropped: %d waited while the store was busy", dropped)
            if not any(pending.values()):
                return
            try:
                with self._db.transaction(write=True, busy_timeout_ms=ACCESS_BUSY_TIMEOUT_MS) as conn:
                    for kind, (sql, row) in _WRITES.items():
                        conn.executemany(sql, [row(key, *values) for key, values in pending[kind].items()])
            except DependencyError as exc:
                logger.warning(
                    "record_access skipped for %d records, %d documents and %d days, kept for the "
                    "next flush: %s",
                    len(pending["access"]),
                    len(pending["documents"]),
                    len(pending["days"]),
                    exc,
                )
                for kind, counts in pending.items():
                    self._add(kind, [(key, n, second) for key, (n, second) in counts.items()])

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="activity-flush", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._flush_s):
            try:
                self.flush()
            except Exception:  # best effort: never let the flusher die
                logger.exception("activity flush failed")

    def close(self) -> None:
        """Stop the background thread and write what is pending."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)
        self.flush()
