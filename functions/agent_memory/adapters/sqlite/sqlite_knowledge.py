"""`ports.KnowledgeStore` on ``memory.db``: a tenant's documents and their passages.

Sibling tables of the memory records (``knowledge_*`` in `sqlite_schema`), not rows among them:
a passage has no agent and no grain, so no query of the memory store (the cascade's scans,
retention's deletes, an agent's listing) can ever see one, and none of them had to learn to
skip it. Search works as the memory store's does: exact cosine with numpy over the tenant's
passage vectors (in the store's vector cache, per tenant and generation: `VectorCache.passages`),
FTS5 (porter-stemmed) over the passage text, its title and heading path, both on the rows one SQL
filter allows, merged by the fusion rule (`recall.rules.ranking`).

A put replaces the document and all its passages in one transaction, so a search sees either
the old version's passages or the new one's, never both and never none; a delete removes them
in one transaction and leaves a tombstone, which the writer reads to drop a put that was
accepted before the delete but reaches the store after it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import decode_cursor, encode_cursor, fts_match, query_terms
from agent_memory.adapters.sqlite.sqlite_rows import from_us, json_text, to_us
from agent_memory.adapters.sqlite.sqlite_vectors import VectorCache, top_k
from agent_memory.errors import ValidationFailedError
from agent_memory.knowledge.rules.passages import CITATION_SEPARATOR, KnowledgeDocument, Passage
from agent_memory.ports import DocumentPage, PassageCandidate, PassageQuery, StoredPassage
from agent_memory.recall.rules.fusion import fused_order, lacking_cosine, scaled_to_best

_PASSAGE_FIELDS = "p.seq, p.body, p.valid_from, p.valid_until, p.tags"


logger = logging.getLogger(__name__)


class SqliteKnowledge(SqliteStorePart):
    """`ports.KnowledgeStore` over ``memory.db`` (see the module docstring)."""

    _vectors: VectorCache

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
                json_text(p.passage.tags),
                p.passage.model_dump_json(),
                self._db.check_vector(p.vector).tobytes(),
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
        self._activity.flush()  # read the hits this process counted
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
        self._activity.flush()  # read the hits this process counted
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
        """As `SqliteRetrieval.search` does for records: which passages may match is one SQL
        filter (`_passage_filter`), vectors are scored from the shared cache, words are matched by
        FTS5 on those rows only, and the two lists are merged by the fusion rule (`recall.rules.ranking`)."""
        limit = max(0, query.limit)
        terms = query_terms(query.text)
        if limit == 0 or (query.vector is None and not terms):
            return []
        vector = None if query.vector is None else self.unit_query(query.vector)
        where, params = _passage_filter(query)
        with self._db.transaction(write=False) as conn:
            vector_hits: list[int] = []
            similarity: dict[int, float] = {}
            vectors = self._vectors.passages(conn, query.tenant_id) if vector is not None else None
            if vectors is not None and vector is not None:
                positions = vectors.positions(_eligible(conn, where, params))
                scores = vectors.scores(positions, vector)
                for i in top_k(scores, limit):
                    rowid = int(vectors.rowids[positions[i]])
                    vector_hits.append(rowid)
                    similarity[rowid] = float(scores[i])
            lexical = scaled_to_best(_lexical_hits(conn, terms, where, params, limit)) if terms else {}
            order = fused_order(vector_hits, list(lexical))
            lexical_only = lacking_cosine(order, similarity)
            if vectors is not None and vector is not None and lexical_only:
                positions = vectors.positions(np.asarray(lexical_only, dtype=np.int64))
                scores = vectors.scores(positions, vector)
                similarity.update(zip(map(int, vectors.rowids[positions]), map(float, scores), strict=True))
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

    def record_document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        """Best effort, written behind (`sqlite_activity`): a search does not write the file."""
        self._activity.document_hits(tenant_id, doc_ids, at)


def _day(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _passage_filter(query: PassageQuery) -> tuple[str, list[Any]]:
    """The SQL condition on ``knowledge_passages p`` of the passages a search may find: the
    tenant's, of documents valid on ``query.on`` and carrying every tag of ``query.tags``."""
    where, params = ["p.tenant_id = ?"], [query.tenant_id]
    if query.on is not None:
        where.append("coalesce(p.valid_from, '') <= ? AND coalesce(p.valid_until, '9999-12-31') >= ?")
        params += [query.on.isoformat(), query.on.isoformat()]
    for tag in query.tags:
        where.append("EXISTS (SELECT 1 FROM json_each(p.tags) WHERE value = ?)")
        params.append(tag)
    return " AND ".join(where), params


def _eligible(conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> npt.NDArray[np.int64]:
    """Rowids of the passages matching ``where``, parsed by numpy (as `sqlite_retrieval._rowids`)."""
    row = conn.execute(
        f"SELECT group_concat(p.seq) FROM knowledge_passages p WHERE {where}", params
    ).fetchone()
    if row is None or not row[0]:
        return np.empty(0, dtype=np.int64)
    return np.fromstring(row[0], dtype=np.int64, sep=",")


def _lexical_hits(
    conn: sqlite3.Connection, terms: list[str], where: str, params: Sequence[Any], limit: int
) -> dict[int, float]:
    """Up to ``limit`` eligible passages matching any term, best first, with ``bm25()`` (lower is
    better). The match runs once, first (MATERIALIZED), and is joined to the eligible rows in
    SQL, so other tenants' matches are never read into Python."""
    rows = conn.execute(
        "WITH hits AS MATERIALIZED (SELECT rowid, bm25(knowledge_fts) AS s FROM knowledge_fts "
        "WHERE knowledge_fts MATCH ?) "
        f"SELECT p.seq, hits.s FROM hits JOIN knowledge_passages p ON p.seq = hits.rowid WHERE {where} "
        "ORDER BY hits.s LIMIT ?",
        (fts_match(terms), *params, limit),
    ).fetchall()
    return dict(rows)


def _document(body: str, hits: int, last_hit_at: int | None, *, whole: bool = True) -> KnowledgeDocument:
    document = KnowledgeDocument.model_validate_json(body)
    last = None if last_hit_at is None else from_us(last_hit_at)
    update: dict[str, Any] = {"hits": hits, "last_hit_at": last}
    if not whole:
        update["text"] = ""
    return document.model_copy(update=update)
