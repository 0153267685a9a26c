"""`ports.EmbeddingSpaces` on the memory store: records' vectors in a tenant's own models' spaces.

The deployment's space is ``records.vector`` (a zero blob when the record has no vector there:
its tenant's records are embedded by its own model only); every other space is a row of
``space_vectors`` per record, removed with the record (a trigger) and replaced whole by every
`put` of the record (`write_space_vectors`), so a vector never outlives the content it was made
from. Searches name one space and read only it (`sqlite_retrieval`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart, finite_vector
from agent_memory.adapters.sqlite.sqlite_rows import RECORD_FIELDS, row_to_record, to_us
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import SpaceVector, Vector


def write_space_vectors(
    conn: sqlite3.Connection, record: MemoryRecord, spaces: Sequence[SpaceVector]
) -> None:
    """After a put of ``record``: exactly ``spaces`` as its vectors in tenants' own spaces."""
    key = (record.tenant_id, record.agent_id, record.id)
    conn.execute(
        "DELETE FROM space_vectors WHERE seq = "
        "(SELECT seq FROM records WHERE tenant_id = ? AND agent_id = ? AND id = ?)",
        key,
    )
    for item in spaces:
        conn.execute(
            "INSERT INTO space_vectors (space, seq, tenant_id, agent_id, vector) "
            "SELECT ?, seq, tenant_id, agent_id, ? FROM records "
            "WHERE tenant_id = ? AND agent_id = ? AND id = ?",
            (item.space, finite_vector(item.vector).tobytes(), *key),
        )


#: The generation an update of a record's vector moves its agent to (its trigger bumps it).
_NEXT_VGEN = (
    "(SELECT coalesce(max(gen), 0) + 1 FROM generations g "
    "WHERE g.tenant_id = records.tenant_id AND g.agent_id = records.agent_id)"
)
#: The record a vector was made for, still live and as it was read.
_UNCHANGED = "tenant_id = ? AND agent_id = ? AND id = ? AND updated_at = ? AND deleted_at IS NULL"


class SqliteSpaces(SqliteStorePart):
    """`ports.EmbeddingSpaces` over ``memory.db`` (see the module docstring)."""

    def _no_vector(self) -> bytes:
        return bytes(4 * self._db.dimension)

    def _missing(self, space: str) -> tuple[str, list[object]]:
        """The condition (on ``records r``) of a live record without a vector in ``space``."""
        if not space:
            return "r.vector = ?", [self._no_vector()]
        return "NOT EXISTS (SELECT 1 FROM space_vectors v WHERE v.space = ? AND v.seq = r.seq)", [space]

    def missing_in_space(self, tenant_id: str, space: str, limit: int) -> list[MemoryRecord]:
        condition, params = self._missing(space)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {RECORD_FIELDS} FROM records r WHERE r.tenant_id = ? AND r.deleted_at IS NULL "
                f"AND {condition} ORDER BY r.seq LIMIT ?",
                (tenant_id, *params, max(0, limit)),
            ).fetchall()
        return [row_to_record(row) for row in rows]

    def count_missing(self, tenant_id: str, space: str) -> int:
        condition, params = self._missing(space)
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT count(*) FROM records r "
                f"WHERE r.tenant_id = ? AND r.deleted_at IS NULL AND {condition}",
                (tenant_id, *params),
            ).fetchone()
        return int(row[0])

    def put_space_vectors(
        self, tenant_id: str, space: str, items: Sequence[tuple[MemoryRecord, Vector]]
    ) -> int:
        stored = 0
        with self._db.transaction(write=True) as conn:
            for record, vector in items:
                if record.tenant_id != tenant_id:
                    continue  # never written across tenants, whatever the caller handed in
                key = (tenant_id, record.agent_id, record.id, to_us(record.updated_at))
                if not space:
                    blob = self._db.check_vector(vector).tobytes()
                    stored += conn.execute(
                        f"UPDATE records SET vector = ?, vgen = {_NEXT_VGEN} WHERE {_UNCHANGED}",
                        (blob, *key),
                    ).rowcount
                    continue
                stored += conn.execute(
                    "INSERT INTO space_vectors (space, seq, tenant_id, agent_id, vector) "
                    "SELECT ?, seq, tenant_id, agent_id, ? FROM records "
                    f"WHERE {_UNCHANGED} "
                    "ON CONFLICT (space, seq) DO UPDATE SET vector = excluded.vector",
                    (space, finite_vector(vector).tobytes(), *key),
                ).rowcount
        return stored

    def drop_space(self, tenant_id: str, space: str) -> int:
        with self._db.transaction(write=True) as conn:
            if not space:
                # A new vgen, as a put gives: the agents' cached matrices take the change in by
                # their generation, like any other write (no cache of another tenant is touched).
                dropped = conn.execute(
                    f"UPDATE records SET vector = ?, vgen = {_NEXT_VGEN} WHERE tenant_id = ? AND vector != ?",
                    (self._no_vector(), tenant_id, self._no_vector()),
                ).rowcount
            else:
                dropped = conn.execute(
                    "DELETE FROM space_vectors WHERE tenant_id = ? AND space = ?", (tenant_id, space)
                ).rowcount
        return dropped


def zero_vector(dimension: int) -> Vector:
    """The deployment-space vector of a record that has none there."""
    return np.zeros(dimension, dtype=np.float32)
