"""Nearest neighbours for large agents: an int8 sketch of every vector, scanned, then rescored.

Why: exact cosine over an agent's float32 vectors (`sqlite_vectors`) costs time in proportion to
its size (~10 ms per 100,000 vectors on one core, 35 ms at a million), and the first search after
a start loads every vector out of SQLite (~1.2 s at 100,000). An agent with at least
``ann_min_vectors`` live vectors is searched through a *snapshot* instead:

* **The snapshot** (`Snapshot`), written to ``<data_dir>/ann/`` and memory-mapped by every process
  that searches: the agent's vectors as a float32 matrix in rowid order and the same vectors
  quantised to int8 (one scale for the whole matrix: its largest absolute value maps to 127), a
  quarter of the bytes. A query scans the int8 sketch with usearch's SIMD inner product (exact
  search over the sketch, one thread: ~4 ms per 200,000 vectors here, ~19 ms at a million) and
  the best candidates are rescored exactly. It is the agent's live vectors as of one
  *generation* (`sqlite_schema`: the counter every write to the agent moves). Its metadata file
  is replaced last and atomically, so a reader sees an old snapshot or the new one, never half.
* **The delta**: rows written since the snapshot's generation (``vgen`` above it), kept in memory
  and scored exactly. When it outgrows a fifth of the snapshot (or `DELTA_MIN_ROWS`), or rows
  were removed, a background thread writes a new snapshot: the old matrix without the rows
  removed or rewritten since, plus the delta, quantised again. One process builds at a time (a
  lock file); the others pick the new snapshot up on their next search (its metadata moved).
* **Filters stay exact.** Which rows may match is SQL's decision, as on the exact path. When few
  rows may match (at most `EXACT_ELIGIBLE_MAX`: a window, a kind, one grain of a big agent), they
  are scored exactly from the mapped matrix. Otherwise the sketch proposes candidates and SQL
  keeps the eligible ones; too few, and the sketch is asked for more (up to `MAX_CANDIDATES`),
  then the whole eligible set is scored. Either way the winners are scored again from their
  stored float32 vectors, so every similarity a search returns is the exact cosine.

Why a scan and not a graph: an HNSW graph (usearch, float16, degree 32) was this module's first
index. On 2 cores it needed a search breadth of 2048 for recall 0.995 at 100,000 vectors (~7 ms)
and reached 0.89 at a million, after a 15-minute build; the int8 scan finds the exact top 10 among
its first 40 candidates (recall 1.0 at 200,000 hashing vectors, the hard case), costs ~2 ms at
100,000, and builds in seconds. Past a few million vectors per agent a graph would win again.

A row removed since the snapshot lingers in the files until the next build and is never returned
(SQL does not find it eligible); removals request that build at once. A snapshot made for another
store file, another model or another format is ignored and rebuilt. usearch is an optional
dependency (the ``local`` extra): without it every agent is searched exactly.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_database import SqliteDatabase
from agent_memory.adapters.sqlite.sqlite_filters import CHUNK
from agent_memory.adapters.sqlite.sqlite_vectors import (
    AgentVectors,
    cosines_at,
    dot,
    eligible_rowids,
    normalise_rows,
    sorted_by_rowid,
    top_k,
    unit_rows,
)
from agent_memory.observability import logger

#: Bump when the files' layout or meaning changes: older snapshots are then rebuilt.
FORMAT = 3
#: At most this many eligible rows are scored exactly from the mapped matrix.
EXACT_ELIGIBLE_MAX = 20_000
#: The sketch is first asked for this many candidates (or 4 per wanted result), then 8 times more
#: while too few are eligible, up to `MAX_CANDIDATES`.
MIN_CANDIDATES = 64
MAX_CANDIDATES = 8_192
#: The delta is folded into the snapshot once it holds this many rows and a fifth of the snapshot.
DELTA_MIN_ROWS = 5_000
#: Rows quantised at a time while writing the sketch (bounds the float temporaries).
QUANTISE_ROWS = 65_536
#: Seconds after a failed build before the agent's snapshot is built again.
REBUILD_RETRY_S = 30.0

Hits = list[tuple[int, float]]


@dataclass(frozen=True, slots=True)
class VectorAsk:
    """One agent's nearest-neighbour question inside a read: the rows that may answer (``where``
    and ``params``, a live filter), the unit query vector, and how many (``limit``)."""

    tenant_id: str
    agent_id: str
    where: str
    params: Sequence[Any]
    vector: npt.NDArray[np.float32]
    limit: int


def usearch_available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Snapshot:
    """One agent's live vectors at generation ``gen``: matrix, int8 sketch and rowids, mapped
    read-only."""

    gen: int
    shrink: int
    stem: str
    rowids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    sketch: npt.NDArray[np.int8]
    identity: tuple[int, int]  # the metadata file's (inode, mtime), to notice a newer snapshot

    def positions(self, rowids: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(positions in the matrix, the rowids found there) for ``rowids``."""
        if not len(self.rowids) or not len(rowids):
            empty = np.empty(0, dtype=np.int64)
            return empty, empty
        pos = np.minimum(np.searchsorted(self.rowids, rowids), len(self.rowids) - 1)
        found = self.rowids[pos] == rowids
        return pos[found], rowids[found]


@dataclass(frozen=True)
class _Delta:
    base_gen: int
    vectors: AgentVectors


class AnnIndexes:
    """The approximate indexes of one store's large agents (see the module docstring)."""

    def __init__(self, db: SqliteDatabase, directory: Path, *, min_vectors: int, store_id: str) -> None:
        self._db = db
        self._dir = directory
        self.min_vectors = min_vectors
        self.exact_max = EXACT_ELIGIBLE_MAX
        self._store_id = store_id
        self._lock = threading.Lock()
        self._snapshots: dict[tuple[str, str], Snapshot] = {}
        self._deltas: dict[tuple[str, str], _Delta] = {}
        self._queued: set[tuple[str, str]] = set()
        self._failed: dict[tuple[str, str], float] = {}
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ann-build")

    # --- searching -----------------------------------------------------------------------------

    def top(self, conn: sqlite3.Connection, ask: VectorAsk) -> Hits | None:
        """The ``limit`` eligible rows nearest the query with their exact cosines, best first; None
        when the agent has no snapshot (search it exactly). Inside a read transaction."""
        key = (ask.tenant_id, ask.agent_id)
        snapshot = self.snapshot(*key)
        if snapshot is None:
            return None
        delta = self._delta(conn, key, snapshot)
        if delta.shrink != snapshot.shrink or len(delta.rowids) >= max(
            DELTA_MIN_ROWS, len(snapshot.rowids) // 5
        ):
            self.request_build(*key)  # rows removed (erase them from the files) or many new
        eligible = eligible_rowids(conn, ask.where, ask.params, self.exact_max + 1)
        if len(eligible) <= self.exact_max:
            return self._exact(conn, snapshot, delta, eligible, ask.vector, ask.limit)
        wanted = max(MIN_CANDIDATES, 4 * ask.limit)
        while True:
            candidates = self._candidates(snapshot, delta, ask.vector, wanted)
            scored = _scored(conn, candidates, ask.where, ask.params, ask.vector)
            if len(scored) >= ask.limit or wanted >= len(snapshot.rowids) + len(delta.rowids):
                return _best(scored, ask.limit)
            if wanted >= MAX_CANDIDATES:  # the eligible rows are far from the query: score them all
                everything = eligible_rowids(conn, ask.where, ask.params)
                return self._exact(conn, snapshot, delta, everything, ask.vector, ask.limit)
            wanted = min(wanted * 8, MAX_CANDIDATES)

    def _candidates(
        self, snapshot: Snapshot, delta: AgentVectors, query: npt.NDArray[np.float32], wanted: int
    ) -> npt.NDArray[np.int64]:
        keys = np.empty(0, dtype=np.int64)
        if len(snapshot.rowids):
            from usearch.index import MetricKind, search

            matches = search(
                snapshot.sketch,
                quantised(query[None, :])[0],
                min(wanted, len(snapshot.rowids)),
                MetricKind.IP,
                exact=True,
                threads=1,  # one request, one core: the other serves another request
            )
            positions = np.asarray(matches.keys, dtype=np.int64).ravel()
            keys = snapshot.rowids[positions[positions >= 0]]
        if len(delta.rowids):
            scores = delta.scores(np.arange(len(delta.rowids), dtype=np.int64), query)
            keys = np.concatenate([keys, delta.rowids[top_k(scores, wanted)]])
        return np.unique(keys)

    def _exact(
        self,
        conn: sqlite3.Connection,
        snapshot: Snapshot,
        delta: AgentVectors,
        eligible: npt.NDArray[np.int64],
        query: npt.NDArray[np.float32],
        limit: int,
    ) -> Hits:
        """Score ``eligible`` from the mapped matrix (the delta's vector where a row has one), then
        the best again from their stored vectors."""
        in_delta = delta.positions(eligible)
        from_delta = delta.rowids[in_delta]
        rest = np.setdiff1d(eligible, from_delta, assume_unique=True)
        positions, from_snapshot = snapshot.positions(rest)
        rowids = np.concatenate([from_delta, from_snapshot])
        scores = np.concatenate(
            [delta.scores(in_delta, query), cosines_at(snapshot.matrix, positions, query)]
        ).astype(np.float32)
        best = rowids[top_k(scores, 2 * limit)]
        return _best(_scored(conn, best, None, (), query), limit)

    def cosines(
        self, conn: sqlite3.Connection, rowids: Sequence[int], query: npt.NDArray[np.float32]
    ) -> dict[int, float]:
        """Exact cosines of ``rowids`` from their stored vectors."""
        return dict(_scored(conn, np.asarray(rowids, dtype=np.int64), None, (), query))

    # --- the snapshot and the delta ------------------------------------------------------------

    def snapshot(self, tenant_id: str, agent_id: str) -> Snapshot | None:
        """The agent's newest snapshot on disk (mapped once per version), or None."""
        key = (tenant_id, agent_id)
        meta_path = self._meta_path(key)
        try:
            stat = meta_path.stat()
        except FileNotFoundError:
            return None
        identity = (stat.st_ino, stat.st_mtime_ns)
        with self._lock:
            cached = self._snapshots.get(key)
        if cached is not None and cached.identity == identity:
            return cached
        loaded = self._load(key, meta_path, identity)
        with self._lock:
            if loaded is None:
                self._snapshots.pop(key, None)
            else:
                self._snapshots[key] = loaded
        return loaded

    def _load(self, key: tuple[str, str], meta_path: Path, identity: tuple[int, int]) -> Snapshot | None:
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("format") != FORMAT or meta.get("store_id") != self._store_id:
                self.request_build(*key)  # another store's or another version's: make ours
                return None
            stem = str(meta["stem"])
            sketch = np.load(self._dir / f"{stem}.i8.npy", mmap_mode="r")
            rowids = np.load(self._dir / f"{stem}.rowids.npy", mmap_mode="r")
            matrix = np.load(self._dir / f"{stem}.f32.npy", mmap_mode="r")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("vector index unreadable; searching exactly", extra={"error": str(exc)})
            self.request_build(*key)
            return None
        if sketch.shape != matrix.shape or len(rowids) != len(matrix):
            logger.warning("vector index files disagree; searching exactly")
            self.request_build(*key)
            return None
        return Snapshot(int(meta["gen"]), int(meta["shrink"]), meta["stem"], rowids, matrix, sketch, identity)

    def _delta(self, conn: sqlite3.Connection, key: tuple[str, str], snapshot: Snapshot) -> AgentVectors:
        """Rows of the agent written since the snapshot (``vgen`` above its generation), exact."""
        row = conn.execute(
            "SELECT gen, shrink FROM generations WHERE tenant_id = ? AND agent_id = ?", key
        ).fetchone()
        gen, shrink = (0, 0) if row is None else (int(row[0]), int(row[1]))
        with self._lock:
            cached = self._deltas.get(key)
        if cached is not None and cached.base_gen == snapshot.gen and cached.vectors.gen == gen:
            return cached.vectors
        since = cached.vectors.gen if cached is not None and cached.base_gen == snapshot.gen else snapshot.gen
        rowids, matrix = _streamed_unit_rows(conn, key, since, self._db.dimension)
        if cached is not None and cached.base_gen == snapshot.gen:
            merged = cached.vectors.merged(gen, rowids, matrix)
            vectors = AgentVectors(gen, shrink, merged.rowids, merged.matrix)
        else:
            vectors = AgentVectors(gen, shrink, rowids, matrix)
        with self._lock:
            self._deltas[key] = _Delta(snapshot.gen, vectors)
        return vectors

    # --- building ------------------------------------------------------------------------------

    def request_build(self, tenant_id: str, agent_id: str) -> None:
        """Build or fold the agent's snapshot in the background. Requests made while one is
        queued are the same request; one made while a build runs queues the next (which does
        nothing if the snapshot is then current enough). Not within `REBUILD_RETRY_S` of a
        failed build."""
        key = (tenant_id, agent_id)
        with self._lock:
            if (
                key in self._queued
                or time.monotonic() - self._failed.get(key, -REBUILD_RETRY_S) < REBUILD_RETRY_S
            ):
                return
            self._queued.add(key)
        self._builder.submit(self._build_queued, key)

    def removed(self, tenant_id: str, agent_id: str | None = None) -> None:
        """Rows of the agent (None: of any agent of the tenant) were removed: fold them out of
        its snapshot now, so that what was forgotten leaves the disk without waiting for a search."""
        if agent_id is not None:
            if self._meta_path((tenant_id, agent_id)).exists():
                self.request_build(tenant_id, agent_id)
            return
        for meta_path in self._dir.glob("*.json") if self._dir.is_dir() else ():
            with contextlib.suppress(OSError, ValueError, KeyError):
                meta = json.loads(meta_path.read_text())
                if meta["tenant_id"] == tenant_id:
                    self.request_build(tenant_id, str(meta["agent_id"]))

    def _build_queued(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._queued.discard(key)  # a request from here on queues another build
        try:
            self.build(*key, only_if_needed=True)
        except Exception:  # a failed build leaves the exact path or the old snapshot serving
            logger.exception("vector index build failed")
            with self._lock:
                self._failed[key] = time.monotonic()

    def build(
        self,
        tenant_id: str,
        agent_id: str,
        *,
        wait: bool = False,
        only_if_needed: bool = False,
    ) -> bool:
        """Make the agent's snapshot current now: the previous one's matrix without the rows
        changed or removed since, plus the changed rows read from SQLite (or every row, without a
        previous one), quantised and saved. False when another builder holds the agent's lock
        (``wait``: wait for it, then build). ``only_if_needed``: not when no row was removed and
        the delta is still small (a request that queued behind the build that answered it)."""
        key = (tenant_id, agent_id)
        self._dir.mkdir(parents=True, exist_ok=True)
        with _exclusive(self._dir / f"{_stem(key)}.lock", wait=wait) as locked:
            if not locked:
                return False
            previous = self.snapshot(tenant_id, agent_id)
            base_gen = 0 if previous is None else previous.gen
            with self._db.transaction(write=False) as conn:
                gen_row = conn.execute(
                    "SELECT gen, shrink FROM generations WHERE tenant_id = ? AND agent_id = ?", key
                ).fetchone()
                gen, shrink = (0, 0) if gen_row is None else (int(gen_row[0]), int(gen_row[1]))
                if only_if_needed and previous is not None and previous.shrink == shrink:
                    (pending,) = conn.execute(
                        "SELECT count(*) FROM records WHERE tenant_id = ? AND agent_id = ? "
                        "AND deleted_at IS NULL AND vgen > ?",
                        (*key, base_gen),
                    ).fetchone()
                    if pending < max(DELTA_MIN_ROWS, len(previous.rowids) // 5):
                        return True
                live = eligible_rowids(conn, _AGENT_LIVE, key)
                changed, changed_matrix = _streamed_unit_rows(conn, key, base_gen, self._db.dimension)
                kept = np.setdiff1d(live, changed, assume_unique=True)
                positions, in_previous = (
                    (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
                    if previous is None
                    else previous.positions(kept)
                )
                missing = np.setdiff1d(kept, in_previous, assume_unique=True)
                if len(missing):  # never expected; read rather than lose them
                    extra, extra_matrix = unit_rows(_vector_rows(conn, missing), self._db.dimension)
                    changed, changed_matrix = sorted_by_rowid(
                        np.concatenate([changed, extra]), np.concatenate([changed_matrix, extra_matrix])
                    )
            old = (
                np.empty((0, self._db.dimension), dtype=np.float32)
                if previous is None
                else np.asarray(previous.matrix[positions])
            )
            rowids, matrix = (
                (changed, changed_matrix)
                if not len(in_previous)
                else sorted_by_rowid(
                    np.concatenate([in_previous, changed]), np.concatenate([old, changed_matrix])
                )
            )
            self._save(key, gen, shrink, rowids, matrix)
        return True

    def _save(
        self,
        key: tuple[str, str],
        gen: int,
        shrink: int,
        rowids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        """Write the files of generation ``gen``, then the metadata naming them (atomically), then
        remove the files of older generations (mapped copies stay readable until unmapped)."""
        stem = f"{_stem(key)}-{gen}"
        for suffix, write in (
            (".rowids.npy", lambda p: _save_array(p, rowids)),
            (".f32.npy", lambda p: _save_array(p, matrix)),
            (".i8.npy", lambda p: _save_sketch(p, matrix)),
        ):
            temporary = self._dir / f"{stem}{suffix}.tmp"
            write(temporary)
            temporary.replace(self._dir / f"{stem}{suffix}")
        meta = {
            "format": FORMAT,
            "store_id": self._store_id,
            "tenant_id": key[0],
            "agent_id": key[1],
            "gen": gen,
            "shrink": shrink,
            "rows": len(rowids),
            "stem": stem,
        }
        temporary = self._meta_path(key).with_suffix(".json.tmp")
        temporary.write_text(json.dumps(meta))
        temporary.replace(self._meta_path(key))
        for old in self._dir.glob(f"{_stem(key)}-*"):
            if not old.name.startswith(f"{stem}."):
                with contextlib.suppress(OSError):
                    old.unlink()

    def _meta_path(self, key: tuple[str, str]) -> Path:
        return self._dir / f"{_stem(key)}.json"

    def close(self) -> None:
        self._builder.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._snapshots.clear()
            self._deltas.clear()


_AGENT_LIVE = "r.tenant_id = ? AND r.agent_id = ? AND r.deleted_at IS NULL"


def _vector_rows(
    conn: sqlite3.Connection,
    rowids: npt.NDArray[np.int64],
    where: str | None = None,
    params: Sequence[Any] = (),
) -> list[Any]:
    """``(seq, vector)`` of those of ``rowids`` that match ``where`` (None: all), in chunks."""
    rows: list[Any] = []
    ids = [int(r) for r in rowids]
    condition = f" AND ({where})" if where else ""
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows += conn.execute(
            # NOT INDEXED: look the rows up by rowid; left to itself the planner may walk the
            # agent's whole index for the tenant and agent columns of ``where``.
            f"SELECT r.seq, r.vector FROM records r NOT INDEXED WHERE r.seq IN ({marks}){condition} "
            "ORDER BY r.seq",
            (*chunk, *params),
        ).fetchall()
    return rows


def _stem(key: tuple[str, str]) -> str:
    """A file name for an agent: ids may hold characters a file name must not."""
    return hashlib.sha256(f"{key[0]}\0{key[1]}".encode()).hexdigest()[:32]


def _save_array(path: Path, array: npt.NDArray[Any]) -> None:
    with path.open("wb") as f:
        np.save(f, array)


def quantised(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """``rows`` as int8, one scale for all of them (the largest absolute value becomes 127):
    inner products keep their order up to rounding, which the exact rescoring settles."""
    peak = float(np.abs(rows).max()) if rows.size else 0.0
    return _scaled(rows, 127.0 / peak if peak > 0 else 1.0)


def _scaled(rows: npt.NDArray[np.float32], scale: float) -> npt.NDArray[np.int8]:
    return np.clip(np.rint(rows * scale), -127, 127).astype(np.int8)


def _save_sketch(path: Path, matrix: npt.NDArray[np.float32]) -> None:
    """The int8 sketch of ``matrix``, written in slices (a million rows would need gigabytes of
    float temporaries at once)."""
    peak = 0.0
    for start in range(0, len(matrix), QUANTISE_ROWS):
        peak = max(peak, float(np.abs(matrix[start : start + QUANTISE_ROWS]).max()))
    scale = 127.0 / peak if peak > 0 else 1.0
    sketch = np.lib.format.open_memmap(path, mode="w+", dtype=np.int8, shape=matrix.shape)
    for start in range(0, len(matrix), QUANTISE_ROWS):
        sketch[start : start + QUANTISE_ROWS] = _scaled(matrix[start : start + QUANTISE_ROWS], scale)
    sketch.flush()
    del sketch


@contextlib.contextmanager
def _exclusive(path: Path, *, wait: bool) -> Iterator[bool]:
    """An exclusive lock on ``path`` if it can be had now or, with ``wait``, once it can (True),
    else False: one builder at a time, across threads and processes."""
    with path.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _streamed_unit_rows(
    conn: sqlite3.Connection, key: tuple[str, str], since_gen: int, dimension: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The agent's live rows of ``vgen`` above ``since_gen``, read into one preallocated matrix
    (a first build reads the whole agent: listing a million rows first would hold their blobs
    two and three times over)."""
    where = "FROM records WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL AND vgen > ?"
    (count,) = conn.execute(f"SELECT count(*) {where}", (*key, since_gen)).fetchone()
    rowids = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, dimension), dtype=np.float32)
    cursor = conn.execute(f"SELECT seq, vector {where} ORDER BY seq", (*key, since_gen))
    filled = 0
    while filled < count and (rows := cursor.fetchmany(4096)):
        rows = rows[: count - filled]
        rowids[filled : filled + len(rows)] = [r[0] for r in rows]
        matrix[filled : filled + len(rows)] = np.frombuffer(
            b"".join(r[1] for r in rows), dtype=np.float32
        ).reshape(len(rows), dimension)
        filled += len(rows)
    return rowids[:filled], normalise_rows(matrix[:filled])


def _scored(
    conn: sqlite3.Connection,
    rowids: npt.NDArray[np.int64],
    where: str | None,
    params: Sequence[Any],
    query: npt.NDArray[np.float32],
) -> Hits:
    """Exact cosines of those of ``rowids`` that match ``where`` (None: all), from their stored
    vectors."""
    found, matrix = unit_rows(_vector_rows(conn, rowids, where, params), len(query))
    return list(zip((int(r) for r in found), (float(c) for c in dot(matrix, query)), strict=True))


def _best(hits: Hits, limit: int) -> Hits:
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:limit]
