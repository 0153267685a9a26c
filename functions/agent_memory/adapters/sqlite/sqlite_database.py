"""The memory store's file, ``memory.db``: its connections, transactions and schema.

Every port of the SQLite store (`sqlite_records`, `sqlite_retrieval`, `sqlite_audit`,
`sqlite_search_log`, `sqlite_directory`, `sqlite_retention`) reads and writes through one
`SqliteDatabase`, so what they share lives here once:

* **One file, WAL, a connection per thread** (`sqlite_util.ConnectionPerThread`). The local
  runtime serves HTTP from a thread per request next to a writer thread, and the CLI may open the
  same file from another process. WAL lets readers run while one writer writes; ``busy_timeout``
  makes writers queue instead of fail.
* **The schema is brought up to date on open** (`sqlite_schema`), and the file is checked to have
  been made for the configured embedding model: vectors of different models cannot be compared.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_filters import encode_cursor
from agent_memory.adapters.sqlite.sqlite_rows import row_to_record
from agent_memory.adapters.sqlite.sqlite_schema import (
    QUERY_STEMS,
    SCHEMA,
    SCHEMA_VERSION,
    drop_v1_text_index,
    needs_v2_migration,
    split_sql,
)
from agent_memory.adapters.sqlite.sqlite_util import (
    ConnectionPerThread,
    WeakReferableConnection,
    open_private,
)
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import Page, Vector

if TYPE_CHECKING:
    from agent_memory.adapters.sqlite.sqlite_activity import ActivityBuffer

#: How long a write waits for another writer's lock before it fails with `DependencyError`.
BUSY_TIMEOUT_MS = 10_000
#: Best-effort writes (`record_access`, `record_search`) wait at most this long for the lock, then
#: give up.
ACCESS_BUSY_TIMEOUT_MS = 250
#: How long a count of the live records is used before it is taken again (`document_count`).
DOCUMENT_COUNT_TTL_S = 30.0
#: Bytes of the file read through a shared memory map (see `SqliteDatabase._open`).
MMAP_BYTES = 256 * 1024 * 1024


class SqliteDatabase(ConnectionPerThread):
    """``memory.db`` for one embedding model: a connection per thread, checked on open.

    ``transaction(write=...)`` is one transaction: ``BEGIN IMMEDIATE`` for writes (waits its turn
    for the lock up front), ``BEGIN`` for a consistent read snapshot. Lock timeouts and I/O
    failures surface as `DependencyError` (retrying later may succeed).
    """

    def __init__(self, path: Path, dimension: int, model_id: str, *, busy_timeout_ms: int) -> None:
        super().__init__(path, busy_timeout_ms=busy_timeout_ms, name=f"the memory store {Path(path)}")
        self.dimension = dimension
        self.model_id = model_id
        self._document_count: tuple[float, int] | None = None
        self._init_schema()

    def _open(self) -> sqlite3.Connection:
        conn = open_private(
            self.path,
            timeout=self._busy_timeout_ms / 1000,
            isolation_level=None,  # autocommit; transactions are explicit
            check_same_thread=False,  # only so that close() may close it from elsewhere
            factory=WeakReferableConnection,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA journal_mode = WAL")
        # Durable against application crashes in WAL mode; only power loss may lose the
        # last commits, an acceptable trade for a local runtime's much cheaper commits.
        conn.execute("PRAGMA synchronous = NORMAL")
        # Request threads come and go, and with them their connections' page caches;
        # reading through a shared memory map keeps a fresh connection fast.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        for statement in split_sql(QUERY_STEMS):
            conn.execute(statement)
        return conn

    def document_count(self, conn: sqlite3.Connection) -> int:
        """The file's live records, counted at most every `DOCUMENT_COUNT_TTL_S` seconds: it only
        places the common-word line of lexical search, and counting walks the whole table (3 ms
        at 100,000 records, 30 at 1,000,000), which every question-like search did before."""
        now = time.monotonic()
        cached = self._document_count
        if cached is not None and now - cached[0] < DOCUMENT_COUNT_TTL_S:
            return cached[1]
        (docs,) = conn.execute("SELECT count(*) FROM records WHERE deleted_at IS NULL").fetchone()
        self._document_count = (now, int(docs))
        return int(docs)

    def _init_schema(self) -> None:
        """Create the schema if missing and check the file was made for this embedding model."""
        with self.transaction(write=True) as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(audit)")}
            if columns and "detail" not in columns:  # a file made before audit details
                conn.execute("ALTER TABLE audit ADD COLUMN detail TEXT NOT NULL DEFAULT '{}'")
            migrate_to_v2 = needs_v2_migration(conn)
            record_columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
            if record_columns and "merged_from" not in record_columns:  # a file made before merge history
                conn.execute("ALTER TABLE records ADD COLUMN merged_from TEXT NOT NULL DEFAULT '[]'")
                conn.execute("ALTER TABLE records ADD COLUMN last_seen_at INTEGER")
            if record_columns and "user_ids" not in record_columns:  # a file made before summaries' users
                conn.execute("ALTER TABLE records ADD COLUMN user_ids TEXT NOT NULL DEFAULT '[]'")
            if record_columns and "experience" not in record_columns:  # a file made before experiences
                conn.execute("ALTER TABLE records ADD COLUMN experience TEXT")
                conn.execute("ALTER TABLE records ADD COLUMN confidence REAL")
            if record_columns and "superseded_by" not in record_columns:  # a file made before supersession
                conn.execute("ALTER TABLE records ADD COLUMN valid_from INTEGER")
                conn.execute("ALTER TABLE records ADD COLUMN valid_to INTEGER")
                conn.execute("ALTER TABLE records ADD COLUMN supersedes TEXT NOT NULL DEFAULT '[]'")
                conn.execute("ALTER TABLE records ADD COLUMN superseded_by TEXT")
            if migrate_to_v2:
                drop_v1_text_index(conn)
            for statement in split_sql(SCHEMA):
                conn.execute(statement)
            if migrate_to_v2:
                # the text index is rebuilt over every row with the new columns and the stemmer
                conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))
            expected = {
                "schema_version": SCHEMA_VERSION,
                "model_id": self.model_id,
                "dimension": str(self.dimension),
                # Names this file, so that files derived from it (`sqlite_ann`) are never taken
                # for another store's.
                "store_id": uuid.uuid4().hex,
            }
            conn.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", expected.items())
            stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.store_id = stored["store_id"]
        if stored["schema_version"] != SCHEMA_VERSION:
            raise ConfigurationError(
                f"the memory store {self.path} has schema version {stored['schema_version']}, "
                f"this version of agent-memory reads version {SCHEMA_VERSION}; "
                "use a new data directory or the version of agent-memory that wrote it"
            )
        if stored["model_id"] != self.model_id or stored["dimension"] != str(self.dimension):
            raise ConfigurationError(
                f"the memory store {self.path} holds vectors of embedding model "
                f"{stored['model_id']!r} (dimension {stored['dimension']}), but the configured model is "
                f"{self.model_id!r} (dimension {self.dimension}); vectors of different models cannot be "
                "compared. Configure the original model, re-embed the stored records with the new one, "
                "or point the data directory at a new, empty location."
            )

    def check_vector(self, vector: Vector) -> npt.NDArray[np.float32]:
        """``vector`` as float32, refused unless it is of this file's dimension and finite."""
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self.dimension,):
            raise ConfigurationError(
                f"vector of shape {array.shape} given to a store of dimension {self.dimension} "
                f"(model {self.model_id!r}); the embedder and the store must use the same model"
            )
        return finite_vector(array)


def finite_vector(vector: Vector) -> npt.NDArray[np.float32]:
    """``vector`` as a flat float32 array, refused if empty or not finite."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or not array.size:
        raise ValidationFailedError(f"a vector must be one non-empty row, not of shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValidationFailedError("a vector holds NaN or infinite values")
    return array


class SqliteStorePart:
    """Base of the store's port classes: each reads and writes ``self._db``.

    `sqlite_store.SqliteMemoryStore` is all of them over one database, and sets ``_db`` once in
    its constructor (and the vector cache `sqlite_retrieval` searches with, and the counts
    written behind, `sqlite_activity`).
    """

    _db: SqliteDatabase
    _activity: ActivityBuffer

    def unit_query(self, vector: Vector, space: str = "") -> npt.NDArray[np.float32]:
        """A query vector, checked against the file's model (or, in a tenant's own space, for
        finite values), at unit length (a dot is a cosine)."""
        array = self._db.check_vector(vector) if not space else finite_vector(vector)
        norm = float(np.linalg.norm(array))
        return array / norm if norm > 0 else array

    def record_page(
        self, sql: str, params: Sequence[Any], limit: int, cursor_of: Callable[[MemoryRecord], dict[str, Any]]
    ) -> Page:
        """One keyset page of records: ``sql`` (its last parameter the ``LIMIT``) asked for one
        more than ``limit``, so whether a next page exists is known without counting; its cursor
        names the page's last record (``cursor_of``). The access counts this process gathered are
        written first, so the records read them."""
        self._activity.flush()
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(sql, (*params, limit + 1)).fetchall()
        records = [row_to_record(row) for row in rows[:limit]]
        next_cursor = encode_cursor(cursor_of(records[-1])) if len(rows) > limit else None
        return Page(records=records, next_cursor=next_cursor)
