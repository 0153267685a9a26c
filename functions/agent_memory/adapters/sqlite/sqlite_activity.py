"""Access counts and search counts, written behind: a search never writes to the memory file.

Why: every search used to end in two small write transactions (the access counts of the records
it returned, and the day's search count for the console). In WAL mode a commit makes every other
connection of the file (the other request threads, the other API processes) drop its page cache
and FTS5's cached index structure before its next read. With two connections searching in turn,
at 100,000 memories of one agent, that cost each search ~10 ms: service p50 15 -> 26 ms, p95 22
-> 34 ms. The counts are best effort (a busy file skipped them), so they are gathered per process
and written by one background thread at most once per `FLUSH_S`, in one transaction, however many
searches there were: a busy server commits once a second instead of twice per search.

What a reader sees: `get`, `list` and `search_days` flush first, so a process reads what it
counted; a search's own results may show counts up to `FLUSH_S` old. A flush that finds the file
locked (`ACCESS_BUSY_TIMEOUT_MS`) is logged and tried again at the next one; at most `MAX_PENDING`
distinct records and days wait, beyond which new counts are dropped and logged. A process that
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
#: Distinct (record) and (agent, day) entries kept while the file cannot be written.
MAX_PENDING = 100_000

_AccessKey = tuple[str, str, str]  # tenant, agent, record id
_DayKey = tuple[str, str, str]  # tenant, agent, ISO day
_Counts = tuple[int, int]


class ActivityBuffer:
    """The counts of one process waiting to be written (see the module docstring)."""

    def __init__(self, db: SqliteDatabase, *, flush_s: float = FLUSH_S) -> None:
        self._db = db
        self._flush_s = flush_s
        self._lock = threading.Lock()
        self._write = threading.Lock()  # one flush at a time: a reader's and the thread's
        self._access: dict[_AccessKey, tuple[int, int]] = {}  # -> (count, latest at in µs)
        self._days: dict[_DayKey, tuple[int, int]] = {}  # -> (searches, zero-hit searches)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._dropped = 0

    def access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Count one access to each of ``record_ids`` (a duplicate counts once) at ``at``."""
        at_us = to_us(at)
        with self._lock:
            for record_id in dict.fromkeys(record_ids):
                key = (tenant_id, agent_id, record_id)
                count, latest = self._access.get(key, (0, at_us))
                if not count and len(self._access) >= MAX_PENDING:
                    self._dropped += 1
                    continue
                self._access[key] = (count + 1, max(latest, at_us))
        self._start()

    def search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Count one search on ``at``'s UTC day, and whether it found nothing."""
        key = (tenant_id, agent_id, at.astimezone(UTC).date().isoformat())
        with self._lock:
            searches, zero = self._days.get(key, (0, 0))
            if not searches and len(self._days) >= MAX_PENDING:
                self._dropped += 1
            else:
                self._days[key] = (searches + 1, zero + (1 if hits == 0 else 0))
        self._start()

    def flush(self) -> None:
        """Write what is pending now, in one transaction; on a busy file keep it for the next."""
        with self._write:
            with self._lock:
                access, days, dropped = self._access, self._days, self._dropped
                self._access, self._days, self._dropped = {}, {}, 0
            if dropped:
                logger.warning("activity counts dropped: %d waited while the store was busy", dropped)
            if not access and not days:
                return
            try:
                with self._db.transaction(write=True, busy_timeout_ms=ACCESS_BUSY_TIMEOUT_MS) as conn:
                    conn.executemany(
                        "UPDATE records SET access_count = access_count + ?, "
                        "last_accessed_at = max(coalesce(last_accessed_at, ?), ?) "
                        "WHERE tenant_id = ? AND agent_id = ? AND id = ?",
                        [(n, at, at, *key) for key, (n, at) in access.items()],
                    )
                    conn.executemany(
                        "INSERT INTO search_days (tenant_id, agent_id, day, searches, zero_hits) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, agent_id, day) DO UPDATE SET "
                        "searches = searches + excluded.searches, "
                        "zero_hits = zero_hits + excluded.zero_hits",
                        [(*key, n, zero) for key, (n, zero) in days.items()],
                    )
            except DependencyError as exc:
                logger.warning(
                    "record_access skipped for %d records and record_search for %d days, kept for "
                    "the next flush: %s",
                    len(access),
                    len(days),
                    exc,
                )
                self._requeue(access, days)

    def _requeue(
        self, access: dict[_AccessKey, tuple[int, int]], days: dict[_DayKey, tuple[int, int]]
    ) -> None:
        with self._lock:
            for key, (n, at) in access.items():
                count, latest = self._access.get(key, (0, at))
                self._access[key] = (count + n, max(latest, at))
            for key, (n, zero) in days.items():
                searches, zeros = self._days.get(key, (0, 0))
                self._days[key] = (searches + n, zeros + zero)

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
