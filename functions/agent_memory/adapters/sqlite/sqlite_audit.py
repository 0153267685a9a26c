"""`ports.AuditLog` on the memory store's ``audit`` table: who forgot, erased, merged or deleted
what, and when.

The trail outlives the records it speaks of (retention and purges never delete from it), and
appending is idempotent per record, action and instant, so a retried write never doubles an
event. `insert_audit` is shared with the record writes (`sqlite_records`) that append an event in
the same transaction as the change it records.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import decode_cursor, encode_cursor, keyset
from agent_memory.adapters.sqlite.sqlite_rows import from_us, to_us
from agent_memory.ports import AuditEvent, AuditPage, AuditQuery


class SqliteAuditLog(SqliteStorePart):
    """`ports.AuditLog` over ``memory.db`` (see the module docstring)."""

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        if events:
            with self._db.transaction(write=True) as conn:
                insert_audit(conn, events)

    def audit_events(self, query: AuditQuery) -> AuditPage:
        bound: dict[str, Any] = {
            "t": query.tenant_id,
            "a": query.agent_id,
            "r": query.record_id,
            "k": "audit",
        }
        where, params = "tenant_id = ? AND agent_id = ?", [query.tenant_id, query.agent_id]
        if query.record_id is not None:
            where += " AND record_id = ?"
            params.append(query.record_id)
        if query.cursor is not None:
            (seq,) = keyset(decode_cursor(query.cursor, bound), ("q", int))
            where += " AND seq < ?"
            params.append(seq)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {AUDIT_COLUMNS} FROM audit WHERE {where} ORDER BY seq DESC LIMIT ?",
                [*params, query.limit + 1],
            ).fetchall()
        page = rows[: query.limit]
        events = [audit_event_of(row) for row in page]
        next_cursor = encode_cursor({**bound, "q": page[-1][0]}) if len(rows) > query.limit else None
        return AuditPage(events=events, next_cursor=next_cursor)


def insert_audit(conn: sqlite3.Connection, events: Sequence[AuditEvent]) -> None:
    """Append ``events`` in the caller's transaction, each unless already there (same record,
    action and instant)."""
    conn.executemany(
        "INSERT INTO audit (tenant_id, agent_id, record_id, action, actor, at, detail) "
        "SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM audit WHERE tenant_id = ? "
        "AND agent_id = ? AND record_id = ? AND action = ? AND at = ?)",
        [
            (
                *(e.tenant_id, e.agent_id, e.record_id, e.action, e.actor, to_us(e.at)),
                json.dumps(e.detail, sort_keys=True, separators=(",", ":")),
                *(e.tenant_id, e.agent_id, e.record_id, e.action, to_us(e.at)),
            )
            for e in events
        ],
    )


#: The columns `audit_event_of` reads, in its order.
AUDIT_COLUMNS = "seq, tenant_id, agent_id, record_id, action, actor, at, detail"


def audit_event_of(row: Sequence[Any]) -> AuditEvent:
    """One row of ``SELECT {AUDIT_COLUMNS} FROM audit`` as its event."""
    return AuditEvent(
        tenant_id=row[1],
        agent_id=row[2],
        record_id=row[3],
        action=row[4],
        actor=row[5],
        at=from_us(row[6]),
        detail=json.loads(row[7]),
    )
