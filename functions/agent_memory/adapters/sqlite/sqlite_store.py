"""The embedded default `MemoryStore`: one SQLite file with FTS5 for words and numpy for vectors.

`SqliteMemoryStore` is the six narrow ports of the memory store of `agent_memory.ports`, and the
knowledge store, over one database, each port in a module of its own so that each reads alone:

=====================  =====================  ==================================================
port                   class                  module
=====================  =====================  ==================================================
`RecordStore`          `SqliteRecords`        `sqlite_records`
`Retrieval`            `SqliteRetrieval`      `sqlite_retrieval`
`AuditLog`             `SqliteAuditLog`       `sqlite_audit`
`SearchLog`            `SqliteSearchLog`      `sqlite_search_log`
`AgentDirectory`       `SqliteDirectory`      `sqlite_directory`
`RetentionStore`       `SqliteRetention`      `sqlite_retention`
`KnowledgeStore`       `SqliteKnowledge`      `sqlite_knowledge`
`EmbeddingSpaces`      `SqliteSpaces`         `sqlite_spaces`
`RecordExport`         `SqliteExport`         `sqlite_export`
=====================  =====================  ==================================================

What they share is built here once: the file (`sqlite_database`: a connection per thread, WAL,
the schema of `sqlite_schema`), the per-agent vector cache (`sqlite_vectors`) and the counts
a search gathers, written behind (`sqlite_activity`). The SQL they
are made of is built apart from the I/O, in `sqlite_filters` (which rows, cursors, lexical
queries) and `sqlite_rows` (rows <-> records, times as integer microseconds, spans as closed
intervals). Why each is shaped the way it is, each module's docstring says.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_activity import ActivityBuffer
from agent_memory.adapters.sqlite.sqlite_ann import AnnIndexes, usearch_available
from agent_memory.adapters.sqlite.sqlite_audit import SqliteAuditLog
from agent_memory.adapters.sqlite.sqlite_database import BUSY_TIMEOUT_MS, SqliteDatabase
from agent_memory.adapters.sqlite.sqlite_directory import SqliteDirectory
from agent_memory.adapters.sqlite.sqlite_export import SqliteExport
from agent_memory.adapters.sqlite.sqlite_knowledge import SqliteKnowledge
from agent_memory.adapters.sqlite.sqlite_records import SqliteRecords
from agent_memory.adapters.sqlite.sqlite_retention import SqliteRetention
from agent_memory.adapters.sqlite.sqlite_retrieval import SqliteRetrieval
from agent_memory.adapters.sqlite.sqlite_search_log import SqliteSearchLog
from agent_memory.adapters.sqlite.sqlite_spaces import SqliteSpaces
from agent_memory.adapters.sqlite.sqlite_vectors import DEFAULT_CACHE_BYTES, VectorCache
from agent_memory.errors import ConfigurationError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditEvent


class SqliteMemoryStore(
    SqliteRecords,
    SqliteRetrieval,
    SqliteAuditLog,
    SqliteSearchLog,
    SqliteDirectory,
    SqliteRetention,
    SqliteKnowledge,
    SqliteSpaces,
    SqliteExport,
):
    """`agent_memory.ports.MemoryStore` on one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        dimension: int,
        model_id: str,
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        ann_min_vectors: int = 0,
    ) -> None:
        if dimension <= 0:
            raise ConfigurationError(f"embedding dimension must be positive, not {dimension}")
        self.path = Path(path)
        self.dimension = dimension
        self.model_id = model_id
        self._vectors = VectorCache(dimension, cache_bytes)
        self._db = SqliteDatabase(self.path, dimension, model_id, busy_timeout_ms=busy_timeout_ms)
        self._activity = ActivityBuffer(self._db)
        # Large agents through an approximate index in ``ann/`` next to the file (0: none).
        self._ann = (
            AnnIndexes(
                self._db,
                self.path.parent / "ann",
                min_vectors=ann_min_vectors,
                store_id=self._db.store_id,
            )
            if ann_min_vectors > 0 and usearch_available()
            else None
        )

    # Removals fold the removed rows out of the approximate index at once (`AnnIndexes.removed`).

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        done = super().soft_delete(tenant_id, agent_id, record_id, event)
        if done and self._ann is not None:
            self._ann.removed(tenant_id, agent_id)
        return done

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        done = super().mark_stale(tenant_id, agent_id, record_id, event)
        if done and self._ann is not None:
            self._ann.removed(tenant_id, agent_id)
        return done

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        deleted = super().delete_records(tenant_id, agent_id, record_ids)
        if deleted and self._ann is not None:
            self._ann.removed(tenant_id, agent_id)
        return deleted

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        deleted = super().purge(tenant_id, now, forgotten_before)
        if deleted and self._ann is not None:
            self._ann.removed(tenant_id)
        return deleted

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        deleted = super().delete_older_than(tenant_id, grain, cutoff)
        if deleted and self._ann is not None:
            self._ann.removed(tenant_id)
        return deleted

    def build_vector_index(self, tenant_id: str, agent_id: str) -> bool:
        """Bring the agent's vector index up to date now, whatever its size (after any build
        under way); False when the store keeps no index."""
        return self._ann is not None and self._ann.build(tenant_id, agent_id, wait=True)

    def close(self) -> None:
        """Close every connection this store opened (call once, when the runtime stops), after
        writing the access and search counts still pending."""
        self._activity.close()
        if self._ann is not None:
            self._ann.close()
        self._db.close()
        self._vectors.clear()
