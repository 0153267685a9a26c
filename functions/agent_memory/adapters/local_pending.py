"""Pending-write markers for the embedded runtime, in SQLite.

The write service marks every accepted record as pending before it enqueues it; the writer
clears the mark once the record is stored. ``stats.pending_writes`` is the count, so a client
can wait for its writes. Marks are keyed by ``(tenant, agent, record_id)``: a redelivered message
or a client retry sets or clears the same mark, so the count cannot drift.

A mark that is never cleared (a crash between marking and enqueueing, a write that went to the
dead letters) expires after ``ttl_days``, as the DynamoDB adapter's TTL does, so a stuck count
heals by itself instead of making clients wait forever.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_memory.adapters.sqlite_util import ConnectionPerThread

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_writes (
    tenant_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, record_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pending_writes_expiry ON pending_writes (expires_at);
"""


class LocalPendingWrites:
    """`PendingWrites` on one SQLite file, shared safely by threads and processes."""

    def __init__(self, path: Path, ttl_days: float = 14, clock: Callable[[], float] = time.time) -> None:
        if ttl_days <= 0:
            raise ValueError("ttl_days must be positive")
        self.path = Path(path)
        self._ttl_s = ttl_days * 86_400
        self._clock = clock
        self._db = ConnectionPerThread(self.path, _SCHEMA)

    def add(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
        if not record_ids:
            return
        now = self._clock()
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM pending_writes WHERE expires_at <= ?", (now,))
            conn.executemany(
                "INSERT INTO pending_writes (tenant_id, agent_id, record_id, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO UPDATE SET expires_at = excluded.expires_at",
                [(tenant_id, agent_id, record_id, now + self._ttl_s) for record_id in record_ids],
            )

    def done(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> None:
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
                "SELECT COUNT(*) FROM pending_writes WHERE tenant_id = ? AND agent_id = ? AND expires_at > ?",
                (tenant_id, agent_id, self._clock()),
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()
