"""The embedded default `MemoryStore`: one SQLite file with FTS5 for words and numpy for vectors.

Why this shape:

* **One file, WAL, a connection per thread.** The local runtime serves HTTP from a thread per
  request next to a writer thread, and the CLI may open the same file from another process. WAL
  lets readers run while one writer writes; ``busy_timeout`` makes writers queue instead of fail.
* **Times are integer microseconds since the epoch (UTC).** Exact (no float rounding, so every
  datetime round-trips), and range tests on them are plain integer comparisons an index can use.
* **Spans are closed intervals.** ``span_start``/``span_end`` hold the record's `span`, with a
  summary's half-open ``[period_start, period_end)`` stored as ``[start, end - 1µs]``, so "overlaps
  the window ``[start, end]``" is one test for working records and summaries alike:
  ``span_start <= end AND span_end >= start``. A daily summary of the 21st does not overlap a
  window that starts at midnight on the 22nd.
* **Lexical search is FTS5 over ``content`` and ``topic``** (an external-content table kept in
  sync by triggers in the same transaction as every write; forgotten records leave the index).
  User text never reaches the FTS5 query language: it is cut into words, each word quoted, and
  the words OR-ed (`query_terms`, `fts_match`); on a big store, words in more than a quarter of
  all documents are left out (`_informative_terms`). BM25 is lower-is-better and unbounded, so a
  hit's lexical score is ``bm25 / best bm25`` of its result set: the best lexical hit scores 1.0,
  the others their fraction of it. The score is relative to one query, not comparable across
  queries.
* **Vector search is exact cosine with numpy** over one agent's vectors, kept in an in-process
  cache. Triggers bump a per-agent *generation* whenever the agent's live vectors may change
  (insert, overwrite, forget, hard delete); a search reads that number (one indexed lookup) and,
  when it moved, merges in the rows written since (or reloads the agent after a removal), so a
  write by another thread or process is never missed and rarely costs a full reload. Which rows
  may match (tenant, agent, grain, window, expiry, kinds, tags, user) is decided in SQL, on an
  index that covers those columns; numpy only scores those rows.
* **Ids are unique per (tenant, agent)**, not globally, so no write of one tenant can ever
  overwrite a record of another, and every read is scoped by both.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite_util import open_private, transaction
from agent_memory.domain.fusion import fused_order, lacking_cosine, scaled_to_best
from agent_memory.domain.grains import Grain
from agent_memory.domain.records import MemoryKind, MemoryRecord
from agent_memory.domain.words import STOPWORDS
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.ports import (
    AgentPage,
    AgentRef,
    AuditAction,
    AuditEvent,
    AuditPage,
    Candidate,
    Neighbourhood,
    Page,
    SearchDay,
    StoredRecord,
    StoreQuery,
    StoreStats,
    Vector,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "2"
#: How long a write waits for another writer's lock before it fails with `DependencyError`.
BUSY_TIMEOUT_MS = 10_000
#: `record_access` is best effort: it waits at most this long for the lock, then gives up.
ACCESS_BUSY_TIMEOUT_MS = 250
#: Distinct words of a lexical query that are searched (the rest are ignored): a bound on the
#: work one request can ask for, far above what a natural-language question needs.
MAX_QUERY_TOKENS = 64
#: Words in more than this share of the documents are left out of a lexical query ...
COMMON_TERM_SHARE = 0.25
#: ... once the store holds this many documents (see `_informative_terms`).
COMMON_TERM_MIN_DOCS = 1000
#: Bytes of the file read through a shared memory map (see `SqliteMemoryStore._conn`).
MMAP_BYTES = 256 * 1024 * 1024
#: Vector matrices kept in memory across agents (least recently used dropped first).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
_MAX_CURSOR_CHARS = 2048
_CHUNK = 500  # ids bound per IN (...) list, well under SQLite's variable limit
_DELETE_BATCH = 1000  # records hard-deleted per transaction by retention
_MERGE_MIN_ROWS = 256  # see _max_merge

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)
_WORD = re.compile(r"\w+")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    user_id TEXT,
    grain TEXT NOT NULL,
    time_key TEXT,
    period_start INTEGER,
    period_end INTEGER,
    kind TEXT NOT NULL,
    role TEXT,
    conversation_id TEXT,
    content TEXT NOT NULL,
    topic TEXT,
    topic_raw TEXT,
    importance REAL NOT NULL,
    tags TEXT NOT NULL,
    source TEXT,
    links TEXT NOT NULL,
    metadata TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    access_count INTEGER NOT NULL,
    last_accessed_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    occurred_at INTEGER NOT NULL,
    expires_at INTEGER,
    deleted_at INTEGER,
    speaker TEXT,
    context TEXT,
    merged_from TEXT NOT NULL DEFAULT '[]',
    last_seen_at INTEGER,
    user_ids TEXT NOT NULL DEFAULT '[]',
    span_start INTEGER NOT NULL,
    span_end INTEGER NOT NULL,
    vector BLOB NOT NULL,
    -- The agent's generation that wrote this row's vector (see the generations table).
    vgen INTEGER NOT NULL,
    UNIQUE (tenant_id, agent_id, id)
);
-- Reads only ever look at live (not forgotten) records, so the indexes hold only those. The
-- first covers every eligibility test except tags, and stats() too, so finding which rows a search may
-- score never touches the wide table rows; the other two give list() and browsing their order.
CREATE INDEX IF NOT EXISTS records_live
    ON records (tenant_id, agent_id, grain, span_end, span_start, expires_at, kind, user_id, occurred_at)
    WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_live_by_time
    ON records (tenant_id, agent_id, occurred_at, id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_live_by_grain_time
    ON records (tenant_id, agent_id, grain, occurred_at, id) WHERE deleted_at IS NULL;
-- The two cross-agent jobs: retention (forgotten records included) and the summarization
-- dispatcher (which agents have live records of a grain in a period, in a stable order).
CREATE INDEX IF NOT EXISTS records_live_by_vgen
    ON records (tenant_id, agent_id, vgen) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_by_retention ON records (tenant_id, grain, span_end);
CREATE INDEX IF NOT EXISTS records_live_by_agent
    ON records (grain, tenant_id, agent_id, span_end, span_start) WHERE deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS aliases (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    alias_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, alias_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    at INTEGER NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_by_agent ON audit (tenant_id, agent_id, at);
CREATE INDEX IF NOT EXISTS audit_by_record ON audit (tenant_id, agent_id, record_id, seq);

-- Searches per agent and UTC day (counts only, never the query): the console's zero-hit view.
CREATE TABLE IF NOT EXISTS search_days (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    day TEXT NOT NULL,
    searches INTEGER NOT NULL,
    zero_hits INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, day)
) WITHOUT ROWID;

-- Per agent: ``gen`` moves with every write that may change its live vectors, ``shrink`` with
-- every one that removes a record (forget, hard delete). A cache at (gen, shrink) is current;
-- one at an older gen but the same shrink only misses the rows whose vgen is newer.
CREATE TABLE IF NOT EXISTS generations (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    gen INTEGER NOT NULL,
    shrink INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS records_live_by_conversation
    ON records (tenant_id, agent_id, conversation_id, occurred_at)
    WHERE deleted_at IS NULL AND conversation_id IS NOT NULL;

-- Words are stemmed (porter): "went camping" finds "camped"; query words are stemmed alike.
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    content, topic, speaker, context, content='records', content_rowid='seq',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- How many documents hold each indexed term (for dropping near-weightless common words).
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts_vocab USING fts5vocab(records_fts, 'row');

-- The FTS index holds live (not forgotten) records only. Old values are removed before new ones
-- are added, in one trigger, because an external-content FTS table must be told what it indexed.
CREATE TRIGGER IF NOT EXISTS records_fts_insert AFTER INSERT ON records BEGIN
    INSERT INTO records_fts (rowid, content, topic, speaker, context)
        SELECT new.seq, new.content, new.topic, new.speaker, new.context WHERE new.deleted_at IS NULL;
END;
CREATE TRIGGER IF NOT EXISTS records_fts_delete AFTER DELETE ON records BEGIN
    INSERT INTO records_fts (records_fts, rowid, content, topic, speaker, context)
        SELECT 'delete', old.seq, old.content, old.topic, old.speaker, old.context
        WHERE old.deleted_at IS NULL;
END;
CREATE TRIGGER IF NOT EXISTS records_fts_update
    AFTER UPDATE OF content, topic, speaker, context, deleted_at ON records
BEGIN
    INSERT INTO records_fts (records_fts, rowid, content, topic, speaker, context)
        SELECT 'delete', old.seq, old.content, old.topic, old.speaker, old.context
        WHERE old.deleted_at IS NULL;
    INSERT INTO records_fts (rowid, content, topic, speaker, context)
        SELECT new.seq, new.content, new.topic, new.speaker, new.context WHERE new.deleted_at IS NULL;
END;

-- Any change to the set of an agent's live vectors moves its generation (same transaction).
-- Access counters do not, so searching never invalidates the vector cache.
CREATE TRIGGER IF NOT EXISTS records_gen_insert AFTER INSERT ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (new.tenant_id, new.agent_id, 1, 0)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER IF NOT EXISTS records_gen_update AFTER UPDATE OF vector, deleted_at ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink)
        VALUES (new.tenant_id, new.agent_id, 1, new.deleted_at IS NOT NULL AND old.deleted_at IS NULL)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1, shrink = shrink + excluded.shrink;
END;
CREATE TRIGGER IF NOT EXISTS records_gen_delete AFTER DELETE ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (old.tenant_id, old.agent_id, 1, 1)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1, shrink = shrink + 1;
END;
"""

#: Every `MemoryRecord` field, in the order rows are read back.
# fmt: off
_RECORD_COLUMNS = (
    "id", "tenant_id", "agent_id", "user_id", "grain", "time_key", "period_start", "period_end",
    "kind", "role", "conversation_id", "content", "topic", "topic_raw", "importance", "tags", "source",
    "links", "metadata", "source_ids", "content_hash", "access_count", "last_accessed_at", "created_at",
    "updated_at", "occurred_at", "expires_at", "deleted_at", "speaker", "context", "merged_from",
    "last_seen_at", "user_ids",
)
_DATETIME_COLUMNS = frozenset({
    "period_start", "period_end", "last_accessed_at", "created_at", "updated_at", "occurred_at",
    "expires_at", "deleted_at", "last_seen_at",
})
# fmt: on
_JSON_COLUMNS = frozenset({"tags", "source", "links", "metadata", "source_ids", "merged_from", "user_ids"})
_WRITE_COLUMNS = (*_RECORD_COLUMNS, "span_start", "span_end", "vector", "vgen")
_SELECT = ", ".join(f"r.{c}" for c in _RECORD_COLUMNS)
_NEWEST_FIRST = "ORDER BY r.occurred_at DESC, r.id DESC"
#: Eligibility scans read the covering index only (the planner, left alone, may pick an index
#: that makes it visit every wide table row, several times slower).
_ELIGIBLE = "records r INDEXED BY records_live"
_UPSERT = (
    f"INSERT INTO records ({', '.join(_WRITE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _WRITE_COLUMNS[:-1])}, "
    # vgen: the generation this write moves the agent to (its insert or update trigger bumps it)
    "(SELECT coalesce(max(gen), 0) + 1 FROM generations WHERE tenant_id = ? AND agent_id = ?)) "
    "ON CONFLICT (tenant_id, agent_id, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _WRITE_COLUMNS if c not in {"id", "tenant_id", "agent_id"})
)


# --------------------------------------------------------------------------------------------
# Pure helpers
# --------------------------------------------------------------------------------------------


def _to_us(value: datetime) -> int:
    """Microseconds since the epoch; a naive datetime is read as UTC (as the domain does)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _ONE_US


def _opt_us(value: datetime | None) -> int | None:
    return None if value is None else _to_us(value)


def _from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def query_terms(text: str | None) -> list[str]:
    """The distinct words of ``text`` to search for, lower-cased, at most `MAX_QUERY_TOKENS`.

    Words are Unicode ``\\w+`` runs, so every FTS5 operator character (``" * : ( ) ^ + -``,
    column filters, ``NEAR(``) is gone with the punctuation. The bare words FTS5 reads as operators
    (``AND OR NOT NEAR``) stay ordinary words: `fts_match` quotes every term, and a quoted string
    is never an operator. English function words (`STOPWORDS`: "what", "did", "the") are left out,
    unless nothing else is left: they match half the store and say nothing about the memory.
    """
    if not text:
        return []
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        seen.setdefault(word.lower(), None)
        if len(seen) >= MAX_QUERY_TOKENS:
            break
    words = list(seen)
    return [w for w in words if w not in STOPWORDS] or words


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``: each one a quoted string, OR-ed together.

    Inside double quotes FTS5 reads nothing but a phrase; a ``"`` would end it and is doubled
    (a word from `query_terms` never has one: defence in depth).
    """
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _encode_cursor(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _decode_cursor(cursor: str, bound: dict[str, Any]) -> dict[str, Any]:
    """The payload of a cursor issued for ``bound`` (the scope and filter it belongs to).

    A cursor is bound to the tenant, agent and filter it was issued for, so one agent's cursor
    can never walk another's records and a changed filter starts over instead of skipping.
    Anything else, garbled or forged, is an invalid cursor.
    """
    invalid = ValidationFailedError("invalid cursor", [{"field": "cursor", "message": "invalid cursor"}])
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_CHARS:
        raise invalid
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError) as exc:
        raise invalid from exc
    if not isinstance(payload, dict) or any(payload.get(k) != v for k, v in bound.items()):
        raise invalid
    return payload


def _keyset(payload: dict[str, Any], *fields: tuple[str, type]) -> tuple[Any, ...]:
    """The position fields of a decoded cursor, each of its exact type (bool is not an int)."""
    values = tuple(payload.get(name) for name, _ in fields)
    for value, (_, kind) in zip(values, fields, strict=True):
        if type(value) is not kind or (isinstance(value, int) and not -(2**63) <= value < 2**63):
            raise ValidationFailedError("invalid cursor", [{"field": "cursor", "message": "invalid cursor"}])
    return values


def _row_to_record(row: sqlite3.Row | tuple[Any, ...]) -> MemoryRecord:
    data: dict[str, Any] = {}
    for name, value in zip(_RECORD_COLUMNS, row, strict=True):
        if value is None:
            data[name] = None
        elif name in _DATETIME_COLUMNS:
            data[name] = _from_us(value)
        elif name in _JSON_COLUMNS:
            data[name] = json.loads(value)
        else:
            data[name] = value
    return MemoryRecord.model_validate(data)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _span_us(record: MemoryRecord) -> tuple[int, int]:
    """The record's span as a closed interval of µs (a period's exclusive end minus 1µs)."""
    start, end = record.span
    start_us, end_us = _to_us(start), _to_us(end)
    if record.period_start is not None and record.period_end is not None and end_us > start_us:
        end_us -= 1
    return start_us, end_us


def _normalise_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero), so a dot product is a cosine."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


# --------------------------------------------------------------------------------------------
# Connections (one per thread) and the per-agent vector cache
# --------------------------------------------------------------------------------------------


class _Connection(sqlite3.Connection):
    """A plain connection that can be weakly referenced (the C type cannot)."""


@dataclass(frozen=True, slots=True)
class _AgentVectors:
    """One agent's live vectors at one generation: sorted rowids and unit-length rows."""

    gen: int
    shrink: int
    rowids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        # Shared by every thread that searches the agent: nobody may change it in place.
        self.rowids.flags.writeable = False
        self.matrix.flags.writeable = False

    def merged(
        self, gen: int, rowids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]
    ) -> _AgentVectors:
        """A copy with ``rowids`` added or, where already present, their rows replaced."""
        keep = np.ones(len(self.rowids), dtype=bool)
        keep[self.positions(rowids)] = False
        all_rowids = np.concatenate([self.rowids[keep], rowids])
        all_matrix = np.concatenate([self.matrix[keep], matrix])
        if len(all_rowids) > 1 and not np.all(all_rowids[1:] > all_rowids[:-1]):
            order = np.argsort(all_rowids, kind="stable")
            all_rowids, all_matrix = all_rowids[order], all_matrix[order]
        return _AgentVectors(gen=gen, shrink=self.shrink, rowids=all_rowids, matrix=all_matrix)

    @property
    def nbytes(self) -> int:
        return int(self.rowids.nbytes + self.matrix.nbytes)

    def scores(
        self, positions: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Cosines of the rows at ``positions`` to the unit ``query``.

        Few rows: gather them. Many: one product over the whole matrix and pick, which is cheaper
        than copying most of the matrix.
        """
        if len(positions) * 4 < len(self.rowids):
            return _dot(self.matrix[positions], query)
        return _dot(self.matrix, query)[positions]

    def positions(self, rowids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Row positions of ``rowids`` in the matrix (rowids not in it are dropped)."""
        if not len(self.rowids) or not len(rowids):
            return np.empty(0, dtype=np.int64)
        pos = np.searchsorted(self.rowids, rowids)
        pos = np.minimum(pos, len(self.rowids) - 1)
        return pos[self.rowids[pos] == rowids]


# --------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------


class SqliteMemoryStore:
    """`agent_memory.ports.MemoryStore` on one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        dimension: int,
        model_id: str,
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        if dimension <= 0:
            raise ConfigurationError(f"embedding dimension must be positive, not {dimension}")
        self.path = Path(path)
        self.dimension = dimension
        self.model_id = model_id
        self._busy_timeout_ms = busy_timeout_ms
        self._cache_bytes = cache_bytes
        self._local = threading.local()
        self._connections: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], _AgentVectors] = OrderedDict()
        self._init_schema()

    # -- connections and transactions ---------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = open_private(
                    self.path,
                    timeout=self._busy_timeout_ms / 1000,
                    isolation_level=None,  # autocommit; transactions are explicit below
                    check_same_thread=False,  # only so that close() may close it from elsewhere
                    factory=_Connection,
                )
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
                conn.execute("PRAGMA journal_mode = WAL")
                # Durable against application crashes in WAL mode; only power loss may lose the
                # last commits, an acceptable trade for a local runtime's much cheaper commits.
                conn.execute("PRAGMA synchronous = NORMAL")
                # Request threads come and go, and with them their connections' page caches;
                # reading through a shared memory map keeps a fresh connection fast.
                conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            except sqlite3.OperationalError as exc:
                raise DependencyError(f"cannot open the memory store {self.path}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._connections.add(conn)
        return conn

    @contextmanager
    def _tx(self, *, write: bool, busy_timeout_ms: int | None = None) -> Iterator[sqlite3.Connection]:
        """One transaction: ``BEGIN IMMEDIATE`` for writes (waits its turn for the lock up front),
        ``BEGIN`` for a consistent read snapshot. Lock timeouts and I/O failures surface as
        `DependencyError` (retrying later may succeed). ``busy_timeout_ms`` shortens the wait
        for the lock for this transaction only."""
        conn = self._conn()
        if busy_timeout_ms is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        try:
            with transaction(conn, f"the memory store {self.path}", write=write) as tx:
                yield tx
        finally:
            if busy_timeout_ms is not None:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")

    def close(self) -> None:
        """Close every connection this store opened (call once, when the runtime stops)."""
        with self._lock:
            connections = list(self._connections)
            self._connections.clear()
            self._cache.clear()
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def _init_schema(self) -> None:
        """Create the schema if missing and check the file was made for this embedding model."""
        with self._tx(write=True) as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(audit)")}
            if columns and "detail" not in columns:  # a file made before audit details
                conn.execute("ALTER TABLE audit ADD COLUMN detail TEXT NOT NULL DEFAULT '{}'")
            migrate_to_v2 = _needs_v2_migration(conn)
            record_columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
            if record_columns and "merged_from" not in record_columns:  # a file made before merge history
                conn.execute("ALTER TABLE records ADD COLUMN merged_from TEXT NOT NULL DEFAULT '[]'")
                conn.execute("ALTER TABLE records ADD COLUMN last_seen_at INTEGER")
            if record_columns and "user_ids" not in record_columns:  # a file made before summaries' users
                conn.execute("ALTER TABLE records ADD COLUMN user_ids TEXT NOT NULL DEFAULT '[]'")
            if migrate_to_v2:
                _drop_v1_text_index(conn)
            for statement in _split_sql(_SCHEMA):
                conn.execute(statement)
            if migrate_to_v2:
                # the text index is rebuilt over every row with the new columns and the stemmer
                conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))
            expected = {
                "schema_version": SCHEMA_VERSION,
                "model_id": self.model_id,
                "dimension": str(self.dimension),
            }
            conn.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", expected.items())
            stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
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

    # -- writes -------------------------------------------------------------------------------

    def _check_vector(self, vector: Vector) -> npt.NDArray[np.float32]:
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self.dimension,):
            raise ConfigurationError(
                f"vector of shape {array.shape} given to a store of dimension {self.dimension} "
                f"(model {self.model_id!r}); the embedder and the store must use the same model"
            )
        if not np.all(np.isfinite(array)):
            raise ValidationFailedError("a vector holds NaN or infinite values")
        return array

    def put(self, items: Sequence[StoredRecord]) -> None:
        """Insert or overwrite by (tenant, agent, id), all items in one transaction.

        An overwrite replaces every field (a summary re-made in place) and keeps the FTS index and
        the agent's generation in step through the triggers.
        """
        rows = []
        for item in items:
            record = item.record
            vector = self._check_vector(item.vector)
            span_start, span_end = _span_us(record)
            rows.append(
                (
                    record.id,
                    record.tenant_id,
                    record.agent_id,
                    record.user_id,
                    record.grain.value,
                    record.time_key,
                    _opt_us(record.period_start),
                    _opt_us(record.period_end),
                    record.kind.value,
                    record.role,
                    record.conversation_id,
                    record.content,
                    record.topic,
                    record.topic_raw,
                    float(record.importance),
                    _json(record.tags),
                    None if record.source is None else _json(record.source.model_dump(mode="json")),
                    _json([link.model_dump(mode="json") for link in record.links]),
                    _json(record.metadata),
                    _json(record.source_ids),
                    record.content_hash,
                    record.access_count,
                    _opt_us(record.last_accessed_at),
                    _to_us(record.created_at),
                    _to_us(record.updated_at),
                    _to_us(record.occurred_at),
                    _opt_us(record.expires_at),
                    _opt_us(record.deleted_at),
                    record.speaker,
                    record.context,
                    _json([m.model_dump(mode="json") for m in record.merged_from]),
                    _opt_us(record.last_seen_at),
                    _json(record.user_ids),
                    span_start,
                    span_end,
                    vector.tobytes(),
                    record.tenant_id,
                    record.agent_id,
                )
            )
        if not rows:
            return
        with self._tx(write=True) as conn:
            conn.executemany(_UPSERT, rows)

    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        with self._tx(write=True) as conn:
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
        at = _to_us(event.at)
        with self._tx(write=True) as conn:
            resolved = self._resolve(conn, tenant_id, agent_id, record_id)
            cursor = conn.execute(
                "UPDATE records SET deleted_at = ?, updated_at = ? "
                "WHERE tenant_id = ? AND agent_id = ? AND id = ? AND deleted_at IS NULL "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (at, at, tenant_id, agent_id, resolved, at),
            )
            if cursor.rowcount == 0:
                return False
            _insert_audit(conn, [event])
        return True

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        at = _to_us(event.at)
        with self._tx(write=True) as conn:
            cursor = conn.execute(
                "UPDATE records SET deleted_at = max(coalesce(deleted_at, 0), ?) "
                "WHERE tenant_id = ? AND agent_id = ? AND id = ?",
                (at, tenant_id, agent_id, record_id),
            )
            if cursor.rowcount == 0:
                return False
            _insert_audit(conn, [event])
        return True

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        if events:
            with self._tx(write=True) as conn:
                _insert_audit(conn, events)

    def audit_events(
        self,
        tenant_id: str,
        agent_id: str,
        record_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> AuditPage:
        bound: dict[str, Any] = {"t": tenant_id, "a": agent_id, "r": record_id, "k": "audit"}
        where, params = "tenant_id = ? AND agent_id = ?", [tenant_id, agent_id]
        if record_id is not None:
            where += " AND record_id = ?"
            params.append(record_id)
        if cursor is not None:
            (seq,) = _keyset(_decode_cursor(cursor, bound), ("q", int))
            where += " AND seq < ?"
            params.append(seq)
        with self._tx(write=False) as conn:
            rows = conn.execute(
                "SELECT seq, tenant_id, agent_id, record_id, action, actor, at, detail FROM audit "
                f"WHERE {where} ORDER BY seq DESC LIMIT ?",
                [*params, limit + 1],
            ).fetchall()
        page = rows[:limit]
        events = [
            AuditEvent(
                tenant_id=row[1],
                agent_id=row[2],
                record_id=row[3],
                action=row[4],
                actor=row[5],
                at=_from_us(row[6]),
                detail=json.loads(row[7]),
            )
            for row in page
        ]
        next_cursor = _encode_cursor({**bound, "q": page[-1][0]}) if len(rows) > limit else None
        return AuditPage(events=events, next_cursor=next_cursor)

    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort: a lock held too long or a failing disk is logged, never raised.

        Access counters do not move the agent's generation, so this never invalidates the cache.
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return
        at_us = _to_us(at)
        try:
            with self._tx(write=True, busy_timeout_ms=ACCESS_BUSY_TIMEOUT_MS) as conn:
                for start in range(0, len(ids), _CHUNK):
                    chunk = ids[start : start + _CHUNK]
                    conn.execute(
                        "UPDATE records SET access_count = access_count + 1, "
                        "last_accessed_at = max(coalesce(last_accessed_at, ?), ?) "
                        f"WHERE tenant_id = ? AND agent_id = ? AND id IN ({', '.join('?' * len(chunk))})",
                        (at_us, at_us, tenant_id, agent_id, *chunk),
                    )
        except DependencyError as exc:
            logger.warning(
                "record_access skipped for %d records of %s/%s: %s", len(ids), tenant_id, agent_id, exc
            )

    # -- reads --------------------------------------------------------------------------------

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
        with self._tx(write=False) as conn:
            resolved = self._resolve(conn, tenant_id, agent_id, record_id)
            row = conn.execute(
                f"SELECT {_SELECT} FROM records r WHERE r.tenant_id = ? AND r.agent_id = ? AND r.id = ?",
                (tenant_id, agent_id, resolved),
            ).fetchone()
        return None if row is None else _row_to_record(row)

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> list[MemoryRecord]:
        if limit <= 0:
            return []
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM records r INDEXED BY records_live_by_conversation "
                "WHERE r.tenant_id = ? AND r.agent_id = ? AND r.conversation_id = ? AND r.occurred_at < ? "
                "AND r.deleted_at IS NULL AND r.grain = 'working' "
                "ORDER BY r.occurred_at DESC, r.id DESC LIMIT ?",
                (tenant_id, agent_id, conversation_id, _to_us(before), limit),
            ).fetchall()
        return [_row_to_record(row) for row in reversed(rows)]

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain (only grains that have some) and the oldest/newest occurred_at."""
        where, params = _live_filter(tenant_id, agent_id, now, None)
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT r.grain, count(*), min(r.occurred_at), max(r.occurred_at) FROM {_ELIGIBLE} "
                f"WHERE {where} GROUP BY r.grain",
                params,
            ).fetchall()
        if not rows:
            return StoreStats()
        return StoreStats(
            records={grain: count for grain, count, _, _ in rows},
            oldest=_from_us(min(row[2] for row in rows)),
            newest=_from_us(max(row[3] for row in rows)),
        )

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """Hard-delete the tenant's ``grain`` records whose span ended before ``cutoff``.

        A working record ends when it occurred; a summary when its period ends (a day's summary
        is older than midnight after it). Forgotten records go too, with the aliases that point
        at them; the audit trail stays. Deletes run in batches, each its own transaction, so a
        large clean-up never holds the write lock for long; the triggers keep the text index
        and the agents' generations in step.
        """
        cutoff_us = _to_us(cutoff)
        total = 0
        while True:
            with self._tx(write=True) as conn:
                deleted = conn.execute(
                    "DELETE FROM records WHERE seq IN (SELECT seq FROM records "
                    "WHERE tenant_id = ? AND grain = ? AND span_end < ? LIMIT ?)",
                    (tenant_id, Grain(grain).value, cutoff_us, _DELETE_BATCH),
                ).rowcount
                if deleted:
                    conn.execute(
                        "DELETE FROM aliases WHERE tenant_id = ? AND NOT EXISTS (SELECT 1 FROM records r "
                        "WHERE r.tenant_id = aliases.tenant_id AND r.agent_id = aliases.agent_id "
                        "AND r.id = aliases.record_id)",
                        (tenant_id,),
                    )
            total += deleted
            if deleted < _DELETE_BATCH:
                return total

    _ORPHAN_ALIASES = (
        "DELETE FROM aliases WHERE tenant_id = ? AND NOT EXISTS (SELECT 1 FROM records r "
        "WHERE r.tenant_id = aliases.tenant_id AND r.agent_id = aliases.agent_id "
        "AND r.id = aliases.record_id)"
    )

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
        bound = {"t": tenant_id, "g": grain.value, "c": _to_us(cutoff)}
        where = "tenant_id = ? AND grain = ? AND span_end < ?"
        params: list[Any] = [tenant_id, grain.value, bound["c"]]
        if cursor is not None:
            end, seq = _keyset(_decode_cursor(cursor, bound), ("e", int), ("q", int))
            where += " AND (span_end > ? OR (span_end = ? AND seq > ?))"
            params += [end, end, seq]
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT r.seq, r.span_end, {_SELECT} FROM records r INDEXED BY records_by_retention "
                f"WHERE {where} ORDER BY r.span_end, r.seq LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        page = rows[:limit]
        next_cursor = None
        if len(rows) > limit:
            next_cursor = _encode_cursor({**bound, "e": page[-1][1], "q": page[-1][0]})
        return Page(records=[_row_to_record(row[2:]) for row in page], next_cursor=next_cursor)

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """Hard-delete by id, in batches of one transaction each."""
        ids = list(dict.fromkeys(record_ids))
        total = 0
        for i in range(0, len(ids), _DELETE_BATCH):
            chunk = ids[i : i + _DELETE_BATCH]
            marks = ", ".join("?" for _ in chunk)
            with self._tx(write=True) as conn:
                deleted = conn.execute(
                    f"DELETE FROM records WHERE tenant_id = ? AND agent_id = ? AND id IN ({marks})",
                    (tenant_id, agent_id, *chunk),
                ).rowcount
                if deleted:
                    conn.execute(self._ORPHAN_ALIASES, (tenant_id,))
            total += deleted
        return total

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Expired and long-forgotten records of the tenant, in batches (a full scan of the
        tenant's rows: purge runs once a day, and both columns are mostly null)."""
        total = 0
        at = _to_us(now)
        while True:
            with self._tx(write=True) as conn:
                seqs = [
                    row[0]
                    for row in conn.execute(
                        "SELECT seq FROM records WHERE tenant_id = ? AND (expires_at <= ? OR deleted_at < ?) "
                        "LIMIT ?",
                        (tenant_id, at, _to_us(forgotten_before), _DELETE_BATCH),
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
                    conn.execute(self._ORPHAN_ALIASES, (tenant_id,))
            total += deleted
            if deleted < _DELETE_BATCH:
                return total

    def agents_with_records(
        self,
        grain: Grain,
        start: datetime,
        end: datetime,
        cursor: str | None = None,
        page_size: int = 500,
    ) -> AgentPage:
        """Every (tenant, agent) with live ``grain`` records whose span overlaps ``[start, end)``.

        Ordered by (tenant, agent); the cursor holds the last pair of the page and is bound to
        the grain and period it was issued for.
        """
        if page_size < 1:
            raise ValidationFailedError("page_size must be at least 1")
        grain = Grain(grain)
        bound = {"g": grain.value, "s": _to_us(start), "e": _to_us(end)}
        where = "grain = ? AND deleted_at IS NULL AND span_start < ? AND span_end >= ?"
        params: list[Any] = [grain.value, bound["e"], bound["s"]]
        if cursor is not None:
            after = _keyset(_decode_cursor(cursor, bound), ("t", str), ("a", str))
            where += " AND (tenant_id > ? OR (tenant_id = ? AND agent_id > ?))"
            params += [after[0], after[0], after[1]]
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT DISTINCT tenant_id, agent_id FROM records WHERE {where} "
                "ORDER BY tenant_id, agent_id LIMIT ?",
                (*params, page_size + 1),
            ).fetchall()
        agents = [AgentRef(tenant_id=t, agent_id=a) for t, a in rows[:page_size]]
        next_cursor = None
        if len(rows) > page_size:
            last = agents[-1]
            next_cursor = _encode_cursor({**bound, "t": last.tenant_id, "a": last.agent_id})
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> list[MemoryRecord]:
        """Live summaries whose ``user_ids`` name ``user_id`` (a scan of the agent's summaries:
        erasure is rare, and summaries are few next to working memory)."""
        where, params = _live_filter(
            tenant_id, agent_id, now, tuple(g for g in Grain if g is not Grain.WORKING)
        )
        where += " AND EXISTS (SELECT 1 FROM json_each(r.user_ids) WHERE json_each.value = ?)"
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM records r WHERE {where} ORDER BY r.occurred_at, r.id",
                (*params, user_id),
            ).fetchall()
        return [_row_to_record(row) for row in rows]

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> list[MemoryRecord]:
        """Every live ``grain`` record whose span overlaps ``[start, end)``, oldest first.

        A working record at exactly ``end`` belongs to the next period; a summary whose period
        ends at ``start`` does not overlap (its stored span ends 1µs before). One query on the
        covering index, then the rows themselves: no limit, the summarizer needs them all.
        """
        where, params = _live_filter(tenant_id, agent_id, now, (Grain(grain),))
        where += " AND r.span_start < ? AND r.span_end >= ?"
        params += [_to_us(end), _to_us(start)]
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM records r WHERE {where} ORDER BY r.occurred_at, r.id", params
            ).fetchall()
        return [_row_to_record(row) for row in rows]

    def nearest(
        self,
        tenant_id: str,
        agent_id: str,
        grain: Grain,
        vector: Vector,
        now: datetime,
        within: Neighbourhood | None = None,
    ) -> tuple[MemoryRecord, float] | None:
        """The live record of ``grain`` (``within`` the neighbourhood) with the highest cosine
        to ``vector``, and that cosine."""
        query_vector = self._unit_query(vector)
        where, params = _live_filter(tenant_id, agent_id, now, (grain,))
        if within is not None:
            where, params = _neighbourhood_filter(where, params, within)
        with self._tx(write=False) as conn:
            vectors = self._vectors(conn, tenant_id, agent_id)
            positions = vectors.positions(_rowids(conn, where, params))
            if not len(positions):
                return None
            scores = vectors.scores(positions, query_vector)
            best = int(np.argmax(scores))
            rowid = int(vectors.rowids[positions[best]])
            records = _fetch(conn, [rowid])
        return records[rowid], float(scores[best])

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by record id.

        Vector hits come first in vector-rank order, then lexical-only hits in lexical-rank order
        (the service re-ranks). With a query vector every candidate carries its cosine. Without a
        vector and without a searchable word in ``text``, the newest live records in the window.
        """
        limit = max(0, query.limit)
        if limit == 0:
            return []
        where, params = _query_filter(query)
        terms = query_terms(query.text)
        query_vector = None if query.vector is None else self._unit_query(query.vector)
        with self._tx(write=False) as conn:
            if query_vector is None and not terms:
                rows = conn.execute(
                    f"SELECT {_SELECT} FROM records r WHERE {where} {_NEWEST_FIRST} LIMIT ?",
                    (*params, limit),
                ).fetchall()
                return [Candidate(record=_row_to_record(row)) for row in rows]

            vector_hits: list[int] = []
            similarity: dict[int, float] = {}
            vectors: _AgentVectors | None = None
            if query_vector is not None:
                vectors = self._vectors(conn, query.tenant_id, query.agent_id)
                positions = vectors.positions(_rowids(conn, where, params))
                scores = vectors.scores(positions, query_vector)
                for i in _top_k(scores, limit):
                    rowid = int(vectors.rowids[positions[i]])
                    vector_hits.append(rowid)
                    similarity[rowid] = float(scores[i])

            lexical = scaled_to_best(_lexical_hits(conn, terms, where, params, limit)) if terms else {}
            order = fused_order(vector_hits, list(lexical))
            lexical_only = lacking_cosine(order, similarity)
            if vectors is not None and query_vector is not None and lexical_only:
                positions = vectors.positions(np.asarray(lexical_only, dtype=np.int64))
                for rowid, score in zip(
                    vectors.rowids[positions], vectors.scores(positions, query_vector), strict=True
                ):
                    similarity[int(rowid)] = float(score)

            records = _fetch(conn, order)

        return [
            Candidate(record=records[rowid], similarity=similarity.get(rowid), lexical=lexical.get(rowid))
            for rowid in order
            if rowid in records
        ]

    # -- what an operator reads ------------------------------------------------------------------

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents with live records, by agent id; the cursor holds the last id.

        A skip-scan of the covering index: one probe per agent, however many records each has.
        """
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        bound = {"t": tenant_id, "k": "agents"}
        where = "r.tenant_id = ? AND r.deleted_at IS NULL AND (r.expires_at IS NULL OR r.expires_at > ?)"
        params: list[Any] = [tenant_id, _to_us(now)]
        if cursor is not None:
            (after,) = _keyset(_decode_cursor(cursor, bound), ("a", str))
            where += " AND r.agent_id > ?"
            params.append(after)
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT DISTINCT r.agent_id FROM {_ELIGIBLE} WHERE {where} ORDER BY r.agent_id LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        agents = [AgentRef(tenant_id=tenant_id, agent_id=row[0]) for row in rows[:limit]]
        next_cursor = _encode_cursor({**bound, "a": agents[-1].agent_id}) if len(rows) > limit else None
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> list[int]:
        """Counts per ``[edges[i], edges[i + 1])`` of ``occurred_at``: the times are read from
        the covering index (no wide rows) and binned with numpy."""
        bounds = np.asarray([_to_us(e) for e in edges], dtype=np.int64)
        if len(bounds) < 2:
            return []
        if np.any(np.diff(bounds) <= 0):
            raise ValidationFailedError("histogram edges must be strictly ascending")
        where, params = _live_filter(tenant_id, agent_id, now, (Grain(grain),))
        where += " AND r.occurred_at >= ? AND r.occurred_at < ?"
        params += [int(bounds[0]), int(bounds[-1])]
        with self._tx(write=False) as conn:
            row = conn.execute(
                f"SELECT group_concat(r.occurred_at) FROM {_ELIGIBLE} WHERE {where}", params
            ).fetchone()
        times = (
            np.fromstring(row[0], dtype=np.int64, sep=",")
            if row is not None and row[0]
            else np.empty(0, dtype=np.int64)
        )
        counts = np.bincount(np.searchsorted(bounds, times, side="right") - 1, minlength=len(bounds) - 1)
        return [int(c) for c in counts[: len(bounds) - 1]]

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort, as `record_access`: a busy store skips the count rather than the search."""
        day = at.astimezone(UTC).date().isoformat()
        try:
            with self._tx(write=True, busy_timeout_ms=ACCESS_BUSY_TIMEOUT_MS) as conn:
                conn.execute(
                    "INSERT INTO search_days (tenant_id, agent_id, day, searches, zero_hits) "
                    "VALUES (?, ?, ?, 1, ?) ON CONFLICT (tenant_id, agent_id, day) DO UPDATE SET "
                    "searches = searches + 1, zero_hits = zero_hits + excluded.zero_hits",
                    (tenant_id, agent_id, day, 1 if hits == 0 else 0),
                )
        except DependencyError as exc:
            logger.warning("record_search skipped for %s/%s: %s", tenant_id, agent_id, exc)

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> list[SearchDay]:
        with self._tx(write=False) as conn:
            rows = conn.execute(
                "SELECT day, searches, zero_hits FROM search_days "
                "WHERE tenant_id = ? AND agent_id = ? AND day >= ? ORDER BY day",
                (tenant_id, agent_id, since.isoformat()),
            ).fetchall()
        return [SearchDay(day=date.fromisoformat(d), searches=n, zero_hits=z) for d, n, z in rows]

    # Last of the public methods: below it, ``list`` in this class body names this method.
    def list(
        self,
        tenant_id: str,
        agent_id: str,
        now: datetime,
        grain: Grain | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        """Live records, newest ``occurred_at`` first (ties: id descending), keyset-paginated.

        The cursor is urlsafe base64 of JSON naming the last record of the page and the tenant,
        agent and grain it belongs to; a cursor of anything else raises `ValidationFailedError`.
        """
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        where, params = _live_filter(tenant_id, agent_id, now, (grain,) if grain else None)
        bound = {"t": tenant_id, "a": agent_id, "g": grain.value if grain else None}
        if cursor is not None:
            occurred_us, last_id = _keyset(_decode_cursor(cursor, bound), ("o", int), ("i", str))
            where += " AND (r.occurred_at < ? OR (r.occurred_at = ? AND r.id < ?))"
            params += [occurred_us, occurred_us, last_id]
        with self._tx(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM records r WHERE {where} {_NEWEST_FIRST} LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        records = [_row_to_record(row) for row in rows[:limit]]
        next_cursor = None
        if len(rows) > limit:
            last = records[-1]
            next_cursor = _encode_cursor({**bound, "o": _to_us(last.occurred_at), "i": last.id})
        return Page(records=records, next_cursor=next_cursor)

    # -- vectors ------------------------------------------------------------------------------

    def _unit_query(self, vector: Vector) -> npt.NDArray[np.float32]:
        array = self._check_vector(vector)
        norm = float(np.linalg.norm(array))
        return array / norm if norm > 0 else array

    def _vectors(self, conn: sqlite3.Connection, tenant_id: str, agent_id: str) -> _AgentVectors:
        """The agent's live vectors, brought up to date only when its generation moved.

        Rows written since the cached generation are merged in (a write between two searches
        costs a small read, not a reload of the agent); a removal, or a change too big to merge,
        reloads everything. Rows forgotten since the cache was built may linger in it until
        then: harmless, since only the rows SQL finds eligible are ever scored.
        Must run inside a read transaction, so the generation and the rows read are one snapshot.
        """
        key = (tenant_id, agent_id)
        row = conn.execute(
            "SELECT gen, shrink FROM generations WHERE tenant_id = ? AND agent_id = ?", (tenant_id, agent_id)
        ).fetchone()
        gen, shrink = (0, 0) if row is None else (int(row[0]), int(row[1]))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and (cached.gen, cached.shrink) == (gen, shrink):
                self._cache.move_to_end(key)
                return cached
        loaded: _AgentVectors | None = None
        if cached is not None and cached.shrink == shrink and cached.gen < gen:
            rows = conn.execute(
                "SELECT seq, vector FROM records WHERE tenant_id = ? AND agent_id = ? "
                "AND deleted_at IS NULL AND vgen > ? ORDER BY seq LIMIT ?",
                (tenant_id, agent_id, cached.gen, _max_merge(len(cached.rowids)) + 1),
            ).fetchall()
            if len(rows) <= _max_merge(len(cached.rowids)):
                loaded = cached.merged(gen, *self._unpack(rows))
        if loaded is None:
            rows = conn.execute(
                "SELECT seq, vector FROM records "
                "WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL ORDER BY seq",
                (tenant_id, agent_id),
            ).fetchall()
            loaded = _AgentVectors(gen, shrink, *self._unpack(rows))
        with self._lock:
            current = self._cache.get(key)
            if current is None or current.gen <= loaded.gen:  # never replace a newer snapshot
                self._cache[key] = loaded
            self._cache.move_to_end(key)
            total = sum(v.nbytes for v in self._cache.values())
            while total > self._cache_bytes and len(self._cache) > 1:
                _, evicted = self._cache.popitem(last=False)
                total -= evicted.nbytes
        return loaded

    def _unpack(self, rows: Sequence[Any]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(rowids, unit-length rows) from ``(seq, vector blob)`` rows."""
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[1] for r in rows)
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dimension).copy()
        return rowids, _normalise_rows(matrix)


# --------------------------------------------------------------------------------------------
# SQL building blocks
# --------------------------------------------------------------------------------------------


def _insert_audit(conn: sqlite3.Connection, events: Sequence[AuditEvent]) -> None:
    conn.executemany(
        "INSERT INTO audit (tenant_id, agent_id, record_id, action, actor, at, detail) "
        "SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM audit WHERE tenant_id = ? "
        "AND agent_id = ? AND record_id = ? AND action = ? AND at = ?)",
        [
            (
                *(e.tenant_id, e.agent_id, e.record_id, e.action, e.actor, _to_us(e.at)),
                json.dumps(e.detail, sort_keys=True, separators=(",", ":")),
                *(e.tenant_id, e.agent_id, e.record_id, e.action, _to_us(e.at)),
            )
            for e in events
        ],
    )


def _split_sql(script: str) -> list[str]:
    """The schema's statements, one by one (``executescript`` would commit our transaction).

    Triggers contain ``;`` in their bodies, so a statement ends at a ``;`` that closes a line
    outside a ``BEGIN ... END`` block.
    """
    statements: list[str] = []
    current: list[str] = []
    in_trigger = False
    for line in script.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("--")):
            continue
        current.append(line)
        if stripped.startswith("CREATE TRIGGER"):
            in_trigger = True
        if stripped.endswith(";") and (not in_trigger or stripped == "END;"):
            statements.append("\n".join(current))
            current, in_trigger = [], False
    return statements


def _live_filter(
    tenant_id: str, agent_id: str, now: datetime, grains: Sequence[Grain] | None
) -> tuple[str, list[Any]]:
    where = (
        "r.tenant_id = ? AND r.agent_id = ? AND r.deleted_at IS NULL "
        "AND (r.expires_at IS NULL OR r.expires_at > ?)"
    )
    params: list[Any] = [tenant_id, agent_id, _to_us(now)]
    if grains:
        where += f" AND r.grain IN ({', '.join('?' * len(grains))})"
        params += [Grain(g).value for g in grains]
    return where, params


def _neighbourhood_filter(where: str, params: list[Any], within: Neighbourhood) -> tuple[str, list[Any]]:
    params = list(params)
    for wanted, column, value in (
        (within.match_user, "user_id", within.user_id),
        (within.match_conversation, "conversation_id", within.conversation_id),
    ):
        if not wanted:
            continue
        if value is None:
            where += f" AND r.{column} IS NULL"
        else:
            where += f" AND r.{column} = ?"
            params.append(value)
    if within.since is not None:
        where += " AND r.occurred_at >= ?"
        params.append(_to_us(within.since))
    if within.until is not None:
        where += " AND r.occurred_at < ?"
        params.append(_to_us(within.until))
    return where, params


def _query_filter(query: StoreQuery) -> tuple[str, list[Any]]:
    """Which records may match a query, as SQL over ``records r`` (empty tuples: no filter)."""
    where, params = _live_filter(query.tenant_id, query.agent_id, query.now, query.grains)
    if query.end is not None:
        where += " AND r.span_start <= ?"
        params.append(_to_us(query.end))
    if query.start is not None:
        where += " AND r.span_end >= ?"
        params.append(_to_us(query.start))
    if query.kinds:
        where += f" AND r.kind IN ({', '.join('?' * len(query.kinds))})"
        params += [MemoryKind(k).value for k in query.kinds]
    if query.tags:
        marks = ", ".join("?" * len(query.tags))
        where += f" AND EXISTS (SELECT 1 FROM json_each(r.tags) WHERE value IN ({marks}))"
        params += list(query.tags)
    if query.user_id is not None:
        where += " AND r.user_id = ?"
        params.append(query.user_id)
    return where, params


def _needs_v2_migration(conn: sqlite3.Connection) -> bool:
    """A version 1 file: records without ``speaker`` and ``context``, a text index without stems."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
    return bool(columns) and "speaker" not in columns


def _drop_v1_text_index(conn: sqlite3.Connection) -> None:
    """Version 1 -> 2 in place: add the two columns, drop the text index and its triggers (the
    schema re-creates them and the caller rebuilds the index). Vectors are kept as they are:
    records written before the upgrade are searched as they were embedded."""
    conn.execute("ALTER TABLE records ADD COLUMN speaker TEXT")
    conn.execute("ALTER TABLE records ADD COLUMN context TEXT")
    for trigger in ("records_fts_insert", "records_fts_delete", "records_fts_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE IF EXISTS records_fts_vocab")
    conn.execute("DROP TABLE IF EXISTS records_fts")


def _informative_terms(conn: sqlite3.Connection, terms: list[str]) -> list[str]:
    """``terms`` without those in more than `COMMON_TERM_SHARE` of the indexed documents.

    Scoring a common word ("the", "to", "a") costs BM25 a visit to most documents while it adds
    almost nothing to the ranking (its IDF is near zero; above half the documents FTS5 clamps it to
    zero). Dropping them takes most of the work out of a question-like query on a large store.
    Small stores keep every word (their statistics are too noisy, and every query is cheap), and
    so does a query whose remaining words match nothing. Document frequencies are those of the
    whole index, as BM25's own are.
    """
    if len(terms) < 2:
        return terms
    docs = conn.execute("SELECT count(*) FROM records WHERE deleted_at IS NULL").fetchone()[0]
    if docs < COMMON_TERM_MIN_DOCS:
        return terms
    marks = ", ".join("?" * len(terms))
    df = dict(
        conn.execute(f"SELECT term, doc FROM records_fts_vocab WHERE term IN ({marks})", terms).fetchall()
    )
    kept = [term for term in terms if df.get(term, 0) <= docs * COMMON_TERM_SHARE]
    return kept if any(df.get(term, 0) for term in kept) else terms


def _lexical_hits(
    conn: sqlite3.Connection, terms: list[str], where: str, params: Sequence[Any], limit: int
) -> dict[int, float]:
    """Up to ``limit`` eligible rows matching any term, best first, with FTS5's ``bm25()`` (lower
    is better; `domain.fusion.scaled_to_best` makes the top hit 1.0)."""
    match = fts_match(_informative_terms(conn, terms))
    rows = conn.execute(
        # The match runs once, first (MATERIALIZED): left to itself the planner may walk the
        # eligible rows and re-run the match for each one (seconds instead of milliseconds).
        "WITH hits AS MATERIALIZED (SELECT rowid, bm25(records_fts) AS s FROM records_fts "
        "WHERE records_fts MATCH ?) "
        f"SELECT r.seq, hits.s FROM hits JOIN records r ON r.seq = hits.rowid WHERE {where} "
        "ORDER BY hits.s LIMIT ?",
        (match, *params, limit),
    ).fetchall()
    return dict(rows)


def _rowids(conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> npt.NDArray[np.int64]:
    """Rowids of the records matching ``where`` (in no particular order).

    Returned as one comma-separated string parsed by numpy: for 10,000 rows that is several
    times faster than handing Python 10,000 one-column rows.
    """
    row = conn.execute(f"SELECT group_concat(r.seq) FROM {_ELIGIBLE} WHERE {where}", params).fetchone()
    if row is None or not row[0]:
        return np.empty(0, dtype=np.int64)
    return np.fromstring(row[0], dtype=np.int64, sep=",")


def _fetch(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
    records: dict[int, MemoryRecord] = {}
    for start in range(0, len(rowids), _CHUNK):
        chunk = rowids[start : start + _CHUNK]
        rows = conn.execute(
            f"SELECT r.seq, {_SELECT} FROM records r WHERE r.seq IN ({', '.join('?' * len(chunk))})", chunk
        ).fetchall()
        for row in rows:
            records[row[0]] = _row_to_record(row[1:])
    return records


def _max_merge(cached_rows: int) -> int:
    """The most changed rows merged into a cached matrix; more and it is rebuilt from scratch."""
    return max(_MERGE_MIN_ROWS, cached_rows // 4)


def _dot(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``matrix @ vector`` on the calling thread.

    ``@`` hands a product this size to OpenBLAS's thread pool, which on a small machine shared with
    the HTTP server, the writer and the embedding model stalls behind the other threads (measured
    0.6 ms idle, 5-8 ms under load for 10,000 x 384). einsum runs on the caller's thread only.
    """
    return np.einsum("ij,j->i", matrix, vector)


def _top_k(scores: npt.NDArray[np.float32], k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first."""
    if len(scores) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in part[np.argsort(-scores[part], kind="stable")]]
    return [int(i) for i in np.argsort(-scores, kind="stable")]
