"""`ports.RetentionStore` on the memory store: what retention reads, and the hard deletes.

Hard deletes run in batches of `_DELETE_BATCH` records, each its own transaction, so a large
clean-up never holds the write lock for long. The schema's triggers keep the text index and the
agents' vector generations in step (`sqlite_schema`); the aliases left pointing at nothing go in
the same transaction; the audit trail stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import decode_cursor, encode_cursor, keyset
from agent_memory.adapters.sqlite.sqlite_rows import RECORD_FIELDS, row_to_record, to_us
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditAction, Page

_DELETE_BATCH = 1000  # records hard-deleted per transaction by retention
#: Aliases of the tenant whose record is gone (run after a delete, in its transaction).
_ORPHAN_ALIASES = (
    "DELETE FROM aliases WHERE tenant_id = ? AND NOT EXISTS (SELECT 1 FROM records r "
    "WHERE r.tenant_id = aliases.tenant_id AND r.agent_id = aliases.agent_id "
    "AND r.id = aliases.record_id)"
)


class SqliteRetention(SqliteStorePart):
    """`ports.RetentionStore` over ``memory.db`` (see the module docstring)."""

    def retention_candidates(
        self, tenant_id: str, grain: Grain, cutoff: datetime, cursor: str | None = None, limit: int = 1000
    ) -> Page:
        """The tenant's ``grain`` records ending before ``cutoff``, by (span end, seq).

        Keyset-paged on the retention index (its rowid suffix gives the seq order for free), so
        each page costs its own size, however many earlier records retention chose to keep.
        """
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        grain = Grain(grain)
        bound = {"t": tenant_id, "g": grain.value, "c": to_us(cutoff)}
        where = "tenant_id = ? AND grain = ? AND span_end < ?"
        params: list[Any] = [tenant_id, grain.value, bound["c"]]
        if cursor is not None:
            end, seq = keyset(decode_cursor(cursor, bound), ("e", int), ("q", int))
            where += " AND (span_end > ? OR (span_end = ? AND seq > ?))"
            params += [end, end, seq]
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT r.seq, r.span_end, {RECORD_FIELDS} FROM records r INDEXED BY records_by_retention "
                f"WHERE {where} ORDER BY r.span_end, r.seq LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        page = rows[:limit]
        next_cursor = None
        if len(rows) > limit:
            next_cursor = encode_cursor({**bound, "e": page[-1][1], "q": page[-1][0]})
        return Page(records=[row_to_record(row[2:]) for row in page], next_cursor=next_cursor)

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """Hard-delete by id, in batches of one transaction each."""
        ids = list(dict.fromkeys(record_ids))
        total = 0
        for i in range(0, len(ids), _DELETE_BATCH):
            chunk = ids[i : i + _DELETE_BATCH]
            marks = ", ".join("?" for _ in chunk)
            with self._db.transaction(write=True) as conn:
                deleted = conn.execute(
                    f"DELETE FROM records WHERE tenant_id = ? AND agent_id = ? AND id IN ({marks})",
                    (tenant_id, agent_id, *chunk),
                ).rowcount
                if deleted:
                    conn.execute(_ORPHAN_ALIASES, (tenant_id,))
            total += deleted
        return total

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Expired and long-forgotten records of the tenant, in batches (a full scan of the
        tenant's rows: purge runs once a day, and both columns are mostly null)."""
        total = 0
        at = to_us(now)
        while True:
            with self._db.transaction(write=True) as conn:
                seqs = [
                    row[0]
                    for row in conn.execute(
                        "SELECT seq FROM records WHERE tenant_id = ? AND (expires_at <= ? OR deleted_at < ?) "
                        "LIMIT ?",
                        (tenant_id, at, to_us(forgotten_before), _DELETE_BATCH),
                    )
                ]
                marks = ", ".join("?" for _ in seqs)
                # The expired ones (not forgotten: those have their forget event) are audited in
                # the same transaction as their deletion.
                conn.execute(
                    "INSERT INTO audit (tenant_id, agent_id, record_id, action, actor, at, detail) "
                    f"SELECT tenant_id, agent_id, id, ?, 'retention', ?, '{{\"rule\":\"expired\"}}' "
                    f"FROM records WHERE seq IN ({marks}) AND deleted_at IS NULL ORDER BY seq",
                    (AuditAction.RETENTION, at, *seqs),
                )
                deleted = conn.execute(f"DELETE FROM records WHERE seq IN ({marks})", seqs).rowcount
                if deleted:
                    conn.execute(_ORPHAN_ALIASES, (tenant_id,))
            total += deleted
            if deleted < _DELETE_BATCH:
                return total

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """Hard-delete the tenant's ``grain`` records whose span ended before ``cutoff``.

        A working record ends when it occurred; a summary when its period ends (a day's summary
        is older than midnight after it). Forgotten records go too, with the aliases that point
        at them; the audit trail stays. Deletes run in batches, each its own transaction, so a
        large clean-up never holds the write lock for long; the triggers keep the text index
        and the agents' generations in step.
        """
        cutoff_us = to_us(cutoff)
        total = 0
        while True:
            with self._db.transaction(write=True) as conn:
                deleted = conn.execute(
                    "DELETE FROM records WHERE seq IN (SELECT seq FROM records "
                    "WHERE tenant_id = ? AND grain = ? AND span_end < ? LIMIT ?)",
                    (tenant_id, Grain(grain).value, cutoff_us, _DELETE_BATCH),
                ).rowcount
                if deleted:
                    conn.execute(_ORPHAN_ALIASES, (tenant_id,))
            total += deleted
            if deleted < _DELETE_BATCH:
                return total
