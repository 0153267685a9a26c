"""The per-agent vector cache and the numpy arithmetic of vector search (exact cosine).

**Vector search is exact cosine with numpy** over one agent's vectors, kept in an in-process
cache. Triggers bump a per-agent *generation* whenever the agent's live vectors may change
(insert, overwrite, forget, hard delete; see `sqlite_schema`); a search reads that number (one
indexed lookup) and, when it moved, merges in the rows written since (or reloads the agent after a
removal), so a write by another thread or process is never missed and rarely costs a full reload.
Which rows may match (tenant, agent, grain, window, expiry, kinds, tags, user) is decided in SQL,
on an index that covers those columns; numpy only scores those rows (`sqlite_retrieval`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_filters import ELIGIBLE

#: The cache key's second part for a tenant's passages: ``#`` is in no agent id.
PASSAGES = "#knowledge"
#: Vector matrices kept in memory across agents (least recently used dropped first).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
_MERGE_MIN_ROWS = 256  # see _max_merge


def normalise_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length in place (zero rows stay zero), so a dot product is a cosine.
    The norms are summed row by row: no temporary the size of the matrix (a million rows)."""
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def unit_rows(rows: Sequence[Any], dimension: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(rowids, unit-length rows) from ``(seq, vector blob)`` rows."""
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blob = b"".join(r[1] for r in rows)
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dimension).copy()
    return rowids, normalise_rows(matrix)


def sorted_by_rowid(
    rowids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Rowids in ascending order with their rows; as given (no copy) when already in order."""
    if len(rowids) < 2 or bool(np.all(rowids[1:] > rowids[:-1])):
        return rowids, matrix
    order = np.argsort(rowids, kind="stable")
    return rowids[order], matrix[order]


def cosines_at(
    matrix: npt.NDArray[np.float32], positions: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Cosines of the unit rows at ``positions`` to the unit ``query``.

    Few rows: gather them. Many: one product over the whole matrix and pick, which is cheaper
    than copying most of the matrix.
    """
    if len(positions) * 4 < len(matrix):
        return dot(matrix[positions], query)
    return dot(matrix, query)[positions]


def eligible_rowids(
    conn: sqlite3.Connection, where: str, params: Sequence[Any], limit: int | None = None
) -> npt.NDArray[np.int64]:
    """Rowids of the records matching ``where`` (in no particular order), at most ``limit``.

    Returned as one comma-separated string parsed by numpy: for 10,000 rows that is several
    times faster than handing Python 10,000 one-column rows.
    """
    rows = f"SELECT r.seq AS seq FROM {ELIGIBLE} WHERE {where}"
    sql = (
        f"SELECT group_concat(r.seq) FROM {ELIGIBLE} WHERE {where}"
        if limit is None
        else f"SELECT group_concat(seq) FROM ({rows} LIMIT {int(limit)})"
    )
    row = conn.execute(sql, params).fetchone()
    if row is None or not row[0]:
        return np.empty(0, dtype=np.int64)
    return np.fromstring(row[0], dtype=np.int64, sep=",")


@dataclass(frozen=True, slots=True)
class AgentVectors:
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
    ) -> AgentVectors:
        """A copy with ``rowids`` added or, where already present, their rows replaced."""
        keep = np.ones(len(self.rowids), dtype=bool)
        keep[self.positions(rowids)] = False
        all_rowids, all_matrix = sorted_by_rowid(
            np.concatenate([self.rowids[keep], rowids]), np.concatenate([self.matrix[keep], matrix])
        )
        return AgentVectors(gen=gen, shrink=self.shrink, rowids=all_rowids, matrix=all_matrix)

    @property
    def nbytes(self) -> int:
        return int(self.rowids.nbytes + self.matrix.nbytes)

    def scores(
        self, positions: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Cosines of the rows at ``positions`` to the unit ``query`` (`cosines_at`)."""
        return cosines_at(self.matrix, positions, query)

    def positions(self, rowids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Row positions of ``rowids`` in the matrix (rowids not in it are dropped)."""
        if not len(self.rowids) or not len(rowids):
            return np.empty(0, dtype=np.int64)
        pos = np.searchsorted(self.rowids, rowids)
        pos = np.minimum(pos, len(self.rowids) - 1)
        return pos[self.rowids[pos] == rowids]


class VectorCache:
    """Agents' live vectors at their latest generation, shared by every thread of one store.

    Holds at most ``max_bytes`` of matrices (least recently used agents dropped first, the agent
    just read always kept).
    """

    def __init__(self, dimension: int, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.dimension = dimension
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], AgentVectors] = OrderedDict()

    def current(self, conn: sqlite3.Connection, tenant_id: str, agent_id: str) -> AgentVectors:
        """The agent's live vectors, brought up to date only when its generation moved.

        Rows written since the cached generation are merged in (a write between two searches
        costs a small read, not a reload of the agent); a removal, or a change too big to merge,
        reloads everything. Rows forgotten since the cache was built may linger in it until
        then: harmless, since only the rows SQL finds eligible are ever scored.
        Must run inside a read transaction, so the generation and the rows read are one snapshot.
        """
        key = (tenant_id, agent_id)
        gen, shrink = generation(conn, tenant_id, agent_id)
        cached, current = self._lookup(key, gen, shrink)
        if current and cached is not None:
            return cached
        loaded: AgentVectors | None = None
        if cached is not None and cached.shrink == shrink and cached.gen < gen:
            rows = conn.execute(
                "SELECT seq, vector FROM records WHERE tenant_id = ? AND agent_id = ? "
                "AND deleted_at IS NULL AND vgen > ? ORDER BY seq LIMIT ?",
                (tenant_id, agent_id, cached.gen, _max_merge(len(cached.rowids)) + 1),
            ).fetchall()
            if len(rows) <= _max_merge(len(cached.rowids)):
                loaded = cached.merged(gen, *unit_rows(rows, self.dimension))
        if loaded is None:
            rows = conn.execute(
                "SELECT seq, vector FROM records "
                "WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL ORDER BY seq",
                (tenant_id, agent_id),
            ).fetchall()
            loaded = AgentVectors(gen, shrink, *unit_rows(rows, self.dimension))
        return self._keep(key, loaded)

    def in_space(self, conn: sqlite3.Connection, tenant_id: str, agent_id: str, space: str) -> AgentVectors:
        """The agent's live vectors in a tenant's own embedding space (`sqlite_spaces`), reloaded
        whole when the agent's generation moved (few tenants have a space of their own, so the
        row-by-row merge of the deployment's space is not worth its bookkeeping here). Their
        dimension is the model's: the length of the stored rows. Inside a read transaction."""
        key = (tenant_id, f"{agent_id}\x1f{space}")
        gen, shrink = generation(conn, tenant_id, agent_id)
        cached, current = self._lookup(key, gen, shrink)
        if current and cached is not None:
            return cached
        rows = conn.execute(
            "SELECT v.seq, v.vector FROM space_vectors v JOIN records r ON r.seq = v.seq "
            "WHERE v.tenant_id = ? AND v.space = ? AND v.agent_id = ? AND r.deleted_at IS NULL "
            "ORDER BY v.seq",
            (tenant_id, space, agent_id),
        ).fetchall()
        dimension = len(rows[0][1]) // 4 if rows else 1
        return self._keep(key, AgentVectors(gen, shrink, *unit_rows(rows, dimension)))

    def passages(self, conn: sqlite3.Connection, tenant_id: str) -> AgentVectors:
        """The tenant's shared-knowledge passage vectors (`sqlite_knowledge`), in the same memory
        budget as the agents'. Reloaded whole when the tenant's knowledge generation moved: a
        document is replaced whole, so there is nothing small to merge. Inside a read transaction.
        """
        key = (tenant_id, PASSAGES)
        row = conn.execute(
            "SELECT gen FROM knowledge_generations WHERE tenant_id = ?", (tenant_id,)
        ).fetchone()
        gen = 0 if row is None else int(row[0])
        cached, current = self._lookup(key, gen, 0)  # passages have no shrink count: 0
        if current and cached is not None:
            return cached
        rows = conn.execute(
            "SELECT seq, vector FROM knowledge_passages WHERE tenant_id = ? ORDER BY seq", (tenant_id,)
        ).fetchall()
        return self._keep(key, AgentVectors(gen, 0, *unit_rows(rows, self.dimension)))

    def _lookup(self, key: tuple[str, str], gen: int, shrink: int) -> tuple[AgentVectors | None, bool]:
        """The cached entry of ``key`` and whether it is current at (gen, shrink); a current one
        becomes the most recently used."""
        with self._lock:
            cached = self._cache.get(key)
            current = cached is not None and (cached.gen, cached.shrink) == (gen, shrink)
            if current:
                self._cache.move_to_end(key)
        return cached, current

    def _keep(self, key: tuple[str, str], loaded: AgentVectors) -> AgentVectors:
        """Cache ``loaded`` (unless a newer snapshot is there) within the memory budget."""
        with self._lock:
            current = self._cache.get(key)
            if current is None or current.gen <= loaded.gen:  # never replace a newer snapshot
                self._cache[key] = loaded
            self._cache.move_to_end(key)
            total = sum(v.nbytes for v in self._cache.values())
            while total > self._max_bytes and len(self._cache) > 1:
                _, evicted = self._cache.popitem(last=False)
                total -= evicted.nbytes
        return loaded

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def generation(conn: sqlite3.Connection, tenant_id: str, agent_id: str) -> tuple[int, int]:
    """The agent's (gen, shrink): what a cached matrix of it is current against."""
    row = conn.execute(
        "SELECT gen, shrink FROM generations WHERE tenant_id = ? AND agent_id = ?", (tenant_id, agent_id)
    ).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _max_merge(cached_rows: int) -> int:
    """The most changed rows merged into a cached matrix; more and it is rebuilt from scratch."""
    return max(_MERGE_MIN_ROWS, cached_rows // 4)


def dot(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``matrix @ vector`` on the calling thread.

    ``@`` hands a product this size to OpenBLAS's thread pool, which on a small machine shared with
    the HTTP server, the writer and the embedding model stalls behind the other threads (measured
    0.6 ms idle, 5-8 ms under load for 10,000 x 384). einsum runs on the caller's thread only.
    """
    return np.einsum("ij,j->i", matrix, vector)


def top_k(scores: npt.NDArray[np.float32], k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first."""
    if len(scores) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in part[np.argsort(-scores[part], kind="stable")]]
    return [int(i) for i in np.argsort(-scores, kind="stable")]
