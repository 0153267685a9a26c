"""`ports.KnowledgeStore` on ``memory.db``: a tenant's documents and their passages.

Sibling tables of the memory records (``knowledge_*`` in `sqlite_schema`), not rows among them:
a passage has no agent and no grain, so no query of the memory store (the cascade's scans,
retention's deletes, an agent's listing) can ever see one, and none of them had to learn to
skip it. Search works as the memory store's does: exact cosine with numpy over the tenant's
passage vectors (cached per tenant and generation), FTS5 (porter-stemmed) over the passage text,
its title and heading path, merged by `domain.fusion`'s rule.

A put replaces the document and all its passages in one transaction, so a search sees either
the old version's passages or the new one's, never both and never none; a delete removes them
in one transaction and leaves a tombstone, which the writer reads to drop a put that was
accepted before the delete but reaches the store after it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import decode_cursor, encode_cursor, fts_match, query_terms
from agent_memory.adapters.sqlite.sqlite_rows import from_us, to_us
from agent_memory.adapters.sqlite.sqlite_vectors import top_k
from agent_memory.domain.fusion import fused_order, scaled_to_best
from agent_memory.domain.knowledge import CITATION_SEPARATOR, KnowledgeDocument, Passage
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.ports import DocumentPage, PassageCandidate, PassageQuery, StoredPassage

_PASSAGE_FIELDS = "p.seq, p.body, p.valid_from, p.valid_until, p.tags"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _TenantVectors:
    """One tenant's passage vectors as a matrix, at one generation of its passages."""

    def __init__(self, gen: int, rowids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        self.gen = gen
        self.rowids = rowids
        self.matrix = matrix


class SqliteKnowledge(SqliteStorePart):
    """`ports.KnowledgeStore` over ``memory.db`` (see the module docstring)."""

    _knowledge_cache: dict[str, _TenantVectors]
    _knowledge_lock: threading.Lock

    def _knowledge_vectors(self, conn: sqlite3.Connection, tenant_id: str) -> _TenantVectors:
        """The tenant's passage vectors, read again only when its passages changed."""
        row = conn.execute(
            "SELECT gen FROM knowledge_generations WHERE tenant_id = ?", (tenant_id,)
        ).fetchone()
        gen = row[0] if row else 0
        with self._knowledge_lock:
            cached = self._knowledge_cache.get(tenant_id)
        if cached is not None and cached.gen == gen:
            return cached
        rows = conn.execute(
            "SELECT seq, vector FROM knowledge_passages WHERE tenant_id = ? ORDER BY seq", (tenant_id,)
        ).fetchall()
        dim = self._db.dimension
        matrix = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim).copy()
            if rows
            else np.empty((0, dim), dtype=np.float32)
        )
        fresh = _TenantVectors(gen, np.asarray([r[0] for r in rows], dtype=np.int64), matrix)
        with self._knowledge_lock:
            self._knowledge_cache[tenant_id] = fresh
        return fresh

    def put_document(self, document: KnowledgeDocument, passages: Sequence[StoredPassage]) -> None:
        rows = [
            (
                p.passage.id,
                p.passage.tenant_id,
                p.passage.doc_id,
                p.passage.ordinal,
                p.passage.text,
                p.passage.title,
                CITATION_SEPARATOR.join(p.passage.heading_path),
                _day(p.passage.valid_from),
                _day(p.passage.valid_until),
                _json(p.passage.tags),
                p.passage.model_dump_json(),
                _unit(self._db.check_vector(p.vector)).tobytes(),
            )
            for p in passages
        ]
        body = document.model_dump_json(exclude={"hits", "last_hit_at"})
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "DELETE FROM knowledge_passages WHERE tenant_id = ? AND doc_id = ?",
                (document.tenant_id, document.doc_id),
            )
            conn.executemany(
                "INSERT INTO knowledge_passages (id, tenant_id, doc_id, ordinal, text, title, heading_path, "
                "valid_from, valid_until, tags, body, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(
                "INSERT INTO knowledge_documents (tenant_id, doc_id, body) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant_id, doc_id) DO UPDATE SET body = excluded.body",
                (document.tenant_id, document.doc_id, body),
            )

    def get_document(self, tenant_id: str, doc_id: str) -> KnowledgeDocument | None:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT body, hits, last_hit_at FROM knowledge_documents WHERE tenant_id = ? AND doc_id = ?",
                (tenant_id, doc_id),
            ).fetchone()
        return None if row is None else _document(*row)

    def list_documents(self, tenant_id: str, cursor: str | None = None, limit: int = 50) -> DocumentPage:
        bound = {"tenant": tenant_id, "what": "documents"}
        after = decode_cursor(cursor, bound).get("after") if cursor else ""
        if not isinstance(after, str):
            raise ValidationFailedError("invalid cursor", [{"field": "cursor", "message": "invalid cursor"}])
        limit = max(1, limit)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT body, hits, last_hit_at, doc_id FROM knowledge_documents "
                "WHERE tenant_id = ? AND doc_id > ? ORDER BY doc_id LIMIT ?",
                (tenant_id, after, limit + 1),
            ).fetchall()
        page = [_document(*row[:3], whole=False) for row in rows[:limit]]
        more = len(rows) > limit
        return DocumentPage(
            documents=page,
            next_cursor=encode_cursor({**bound, "after": page[-1].doc_id}) if more and page else None,
        )

    def passages(self, tenant_id: str, doc_id: str) -> list[Passage]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT body FROM knowledge_passages WHERE tenant_id = ? AND doc_id = ? ORDER BY ordinal",
                (tenant_id, doc_id),
            ).fetchall()
        return [Passage.model_validate_json(r[0]) for r in rows]

    def delete_document(self, tenant_id: str, doc_id: str, at: datetime) -> int:
        with self._db.transaction(write=True) as conn:
            removed = conn.execute(
                "DELETE FROM knowledge_passages WHERE tenant_id = ? AND doc_id = ?", (tenant_id, doc_id)
            ).rowcount
            conn.execute(
                "DELETE FROM knowledge_documents WHERE tenant_id = ? AND doc_id = ?", (tenant_id, doc_id)
            )
            conn.execute(
                "INSERT INTO knowledge_tombstones (tenant_id, doc_id, deleted_at) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant_id, doc_id) DO UPDATE "
                "SET deleted_at = max(deleted_at, excluded.deleted_at)",
                (tenant_id, doc_id, to_us(at)),
            )
        return int(removed)

    def deleted_at(self, tenant_id: str, doc_id: str) -> datetime | None:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT deleted_at FROM knowledge_tombstones WHERE tenant_id = ? AND doc_id = ?",
                (tenant_id, doc_id),
            ).fetchone()
        return None if row is None else from_us(row[0])

    def search_passages(self, query: PassageQuery) -> list[PassageCandidate]:
        limit = max(0, query.limit)
        if limit == 0:
            return []
        terms = query_terms(query.text)
        vector = None if query.vector is None else _unit(self._db.check_vector(query.vector))
        with self._db.transaction(write=False) as conn:
            eligible = self._eligible(conn, query)
            if vector is None and not terms:
                return []
            similarity: dict[int, float] = {}
            vector_hits: list[int] = []
            by_rowid: dict[int, int] = {}
            cached = self._knowledge_vectors(conn, query.tenant_id) if vector is not None else None
            if cached is not None and vector is not None and len(cached.rowids):
                mask = np.isin(cached.rowids, np.fromiter(eligible, dtype=np.int64, count=len(eligible)))
                positions = np.flatnonzero(mask)
                scores = np.einsum("ij,j->i", cached.matrix[positions], vector)
                for i in top_k(scores, limit):
                    rowid = int(cached.rowids[positions[i]])
                    vector_hits.append(rowid)
                    similarity[rowid] = float(scores[i])
                by_rowid = {int(r): n for n, r in enumerate(cached.rowids)}
            lexical = scaled_to_best(self._lexical(conn, terms, eligible, limit)) if terms else {}
            order = fused_order(vector_hits, list(lexical))
            if cached is not None and vector is not None:
                for rowid in order:
                    if rowid not in similarity and rowid in by_rowid:
                        similarity[rowid] = float(cached.matrix[by_rowid[rowid]] @ vector)
            marks = ", ".join("?" * len(order))
            rows = conn.execute(f"SELECT seq, body FROM knowledge_passages WHERE seq IN ({marks})", order)
            bodies = dict(rows.fetchall())
        return [
            PassageCandidate(
                passage=Passage.model_validate_json(bodies[rowid]),
                similarity=similarity.get(rowid),
                lexical=lexical.get(rowid),
            )
            for rowid in order
            if rowid in bodies
        ]

    def _eligible(self, conn: sqlite3.Connection, query: PassageQuery) -> set[int]:
        """Rowids of the tenant's passages that hold on ``query.on`` and carry ``query.tags``."""
        where, params = ["tenant_id = ?"], [query.tenant_id]
        if query.on is not None:
            where.append("coalesce(valid_from, '') <= ? AND coalesce(valid_until, '9999-12-31') >= ?")
            params += [query.on.isoformat(), query.on.isoformat()]
        for tag in query.tags:
            where.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
            params.append(tag)
        rows = conn.execute(f"SELECT seq FROM knowledge_passages WHERE {' AND '.join(where)}", params)
        return {r[0] for r in rows}

    def _lexical(
        self, conn: sqlite3.Connection, terms: list[str], eligible: set[int], limit: int
    ) -> dict[int, float]:
        rows = conn.execute(
            "SELECT rowid, bm25(knowledge_fts) AS s FROM knowledge_fts "
            "WHERE knowledge_fts MATCH ? ORDER BY s",
            (fts_match(terms),),
        )
        hits: dict[int, float] = {}
        for rowid, s in rows:
            if rowid in eligible:
                hits[rowid] = s
                if len(hits) >= limit:
                    break
        return hits

    def record_document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        if not doc_ids:
            return
        try:
            with self._db.transaction(write=True) as conn:
                conn.executemany(
                    "UPDATE knowledge_documents "
                    "SET hits = hits + 1, last_hit_at = max(coalesce(last_hit_at, 0), ?) "
                    "WHERE tenant_id = ? AND doc_id = ?",
                    [(to_us(at), tenant_id, d) for d in dict.fromkeys(doc_ids)],
                )
        except DependencyError:  # best effort: a busy store never fails a search for a counter
            return


def _day(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _document(body: str, hits: int, last_hit_at: int | None, *, whole: bool = True) -> KnowledgeDocument:
    document = KnowledgeDocument.model_validate_json(body)
    last = None if last_hit_at is None else from_us(last_hit_at)
    update: dict[str, Any] = {"hits": hits, "last_hit_at": last}
    if not whole:
        update["text"] = ""
    return document.model_copy(update=update)
