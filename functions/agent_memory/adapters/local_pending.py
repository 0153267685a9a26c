"""Pending-write markers for the embedded runtime, in SQLite.

The write service marks every accepted record as pending before it enqueues it; the writer
clears the mark once the record is stored. ``stats.pending_writes`` is the count, so a client
can wait for its writes. Marks are keyed by ``(tenant, agent, record_id)``: a redelivered message
or a client retry sets or clears the same mark, so the count cannot drift.

Clearing does not delete the mark: it turns it into a *done* tombstone that lives for the
queue's deduplication window. Every acceptance of a write is a message of its own (its
deduplication id names that acceptance), so a retry, or the same write accepted again after it
was forgotten, is delivered and its writer clears the mark: `add` marks it pending again whatever
is there, so a client that waits for ``pending_writes`` to reach 0 never reads before that write
is stored.

A mark is made for a short lease (``lease_s``) and lasts ``ttl_days`` only once its message is
on the queue (`queued`): a crash between marking and enqueueing leaves a mark that expires within
the lease, not one that counts for days with nothing queued. A queued mark that is never cleared
(a write that went to the dead letters) expires after ``ttl_days``, as the DynamoDB adapter's TTL
does, so a stuck count heals by itself instead of making clients wait forever. Expired rows are
purged on every write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from sqlite3 import Connection

from agent_memory.adapters.pending_marks import LEASE_S, mark_times
from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_writes (
    tenant_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('pending', 'done')),
    expires_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, record_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pending_writes_expiry ON pending_writes (expires_at);
"""

# Setting a mark overwrites whatever is there: a pending mark, or a tombstone of any age.
_MARK = """
INSERT INTO pending_writes (tenant_id, agent_id, record_id, state, expires_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, agent_id, record_id) DO UPDATE
SET state = excluded.state, expires_at = excluded.expires_at
"""


class LocalPendingWrites:
    """`PendingWrites` on one SQLite file, shared safely by threads and processes.

    ``dedup_window_s`` must be at least the queue's deduplication window: SQS FIFO's is 5 minutes
    (and `LocalFifoQueue` copies it). A shorter one would let a retry mark a record that the queue
    still drops, which is the stuck count the tombstones exist to prevent.
    """

    def __init__(
        self,
        path: Path,
        ttl_days: float = 14,
        dedup_window_s: float = 300.0,
        clock: Callable[[], float] = time.time,
        lease_s: float = LEASE_S,
    ) -> None:
        self._ttl_s, self._lease_s, self._dedup_window_s = mark_times(ttl_days, dedup_window_s, lease_s)
        self.path = Path(path)
        self._clock = clock
        self._db = ConnectionPerThread(self.path, _SCHEMA)

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        self._mark("pending", self._lease_s, tenant_id, agent_id, record_ids)

    def queued(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        if not record_ids:
            return
        until = self._clock() + self._ttl_s
        with self._db.transaction() as conn:
            conn.executemany(
                "UPDATE pending_writes SET expires_at = max(expires_at, ?) "
                "WHERE tenant_id = ? AND agent_id = ? AND record_id = ? AND state = 'pending'",
                [(until, tenant_id, agent_id, record_id) for record_id in record_ids],
            )

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        self._mark("done", self._dedup_window_s, tenant_id, agent_id, record_ids)

    def _mark(
        self, state: str, lifetime_s: float, tenant_id: str, agent_id: str, record_ids: Sequence[str]
    ) -> None:
        """Set ``state`` on each record's mark for ``lifetime_s``: pending marks and tombstones
        differ only in those two, and both purge what has expired first."""
        if not record_ids:
            return
        now = self._clock()
        with self._db.transaction() as conn:
            _purge(conn, now)
            conn.executemany(
                _MARK, [(tenant_id, agent_id, record_id, state, now + lifetime_s) for record_id in record_ids]
            )

    def discard(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        """Remove the marks outright, leaving no tombstone: the write was never enqueued."""
        if not record_ids:
            return
        with self._db.transaction() as conn:
            conn.executemany(
                "DELETE FROM pending_writes WHERE tenant_id = ? AND agent_id = ? AND record_id = ?",
                [(tenant_id, agent_id, record_id) for record_id in record_ids],
            )

    def count(self, tenant_id: str, agent_id: str) -> int:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM pending_writes "
                "WHERE tenant_id = ? AND agent_id = ? AND state = 'pending' AND expires_at > ?",
                (tenant_id, agent_id, self._clock()),
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()


def _purge(conn: Connection, now: float) -> None:
    """Drop expired marks and tombstones (indexed on ``expires_at``, so cheap when there are none)."""
    conn.execute("DELETE FROM pending_writes WHERE expires_at <= ?", (now,))
