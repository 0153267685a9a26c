"""`ports.RecordStore` on the memory store's ``records`` and ``aliases`` tables.

Records by id: written, read, listed, forgotten and marked stale, and the reads that walk a
conversation, a period or an end user's summaries. **Ids are unique per (tenant, agent)**, not
globally, so no write of one tenant can ever overwrite a record of another, and every read is
scoped by both. Every write keeps the text index and the agent's vector generation in step
through the schema's triggers, in the same transaction (`sqlite_schema`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime

from agent_memory.adapters.sqlite.sqlite_audit import insert_audit
from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import (
    ELIGIBLE,
    decode_cursor,
    keyset,
    live_filter,
)
from agent_memory.adapters.sqlite.sqlite_rows import (
    NEWEST_FIRST,
    RECORD_FIELDS,
    UPSERT,
    from_us,
    json_text,
    opt_us,
    record_row,
    row_to_record,
    to_us,
)
from agent_memory.adapters.sqlite.sqlite_spaces import write_space_vectors, zero_vector
from agent_memory.adapters.sqlite.sqlite_util import scrub_wal
from agent_memory.errors import ValidationFailedError
from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.ports import AuditEvent, ListQuery, Page, StoredRecord, StoreStats

logger = logging.getLogger(__name__)

#: What a stale mark clears of a summary, pattern or profile at once (it says what a forgotten
#: memory said, and is re-made from what is left, never from its own text): its texts and its
#: vector. Its sources and a pattern's feedback counts stay for the re-make.
_HIDDEN = "content = '', context = NULL, merged_from = '[]', vector = zeroblob(length(vector))"
#: What a forget clears of a row at once: every text it holds and its vector. The row stays as
#: a tombstone (its id, its times, its sources) so a redelivered write or a late re-make is
#: recognised as forgotten.
_ERASED = f"{_HIDDEN}, topic = NULL, topic_raw = NULL, metadata = '{{}}', experience = NULL"


def _erase_traces(conn: sqlite3.Connection, tenant_id: str, agent_id: str, record_id: str) -> None:
    """The rest of an erasure, in its transaction: the record's vectors in the tenant's own
    spaces, and its words in the text index's segments (the FTS ``delete`` the trigger issued
    only marks them deleted; merging the segments drops them, and ``secure_delete`` zeroes the
    pages they were on)."""
    conn.execute(
        "DELETE FROM space_vectors WHERE seq = "
        "(SELECT seq FROM records WHERE tenant_id = ? AND agent_id = ? AND id = ?)",
        (tenant_id, agent_id, record_id),
    )
    conn.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")


class SqliteRecords(SqliteStorePart):
    """`ports.RecordStore` over ``memory.db`` (see the module docstring)."""

    def put(self, items: Sequence[StoredRecord]) -> None:
        """Insert or overwrite by (tenant, agent, id), all items in one transaction.

        An overwrite replaces every field (a summary re-made in place) and keeps the FTS index and
        the agent's generation in step through the triggers.
        """
        rows = [self._row(item) for item in items]
        if not rows:
            return
        with self._db.transaction(write=True) as conn:
            conn.executemany(UPSERT, rows)
            for item in items:
                write_space_vectors(conn, item.record, item.spaces)

    def put_if(
        self, item: StoredRecord, read: MemoryRecord | None, events: Sequence[AuditEvent] = ()
    ) -> bool:
        """`put` of one record and its events, in one write transaction that first reads the
        row's ``deleted_at`` and ``updated_at``: no other writer comes between the check and
        the write (the transaction holds the file's write lock from its start)."""
        row = self._row(item)
        record = item.record
        expected = None if read is None else (opt_us(read.deleted_at), to_us(read.updated_at))
        with self._db.transaction(write=True) as conn:
            found = conn.execute(
                "SELECT deleted_at, updated_at FROM records WHERE tenant_id = ? AND agent_id = ? AND id = ?",
                (record.tenant_id, record.agent_id, record.id),
            ).fetchone()
            if (None if found is None else (found[0], found[1])) != expected:
                return False
            conn.execute(UPSERT, row)
            write_space_vectors(conn, record, item.spaces)
            insert_audit(conn, events)
        return True

    def _row(self, item: StoredRecord) -> tuple[object, ...]:
        """`UPSERT`'s parameters for ``item`` (no vector in the deployment's space: zeros)."""
        vector = zero_vector(self._db.dimension) if item.vector is None else item.vector
        return record_row(item.record, self._db.check_vector(vector))

    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "INSERT INTO aliases (tenant_id, agent_id, alias_id, record_id) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, agent_id, alias_id) DO UPDATE SET record_id = excluded.record_id",
                (tenant_id, agent_id, alias_id, record_id),
            )

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Forget the live record with that id (or alias) as of ``event.at``; False if none.

        A record already forgotten, expired at ``event.at``, unknown, or of another tenant or
        agent is not live here: nothing changes and no audit event is written.
        """
        at = to_us(event.at)
        return self._hide(
            f"UPDATE records SET deleted_at = ?, updated_at = ?, {_ERASED} "
            "WHERE tenant_id = ? AND agent_id = ? AND id = ? AND deleted_at IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?)",
            lambda target: (at, at, tenant_id, agent_id, target, at),
            (tenant_id, agent_id, record_id),
            event,
            resolve=True,
        )

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        at = to_us(event.at)
        return self._hide(
            f"UPDATE records SET deleted_at = max(coalesce(deleted_at, 0), ?), {_HIDDEN} "
            "WHERE tenant_id = ? AND agent_id = ? AND id = ?",
            lambda target: (at, tenant_id, agent_id, target),
            (tenant_id, agent_id, record_id),
            event,
            resolve=False,
        )

    def _hide(
        self,
        update: str,
        params: Callable[[str], tuple[object, ...]],
        key: tuple[str, str, str],
        event: AuditEvent,
        *,
        resolve: bool,
    ) -> bool:
        """Take one record out of reads with ``update`` (``params`` given the id it targets),
        erase its traces and write ``event`` in the same transaction, then scrub the WAL; False,
        with nothing written, when ``update`` changed no row.

        Shared by a forget (``resolve``: the id may be an alias) and a stale mark, so a record
        hidden either way leaves none of its words behind in the database file or its WAL.
        """
        tenant_id, agent_id, record_id = key
        with self._db.transaction(write=True) as conn:
            target = self._resolve(conn, tenant_id, agent_id, record_id) if resolve else record_id
            if conn.execute(update, params(target)).rowcount == 0:
                return False
            _erase_traces(conn, tenant_id, agent_id, target)
            insert_audit(conn, [event])
        scrub_wal(self._db.get())
        return True

    def set_experience(
        self, tenant_id: str, agent_id: str, record_id: str, experience: Experience, event: AuditEvent
    ) -> bool:
        """One guarded UPDATE and the event in one transaction; the vector and its generation
        are untouched (the text that was embedded did not change)."""
        data = json_text(experience.model_dump(mode="json"))
        sets = "experience = ?, confidence = ?"
        return self._update_live(sets, (data, experience.confidence), (tenant_id, agent_id, record_id), event)

    def set_validity(
        self, tenant_id: str, agent_id: str, record_id: str, validity: RecordValidity, event: AuditEvent
    ) -> bool:
        """One guarded UPDATE and the event in one transaction (no vector or text changes;
        ``updated_at`` moves forward, as feedback's does)."""
        fields = (
            opt_us(validity.valid_from),
            opt_us(validity.valid_to),
            json_text(list(validity.supersedes)),
            validity.superseded_by,
        )
        sets = "valid_from = ?, valid_to = ?, supersedes = ?, superseded_by = ?"
        return self._update_live(sets, fields, (tenant_id, agent_id, record_id), event)

    def _update_live(
        self, sets: str, values: tuple[object, ...], key: tuple[str, str, str], event: AuditEvent
    ) -> bool:
        """``SET sets`` (and ``updated_at`` forward to the event's time) on the live record
        ``key`` (tenant, agent, id), and the event, in one transaction. False (no event): no
        such live record."""
        at = to_us(event.at)
        with self._db.transaction(write=True) as conn:
            cursor = conn.execute(
                f"UPDATE records SET {sets}, updated_at = max(updated_at, ?) "  # the column names are ours
                "WHERE tenant_id = ? AND agent_id = ? AND id = ? AND deleted_at IS NULL "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (*values, at, *key, at),
            )
            if cursor.rowcount == 0:
                return False
            insert_audit(conn, [event])
        return True

    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort, written behind (`sqlite_activity`): a search does not write the file."""
        self._activity.access(tenant_id, agent_id, record_ids, at)

    @staticmethod
    def _resolve(conn: sqlite3.Connection, tenant_id: str, agent_id: str, record_id: str) -> str:
        """``record_id`` itself if such a record exists, else what it is an alias of (if any)."""
        row = conn.execute(
            "SELECT 1 FROM records WHERE tenant_id = ? AND agent_id = ? AND id = ?",
            (tenant_id, agent_id, record_id),
        ).fetchone()
        if row is not None:
            return record_id
        alias = conn.execute(
            "SELECT record_id FROM aliases WHERE tenant_id = ? AND agent_id = ? AND alias_id = ?",
            (tenant_id, agent_id, record_id),
        ).fetchone()
        return record_id if alias is None else str(alias[0])

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        self._activity.flush()  # read the access counts this process gathered
        with self._db.transaction(write=False) as conn:
            resolved = self._resolve(conn, tenant_id, agent_id, record_id)
            row = conn.execute(
                f"SELECT {RECORD_FIELDS} FROM records r "
                "WHERE r.tenant_id = ? AND r.agent_id = ? AND r.id = ?",
                (tenant_id, agent_id, resolved),
            ).fetchone()
        return None if row is None else row_to_record(row)

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> list[MemoryRecord]:
        if limit <= 0:
            return []
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {RECORD_FIELDS} FROM records r INDEXED BY records_live_by_conversation "
                "WHERE r.tenant_id = ? AND r.agent_id = ? AND r.conversation_id = ? AND r.occurred_at < ? "
                "AND r.deleted_at IS NULL AND r.grain = 'working' "
                "ORDER BY r.occurred_at DESC, r.id DESC LIMIT ?",
                (tenant_id, agent_id, conversation_id, to_us(before), limit),
            ).fetchall()
        return [row_to_record(row) for row in reversed(rows)]

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain (only grains that have some) and the oldest/newest occurred_at."""
        where, params = live_filter(tenant_id, agent_id, now, None)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT r.grain, count(*), min(r.occurred_at), max(r.occurred_at) FROM {ELIGIBLE} "
                f"WHERE {where} GROUP BY r.grain",
                params,
            ).fetchall()
        if not rows:
            return StoreStats()
        return StoreStats(
            records={grain: count for grain, count, _, _ in rows},
            oldest=from_us(min(row[2] for row in rows)),
            newest=from_us(max(row[3] for row in rows)),
        )

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> list[MemoryRecord]:
        """Live summaries whose ``user_ids`` name ``user_id`` (a scan of the agent's summaries:
        erasure is rare, and summaries are few next to working memory)."""
        where, params = live_filter(
            tenant_id, agent_id, now, tuple(g for g in Grain if g is not Grain.WORKING)
        )
        where += " AND EXISTS (SELECT 1 FROM json_each(r.user_ids) WHERE json_each.value = ?)"
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {RECORD_FIELDS} FROM records r WHERE {where} ORDER BY r.occurred_at, r.id",
                (*params, user_id),
            ).fetchall()
        return [row_to_record(row) for row in rows]

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> list[MemoryRecord]:
        """Every live ``grain`` record whose span overlaps ``[start, end)``, oldest first.

        A working record at exactly ``end`` belongs to the next period; a summary whose period
        ends at ``start`` does not overlap (its stored span ends 1µs before). One query on the
        covering index, then the rows themselves: no limit, the summarizer needs them all.
        """
        where, params = live_filter(tenant_id, agent_id, now, (Grain(grain),))
        where += " AND r.span_start < ? AND r.span_end >= ?"
        params += [to_us(end), to_us(start)]
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {RECORD_FIELDS} FROM records r WHERE {where} ORDER BY r.occurred_at, r.id", params
            ).fetchall()
        return [row_to_record(row) for row in rows]

    # Last of the public methods: below it, ``list`` in this class body names this method.
    def list(self, query: ListQuery) -> Page:
        """Live records, newest ``occurred_at`` first (ties: id descending), keyset-paginated.

        The cursor is urlsafe base64 of JSON naming the last record of the page and the tenant,
        agent and grain it belongs to; a cursor of anything else raises `ValidationFailedError`.
        """
        if query.limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        where, params = live_filter(
            query.tenant_id, query.agent_id, query.now, (query.grain,) if query.grain else None
        )
        bound = {"t": query.tenant_id, "a": query.agent_id, "g": query.grain.value if query.grain else None}
        if query.cursor is not None:
            occurred_us, last_id = keyset(decode_cursor(query.cursor, bound), ("o", int), ("i", str))
            where += " AND (r.occurred_at < ? OR (r.occurred_at = ? AND r.id < ?))"
            params += [occurred_us, occurred_us, last_id]
        return self.record_page(
            f"SELECT {RECORD_FIELDS} FROM records r WHERE {where} {NEWEST_FIRST} LIMIT ?",
            params,
            query.limit,
            lambda last: {**bound, "o": to_us(last.occurred_at), "i": last.id},
        )
