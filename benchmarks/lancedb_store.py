"""The SQLite store with its search candidates from LanceDB: a measured alternative, not the default.

Why it exists: the serverless store's decision (docs/decisions.md, "The serverless store") weighed
LanceDB, tables on S3 holding vectors and a native full-text index, against a tenant's SQLite
file in S3. To weigh it on the same store contract suite and the same LoCoMo run as the stores
that ship, this variant keeps everything the SQLite store does (records, filters, audit trail,
forget, retention, knowledge, embedding spaces) and hands LanceDB the one part it would take over:
the candidates of a search, the nearest vectors and the BM25 matches. Nothing builds it but the
contract suite's fixture and ``benchmarks/locomo_lancedb.py``, so it lives beside the benchmark
rather than in the shipped package; ``lancedb`` is the optional ``lancedb`` extra.

**Layout.** One Lance table per tenant under ``uri`` (a directory, or ``s3://bucket/prefix`` with
``storage_options``), named by a hash of the tenant id; a row per live record: ``seq`` (the
SQLite rowid), ``tenant_id``, ``agent_id``, ``vgen``, the four texts the SQLite store's FTS5 table
indexes (``content``, ``topic``, ``speaker``, ``context``; empty for none) and the record's vector
at unit length. Each text column has LanceDB's native inverted index (English stemming, ASCII
folding, no stop-word list: `sqlite_filters.query_terms` leaves those out of a query, as for
FTS5); rows added since the last optimize are searched unindexed by LanceDB itself, and
`OPTIMIZE_EVERY` writes to a table fold them in. No vector index: at a serverless tenant's size
LanceDB's flat search is exact, as the SQLite store's numpy scan is.

**Isolation.** Every LanceDB query is made in the tenant's own table and filters on
``tenant_id`` and ``agent_id`` (a prefilter, before ranking), whatever else it filters on.

**Eligibility is SQL's**, as with `sqlite_ann`: when at most `PUSHDOWN_MAX` records may match
(a window, a grain, an agent of a few thousand memories), their rowids go into the LanceDB filter
(``seq IN (...)``) and LanceDB ranks exactly those; otherwise LanceDB proposes candidates of the
agent, SQL keeps the eligible ones, and too few make it ask for eight times more until the
agent's rows run out. Vector similarities are computed here from the unit vectors LanceDB
returns, so a lexical-only hit gets its cosine from the same row.

**Staying in step.** The table follows the SQLite file, never the other way round. A write is
followed by one ``merge_insert`` of the agent's rows whose ``vgen`` moved (the per-agent
generations of `sqlite_schema`); a removal (forget, stale summary, erasure, retention) by a
delete of the rows no longer live and an optimize that drops the table's older versions, so no
version left returns them. Their bytes stay in their data file, hidden by a deletion file, until
a compaction rewrites it (LanceDB's optimize does once a tenth of a fragment is deleted, and
offers no way to ask for it sooner; pylance's ``compact_files`` does, at 189 MB more). A search
first compares the agent's generation with the one the table was brought to and catches up if
another path wrote (re-embedding). One lock serialises this process's LanceDB calls: the
optimize after a removal deletes the files of older versions, which a concurrent reader could be
holding.

Not covered: a tenant's own embedding space (`sqlite_spaces`) is searched exactly from SQLite, as
in the SQLite store (a table per space would be needed), and shared knowledge stays in FTS5.
"""

from __future__ import annotations

import collections
import hashlib
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_ann import VectorAsk
from agent_memory.adapters.sqlite.sqlite_filters import CHUNK, query_filter, query_terms
from agent_memory.adapters.sqlite.sqlite_retrieval import Span
from agent_memory.adapters.sqlite.sqlite_rows import NEWEST_FIRST, RECORD_FIELDS, row_to_record
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.adapters.sqlite.sqlite_vectors import dot, eligible_rowids, normalise_rows
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import AuditEvent, Candidate, StoredRecord, StoreQuery
from agent_memory.recall.rules.fusion import fused_order, scaled_to_best

#: The columns LanceDB's full-text indexes cover: the SQLite store's FTS5 columns.
TEXT_COLUMNS = ("content", "topic", "speaker", "context")
#: At most this many eligible rows are named in the LanceDB filter; more, and LanceDB proposes.
PUSHDOWN_MAX = 4096
#: Candidates first asked for when LanceDB proposes (or 4 per wanted result); then 8 times more.
MIN_CANDIDATES = 64
#: Writes to a tenant's table between two optimizes (compaction, new rows into the text indexes).
OPTIMIZE_EVERY = 10
#: Rowids per ``seq IN (...)`` of a LanceDB delete.
DELETE_CHUNK = 1000

#: (rowid, score, cosine to the query or None) of one LanceDB hit.
Hit = tuple[int, float, float | None]
Ask = Callable[[str, int], list[Hit]]


def _quoted(value: str) -> str:
    """A string literal of LanceDB's SQL filters (a quote doubled)."""
    return "'" + value.replace("'", "''") + "'"


def _scope(tenant_id: str, agent_id: str | None = None) -> str:
    """The filter every query of the tenant's table carries: its tenant and, but for the
    tenant-wide retention sweep, its agent."""
    scope = f"tenant_id = {_quoted(tenant_id)}"
    return scope if agent_id is None else f"{scope} AND agent_id = {_quoted(agent_id)}"


def _seq_in(rowids: Iterable[int]) -> str:
    return f"seq IN ({', '.join(str(int(r)) for r in rowids)})"


class LanceCandidates:
    """The tenants' Lance tables of one store, kept in step with its SQLite file (see the module
    docstring)."""

    def __init__(
        self,
        uri: str,
        dimension: int,
        *,
        storage_options: dict[str, str] | None = None,
        optimize_every: int = OPTIMIZE_EVERY,
    ) -> None:
        import lancedb
        import pyarrow as pa

        self._pa = pa
        # Every read asks for the table's latest version: another process (another function
        # instance) may have written since; LanceDB's default is to never look again.
        self._db = lancedb.connect(
            uri, storage_options=storage_options, read_consistency_interval=timedelta(0)
        )
        self.dimension = dimension
        self.pushdown_max = PUSHDOWN_MAX
        self._optimize_every = optimize_every
        self._schema = pa.schema(
            [
                pa.field("seq", pa.int64(), nullable=False),
                pa.field("tenant_id", pa.string(), nullable=False),
                pa.field("agent_id", pa.string(), nullable=False),
                pa.field("vgen", pa.int64(), nullable=False),
                *(pa.field(column, pa.string(), nullable=False) for column in TEXT_COLUMNS),
                pa.field("vector", pa.list_(pa.float32(), dimension), nullable=False),
            ]
        )
        self._lock = threading.RLock()
        self._tables: dict[str, Any] = {}
        self._indexed: set[str] = set()
        self._writes: dict[str, int] = {}
        #: (tenant, agent) -> the (gen, shrink) of `sqlite_schema` the table was brought to, and
        #: the highest rowid of the agent it holds (a row above it is new: appended, not merged).
        self._synced: dict[tuple[str, str], tuple[int, int]] = {}
        self._top: dict[tuple[str, str], int] = {}

    # --- the tables -----------------------------------------------------------------------------

    @staticmethod
    def table_name(tenant_id: str) -> str:
        """A table name for a tenant: ids may hold characters a table name must not."""
        return "t" + hashlib.sha256(tenant_id.encode()).hexdigest()[:32]

    def _table(self, tenant_id: str, *, create: bool) -> Any | None:
        name = self.table_name(tenant_id)
        table = self._tables.get(name)
        if table is not None:
            return table
        if create:
            table = self._db.create_table(name, schema=self._schema, exist_ok=True)
        else:
            try:
                table = self._db.open_table(name)
            except ValueError:  # LanceDB's "not found"
                return None
        self._tables[name] = table
        return table

    def _index(self, table: Any) -> None:
        """The text indexes, once the table has rows (LanceDB builds none over an empty one)."""
        if table.name in self._indexed:
            return
        from lancedb.index import FTS

        have = {column for index in table.list_indices() for column in index.columns}
        for column in TEXT_COLUMNS:
            if column not in have:
                config = FTS(language="English", stem=True, remove_stop_words=False, ascii_folding=True)
                table.create_index(column, config=config, replace=True)
        self._indexed.add(table.name)

    # --- staying in step ------------------------------------------------------------------------

    def sync(self, conn: sqlite3.Connection, tenant_id: str, agent_id: str) -> None:
        """Bring the agent's rows in the tenant's table to what ``conn`` reads now: the rows
        whose ``vgen`` moved since the last sync, and, when rows were removed since (or on the
        first sync in this process), a comparison of every row."""
        key = (tenant_id, agent_id)
        row = conn.execute(
            "SELECT gen, shrink FROM generations WHERE tenant_id = ? AND agent_id = ?", key
        ).fetchone()
        state = (0, 0) if row is None else (int(row[0]), int(row[1]))
        with self._lock:
            done = self._synced.get(key)
            # Generations only grow: a reader of an older snapshot must not undo a newer sync.
            if done is not None and state[0] <= done[0]:
                return
            table = self._table(tenant_id, create=state[0] > 0)
            if table is not None:
                if done is None or done[1] != state[1]:
                    self._reconcile(conn, table, key)
                else:
                    self._upsert(table, self._rows(conn, key, since=done[0]), key)
            self._synced[key] = state

    def _reconcile(self, conn: sqlite3.Connection, table: Any, key: tuple[str, str]) -> None:
        live = dict(
            conn.execute(
                "SELECT seq, vgen FROM records WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL",
                key,
            ).fetchall()
        )
        have = table.search().where(_scope(*key)).select(["seq", "vgen"]).limit(None).to_arrow()
        seqs = have["seq"].to_pylist()
        held = dict(zip(seqs, have["vgen"].to_pylist(), strict=True))
        # A row appended twice (two processes catching up with one write at once) goes, and
        # comes back once.
        twice = {seq for seq, n in collections.Counter(seqs).items() if n > 1}
        gone = [seq for seq in held if seq not in live or seq in twice]
        changed = [seq for seq, vgen in live.items() if held.get(seq) != vgen or seq in twice]
        self._delete(table, _scope(*key), gone)
        self._top[key] = max((seq for seq in held if seq not in twice), default=0)
        self._upsert(table, self._rows(conn, key, seqs=changed), key)

    def prune_tenant(self, conn: sqlite3.Connection, tenant_id: str) -> None:
        """Delete every row of the tenant's table that is no longer a live record (a
        tenant-wide retention sweep or purge), whichever agent it belongs to."""
        with self._lock:
            table = self._table(tenant_id, create=False)
            if table is None:
                return
            live = {
                int(r[0])
                for r in conn.execute(
                    "SELECT seq FROM records WHERE tenant_id = ? AND deleted_at IS NULL", (tenant_id,)
                )
            }
            have = table.search().where(_scope(tenant_id)).select(["seq"]).limit(None).to_arrow()
            self._delete(table, _scope(tenant_id), [s for s in have["seq"].to_pylist() if s not in live])

    def _rows(
        self,
        conn: sqlite3.Connection,
        key: tuple[str, str],
        *,
        since: int | None = None,
        seqs: Sequence[int] | None = None,
    ) -> Any:
        """The agent's live rows of ``vgen`` above ``since``, or those of ``seqs``, as the table's
        Arrow rows (vectors at unit length)."""
        select = (
            "SELECT seq, tenant_id, agent_id, vgen, content, coalesce(topic, ''), coalesce(speaker, ''), "
            "coalesce(context, ''), vector FROM records "
            "WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL"
        )
        rows: list[Any] = []
        if seqs is None:
            rows = conn.execute(f"{select} AND vgen > ?", (*key, since or 0)).fetchall()
        else:
            for start in range(0, len(seqs), CHUNK):
                chunk = list(seqs[start : start + CHUNK])
                marks = ", ".join("?" * len(chunk))
                rows += conn.execute(f"{select} AND seq IN ({marks})", (*key, *chunk)).fetchall()
        matrix = np.frombuffer(b"".join(r[8] for r in rows), dtype=np.float32).reshape(
            len(rows), self.dimension
        )
        pa = self._pa
        columns: dict[str, Any] = {
            name: [r[i] for r in rows]
            for i, name in enumerate(("seq", "tenant_id", "agent_id", "vgen", *TEXT_COLUMNS))
        }
        vectors = pa.FixedSizeListArray.from_arrays(
            pa.array(normalise_rows(matrix.copy()).ravel(), type=pa.float32()), self.dimension
        )
        return pa.Table.from_pydict({**columns, "vector": vectors}, schema=self._schema)

    def _upsert(self, table: Any, rows: Any, key: tuple[str, str]) -> None:
        """Write ``rows`` of the agent ``key``: appended when every one is above the highest rowid
        the table holds of the agent (a new record: the writer's usual case, and LanceDB's
        cheapest write), else merged on ``seq`` (a rewrite: a merge, a re-made summary)."""
        if rows.num_rows == 0:
            return
        seqs = rows["seq"].to_pylist()
        if min(seqs) > self._top.get(key, 0):
            table.add(rows)
        else:
            table.merge_insert("seq").when_matched_update_all().when_not_matched_insert_all().execute(rows)
        self._top[key] = max(self._top.get(key, 0), *seqs)
        self._index(table)
        self._wrote(table)

    def _delete(self, table: Any, scope: str, rowids: Sequence[int]) -> None:
        """Delete ``rowids``, then optimize with every older version dropped: what was forgotten
        leaves the table's current files and its history, not only its results."""
        if not rowids:
            return
        for start in range(0, len(rowids), DELETE_CHUNK):
            table.delete(f"{scope} AND {_seq_in(rowids[start : start + DELETE_CHUNK])}")
        with warnings.catch_warnings():  # that older versions go is the point (one process: the lock)
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        self._writes[table.name] = 0

    def _wrote(self, table: Any) -> None:
        writes = self._writes.get(table.name, 0) + 1
        if writes >= self._optimize_every:
            table.optimize()
            writes = 0
        self._writes[table.name] = writes

    # --- searching ------------------------------------------------------------------------------

    def nearest(
        self,
        conn: sqlite3.Connection,
        key: tuple[str, str],
        where: str,
        params: Sequence[Any],
        query: npt.NDArray[np.float32],
        limit: int,
    ) -> list[Hit]:
        """The ``limit`` eligible rows nearest ``query``, best first, as (rowid, cosine, cosine)."""

        def ask(condition: str, k: int) -> list[Hit]:
            found = (
                self._searchable(key[0])
                .search(query, vector_column_name="vector")
                .distance_type("dot")
                .where(condition, prefilter=True)
                .limit(k)
                .select(["seq", "vector", "_distance"])  # named, or LanceDB warns that it adds it
                .to_arrow()
            )
            cosines = self._cosines(found, query)
            return _once([(seq, c, c) for seq, c in zip(found["seq"].to_pylist(), cosines, strict=True)])

        return self._eligible_best(conn, key, where, params, ask, limit)

    def matches(
        self,
        conn: sqlite3.Connection,
        key: tuple[str, str],
        where: str,
        params: Sequence[Any],
        terms: Sequence[str],
        limit: int,
        query: npt.NDArray[np.float32] | None,
    ) -> list[Hit]:
        """The ``limit`` eligible rows matching any of ``terms`` best by LanceDB's BM25 (summed
        over the four text columns), as (rowid, BM25, cosine to ``query`` or None)."""
        from lancedb.query import FullTextOperator, MultiMatchQuery

        columns = list(TEXT_COLUMNS)
        text = MultiMatchQuery(
            " ".join(terms), columns, boosts=[1.0] * len(columns), operator=FullTextOperator.OR
        )

        def ask(condition: str, k: int) -> list[Hit]:
            found = (
                self._searchable(key[0])
                .search(text, query_type="fts")
                .where(condition, prefilter=True)
                .limit(k)
                .select(["seq", "vector"])
                .to_arrow()
            )
            cosines = [None] * found.num_rows if query is None else self._cosines(found, query)
            return _once(
                list(zip(found["seq"].to_pylist(), found["_score"].to_pylist(), cosines, strict=True))
            )

        return self._eligible_best(conn, key, where, params, ask, limit)

    def _searchable(self, tenant_id: str) -> Any:
        table = self._table(tenant_id, create=False)
        assert table is not None, "a search syncs first: a tenant with records has a table"
        return table

    def _cosines(self, found: Any, query: npt.NDArray[np.float32]) -> list[float]:
        flat = found["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(found.num_rows, self.dimension)
        return [float(c) for c in dot(matrix, query)]

    def _eligible_best(
        self,
        conn: sqlite3.Connection,
        key: tuple[str, str],
        where: str,
        params: Sequence[Any],
        ask: Ask,
        limit: int,
    ) -> list[Hit]:
        """The best ``limit`` hits of ``ask`` among the rows SQL finds eligible (see the module
        docstring: the eligible rowids named in the filter, or candidates asked for until enough
        are eligible or the agent has no more)."""
        with self._lock:
            if self._table(key[0], create=False) is None:
                return []
            eligible = eligible_rowids(conn, where, params, self.pushdown_max + 1)
            if len(eligible) <= self.pushdown_max:
                return ask(f"{_scope(*key)} AND {_seq_in(eligible)}", limit) if len(eligible) else []
            wanted = max(MIN_CANDIDATES, 4 * limit)
            while True:
                hits = ask(_scope(*key), wanted)
                kept = _eligible(conn, [h[0] for h in hits], where, params)
                best = [h for h in hits if h[0] in kept]
                if len(best) >= limit or len(hits) < wanted:
                    return best[:limit]
                wanted *= 8

    def forget_agent_state(self) -> None:
        """Forget what was synced (the next sync of each agent compares every row): for tests."""
        with self._lock:
            self._synced.clear()


def _once(hits: list[Hit]) -> list[Hit]:
    """Each rowid at its first (best) place: a row appended twice until the next reconcile."""
    seen: set[int] = set()
    kept: list[Hit] = []
    for hit in hits:
        if hit[0] not in seen:
            seen.add(hit[0])
            kept.append(hit)
    return kept


def _eligible(conn: sqlite3.Connection, rowids: Sequence[int], where: str, params: Sequence[Any]) -> set[int]:
    """Those of ``rowids`` that match ``where``, looked up by rowid."""
    kept: set[int] = set()
    for start in range(0, len(rowids), CHUNK):
        chunk = list(rowids[start : start + CHUNK])
        marks = ", ".join("?" * len(chunk))
        kept |= {
            int(r[0])
            for r in conn.execute(
                f"SELECT r.seq FROM records r NOT INDEXED WHERE r.seq IN ({marks}) AND ({where})",
                (*chunk, *params),
            )
        }
    return kept


def _fetch(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
    records: dict[int, MemoryRecord] = {}
    for start in range(0, len(rowids), CHUNK):
        chunk = list(rowids[start : start + CHUNK])
        rows = conn.execute(
            f"SELECT r.seq, {RECORD_FIELDS} FROM records r WHERE r.seq IN ({', '.join('?' * len(chunk))})",
            chunk,
        ).fetchall()
        records.update((row[0], row_to_record(row[1:])) for row in rows)
    return records


class LanceDbMemoryStore(SqliteMemoryStore):
    """The SQLite store whose searches take their candidates from LanceDB (module docstring).

    ``lance_uri`` defaults to ``lancedb/`` beside the file; ``storage_options`` are LanceDB's
    (an S3 endpoint, region, credentials)."""

    def __init__(
        self,
        path: Path,
        dimension: int,
        model_id: str,
        *,
        lance_uri: str | None = None,
        storage_options: dict[str, str] | None = None,
        optimize_every: int = OPTIMIZE_EVERY,
        **options: Any,
    ) -> None:
        super().__init__(path, dimension, model_id, **options)
        self._lance = LanceCandidates(
            lance_uri or str(Path(path).parent / "lancedb"),
            dimension,
            storage_options=storage_options,
            optimize_every=optimize_every,
        )

    # --- searching ------------------------------------------------------------------------------

    def search(self, query: StoreQuery) -> list[Candidate]:
        """`SqliteRetrieval.search` with LanceDB's candidates: up to ``limit`` vector hits, then
        up to ``limit`` lexical hits the vectors did not bring, each with its cosine."""
        if query.space:  # a tenant's own space: exactly, from SQLite
            return super().search(query)
        limit = max(0, query.limit)
        if limit == 0:
            return []
        where, params = query_filter(query)
        terms = query_terms(query.text)
        vector = None if query.vector is None else self.unit_query(query.vector)
        key = (query.tenant_id, query.agent_id)
        with self._db.transaction(write=False) as conn:
            if vector is None and not terms:
                rows = conn.execute(
                    f"SELECT {RECORD_FIELDS} FROM records r WHERE {where} {NEWEST_FIRST} LIMIT ?",
                    (*params, limit),
                ).fetchall()
                return [Candidate(record=row_to_record(row)) for row in rows]
            self._lance.sync(conn, *key)
            similarity: dict[int, float] = {}
            if vector is not None:
                similarity = {
                    seq: c for seq, c, _ in self._lance.nearest(conn, key, where, params, vector, limit)
                }
            found = self._lance.matches(conn, key, where, params, terms, limit, vector) if terms else []
            lexical = scaled_to_best({seq: score for seq, score, _ in found})
            order = fused_order(list(similarity), list(lexical))
            for seq, _, cosine in found:
                if cosine is not None:
                    similarity.setdefault(seq, cosine)
            records = _fetch(conn, order)
        return [
            Candidate(record=records[seq], similarity=similarity.get(seq), lexical=lexical.get(seq))
            for seq in order
            if seq in records
        ]

    def _vector_hits(
        self, conn: sqlite3.Connection, ask: VectorAsk, space: str = ""
    ) -> tuple[list[tuple[int, float]], Span | None]:
        """`nearest` (dedup on write) through LanceDB too, but in a tenant's own space."""
        if space:
            return super()._vector_hits(conn, ask, space)
        key = (ask.tenant_id, ask.agent_id)
        self._lance.sync(conn, *key)
        hits = self._lance.nearest(conn, key, ask.where, ask.params, ask.vector, ask.limit)
        return [(seq, cosine) for seq, cosine, _ in hits], None

    # --- keeping the tables in step -------------------------------------------------------------

    def _sync(self, agents: Iterable[tuple[str, str]]) -> None:
        with self._db.transaction(write=False) as conn:
            for tenant_id, agent_id in dict.fromkeys(agents):
                self._lance.sync(conn, tenant_id, agent_id)

    def _prune(self, tenant_id: str) -> None:
        with self._db.transaction(write=False) as conn:
            self._lance.prune_tenant(conn, tenant_id)

    def put(self, items: Sequence[StoredRecord]) -> None:
        super().put(items)
        self._sync((item.record.tenant_id, item.record.agent_id) for item in items)

    def put_if(
        self, item: StoredRecord, read: MemoryRecord | None, events: Sequence[AuditEvent] = ()
    ) -> bool:
        done = super().put_if(item, read, events)
        if done:
            self._sync([(item.record.tenant_id, item.record.agent_id)])
        return done

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        done = super().soft_delete(tenant_id, agent_id, record_id, event)
        if done:
            self._sync([(tenant_id, agent_id)])
        return done

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        done = super().mark_stale(tenant_id, agent_id, record_id, event)
        if done:
            self._sync([(tenant_id, agent_id)])
        return done

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        deleted = super().delete_records(tenant_id, agent_id, record_ids)
        if deleted:
            self._sync([(tenant_id, agent_id)])
        return deleted

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        deleted = super().purge(tenant_id, now, forgotten_before)
        if deleted:
            self._prune(tenant_id)
        return deleted

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        deleted = super().delete_older_than(tenant_id, grain, cutoff)
        if deleted:
            self._prune(tenant_id)
        return deleted

    @property
    def lance(self) -> LanceCandidates:
        """The LanceDB side (benchmarks and tests read its tables)."""
        return self._lance
