"""`ports.export_store.RecordExport` on the memory store: an export's records a page at a time, their
count, and the audit trail of a page of records in one read.

Pages walk the ``records_live_by_time`` index, ``(tenant_id, agent_id, occurred_at, id)`` over
live rows, in its own order, from the last row of the previous page on (a row-value keyset), so
every page costs the rows it reads and the walk is one pass over the tenant's (or the agent's)
live records, however many pages it takes. An end user's records across the tenant's agents are
the rows of that walk whose ``user_id`` is theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.adapters.sqlite.sqlite_audit import AUDIT_COLUMNS, audit_event_of
from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import CHUNK, decode_cursor, keyset
from agent_memory.adapters.sqlite.sqlite_rows import RECORD_FIELDS, to_us
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditEvent, Page
from agent_memory.ports.export_store import ExportQuery

#: An export's walk: the live rows of a tenant, by agent, time and id.
_WALK = "records r INDEXED BY records_live_by_time"


def _export_filter(query: ExportQuery) -> tuple[str, list[Any], dict[str, Any]]:
    """The ``WHERE`` of an export's rows, its parameters, and what its cursors are bound to."""
    where = "r.tenant_id = ? AND r.deleted_at IS NULL AND (r.expires_at IS NULL OR r.expires_at > ?)"
    params: list[Any] = [query.tenant_id, to_us(query.now)]
    for column, value in (("agent_id", query.agent_id), ("user_id", query.user_id)):
        if value is not None:
            where += f" AND r.{column} = ?"
            params.append(value)
    grains = sorted(Grain(g).value for g in query.grains) if query.grains else None
    if grains:
        where += f" AND r.grain IN ({', '.join('?' * len(grains))})"
        params += grains
    if query.start is not None:
        where += " AND r.span_end >= ?"
        params.append(to_us(query.start))
    if query.end is not None:
        where += " AND r.span_start <= ?"
        params.append(to_us(query.end))
    bound = {
        "k": "export",
        "t": query.tenant_id,
        "a": query.agent_id,
        "u": query.user_id,
        "g": grains,
        "s": None if query.start is None else to_us(query.start),
        "e": None if query.end is None else to_us(query.end),
    }
    return where, params, bound


class SqliteExport(SqliteStorePart):
    """`ports.export_store.RecordExport` over ``memory.db`` (see the module docstring)."""

    def export_records(self, query: ExportQuery) -> Page:
        if query.limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        where, params, bound = _export_filter(query)
        if query.cursor is not None:
            agent, occurred_us, last_id = keyset(
                decode_cursor(query.cursor, bound), ("b", str), ("o", int), ("i", str)
            )
            where += " AND (r.agent_id, r.occurred_at, r.id) > (?, ?, ?)"
            params += [agent, occurred_us, last_id]
        return self.record_page(
            f"SELECT {RECORD_FIELDS} FROM {_WALK} WHERE {where} "
            "ORDER BY r.agent_id, r.occurred_at, r.id LIMIT ?",
            params,
            query.limit,
            lambda last: {**bound, "b": last.agent_id, "o": to_us(last.occurred_at), "i": last.id},
        )

    def count_records(self, query: ExportQuery) -> int:
        where, params, _ = _export_filter(query)
        with self._db.transaction(write=False) as conn:
            (count,) = conn.execute(f"SELECT count(*) FROM {_WALK} WHERE {where}", params).fetchone()
        return int(count)

    def audit_of_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> list[AuditEvent]:
        ids = list(dict.fromkeys(record_ids))
        rows: list[Any] = []
        with self._db.transaction(write=False) as conn:
            for i in range(0, len(ids), CHUNK):
                chunk = ids[i : i + CHUNK]
                rows += conn.execute(
                    f"SELECT {AUDIT_COLUMNS} FROM audit "
                    f"WHERE tenant_id = ? AND agent_id = ? AND record_id IN ({', '.join('?' * len(chunk))})",
                    (tenant_id, agent_id, *chunk),
                ).fetchall()
        rows.sort(key=lambda row: (row[6], row[0]))  # oldest first, then as written
        return [audit_event_of(row) for row in rows]
