"""`ports.Retrieval` on the memory store: records found by meaning (vectors) and by words (FTS5).

Both searches see the same rows: which records may match is one SQL filter (`sqlite_filters`),
on the covering index. Vectors are scored exactly with numpy from the per-agent cache
(`sqlite_vectors`); words are matched by FTS5. How the two lists are merged and scored is the
fusion rule's (`recall.rules.ranking`), the same on every store.

**Lexical search is FTS5 over ``content`` and ``topic``** (plus ``speaker`` and ``context``; an
external-content table kept in sync by triggers in the same transaction as every write;
forgotten records leave the index). On a big store, words in more than a quarter of all
documents are left out (`_informative_terms`). BM25 is lower-is-better and unbounded, so a hit's
lexical score is ``bm25 / best bm25`` of its result set: the best lexical hit scores 1.0, the
others their fraction of it. The score is relative to one query, not comparable across queries.
The index holds every agent's records: when the vector search has read the eligible rows, the
match is kept to the span of their rowids (`_lexical_hits`), with the same scores.

**A row read again is not parsed again** (`parsed`): a record is a pure function of its row, and
validating one costs about 0.2 ms; a writer's searches for one agent read its recent memories
over and over (about thirty records a write), so the records of rows seen recently are kept by
the whole row. A row that changed is another key, so nothing stale is ever returned.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.sqlite.sqlite_ann import AnnIndexes, VectorAsk
from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import (
    CHUNK,
    fts_match,
    live_filter,
    neighbourhood_filter,
    query_filter,
    query_terms,
)
from agent_memory.adapters.sqlite.sqlite_rows import (
    NEWEST_FIRST,
    RECORD_COLUMNS,
    RECORD_FIELDS,
    row_to_record,
)
from agent_memory.adapters.sqlite.sqlite_vectors import VectorCache, eligible_rowids, top_k
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import Candidate, NearestQuery, StoreQuery
from agent_memory.recall.rules.fusion import fused_order, lacking_cosine, scaled_to_best

#: Words in more than this share of the documents are left out of a lexical query ...
COMMON_TERM_SHARE = 0.25
#: ... once the store holds this many documents (see `_informative_terms`).
COMMON_TERM_MIN_DOCS = 1000
#: On a store of this many documents, a lexical query reads at most about this many postings.
LARGE_STORE_DOCS = 50_000
MAX_POSTINGS = 5_000
#: Rows whose records are kept (`parsed`), and the most characters a kept row may hold: a few MB
#: of conversation turns; a long document is parsed each time rather than kept.
PARSED_ROWS = 2048
PARSED_ROW_CHARS = 4096
#: The first and last rowid of a set of rows, and the span of none.
Span = tuple[int, int]
EMPTY_SPAN: Span = (1, 0)
MAX_ROWID = 2**63 - 1
#: The columns that may be long (the others are ids, times and numbers).
_LONG_COLUMNS = tuple(RECORD_COLUMNS.index(c) for c in ("content", "context", "metadata", "merged_from"))


class SqliteRetrieval(SqliteStorePart):
    """`ports.Retrieval` over ``memory.db`` and the store's vector cache (see the module docstring)."""

    _vectors: VectorCache
    _ann: AnnIndexes | None

    def nearest(self, query: NearestQuery) -> tuple[MemoryRecord, float] | None:
        """The live record of the query's grain (within its neighbourhood) with the highest cosine
        to its vector, and that cosine."""
        query_vector = self.unit_query(query.vector, query.space)
        where, params = live_filter(query.tenant_id, query.agent_id, query.now, (query.grain,))
        if query.within is not None:
            where, params = neighbourhood_filter(where, params, query.within)
        with self._db.transaction(write=False) as conn:
            ask = VectorAsk(query.tenant_id, query.agent_id, where, params, query_vector, 1)
            hits, _ = self._vector_hits(conn, ask, query.space)
            if not hits:
                return None
            rowid, score = hits[0]
            records = _fetch(conn, [rowid])
        return records[rowid], score

    def _vector_hits(
        self, conn: sqlite3.Connection, ask: VectorAsk, space: str = ""
    ) -> tuple[list[tuple[int, float]], Span | None]:
        """The ``limit`` eligible rows nearest the query with their cosines, best first: through
        the agent's approximate index when it has one (`sqlite_ann`), else exactly from the
        vector cache (asking for an index once the agent is big enough). A tenant's own space
        is searched exactly. With them, the span of rowids every eligible row lies in when they
        were all read here (None when the approximate index read them), for `_lexical_hits`."""
        tenant_id, agent_id = ask.tenant_id, ask.agent_id
        if space:
            vectors = self._vectors.in_space(conn, tenant_id, agent_id, space)
        else:
            if self._ann is not None:
                hits = self._ann.top(conn, ask)
                if hits is not None:
                    return hits, None
            vectors = self._vectors.current(conn, tenant_id, agent_id)
            if self._ann is not None and len(vectors.rowids) >= self._ann.min_vectors:
                self._ann.request_build(tenant_id, agent_id)
        eligible = eligible_rowids(conn, ask.where, ask.params)
        positions = vectors.positions(eligible)
        scores = vectors.scores(positions, ask.vector)
        hits = [(int(vectors.rowids[positions[i]]), float(scores[i])) for i in top_k(scores, ask.limit)]
        return hits, (int(eligible.min()), int(eligible.max())) if len(eligible) else EMPTY_SPAN

    def _cosines(
        self,
        conn: sqlite3.Connection,
        tenant_id: str,
        agent_id: str,
        rowids: Sequence[int],
        query_vector: npt.NDArray[np.float32],
        space: str = "",
    ) -> dict[int, float]:
        """Cosines of ``rowids`` to the query (lexical hits the vector search did not bring)."""
        if space:
            vectors = self._vectors.in_space(conn, tenant_id, agent_id, space)
        elif self._ann is not None and self._ann.snapshot(tenant_id, agent_id) is not None:
            return self._ann.cosines(conn, rowids, query_vector)
        else:
            vectors = self._vectors.current(conn, tenant_id, agent_id)
        positions = vectors.positions(np.asarray(rowids, dtype=np.int64))
        return {
            int(rowid): float(score)
            for rowid, score in zip(
                vectors.rowids[positions], vectors.scores(positions, query_vector), strict=True
            )
        }

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by record id.

        Vector hits come first in vector-rank order, then lexical-only hits in lexical-rank order
        (the service re-ranks). With a query vector every candidate carries its cosine. Without a
        vector and without a searchable word in ``text``, the newest live records in the window.
        """
        limit = max(0, query.limit)
        if limit == 0:
            return []
        where, params = query_filter(query)
        terms = query_terms(query.text)
        query_vector = None if query.vector is None else self.unit_query(query.vector, query.space)
        with self._db.transaction(write=False) as conn:
            if query_vector is None and not terms:
                rows = conn.execute(
                    f"SELECT {RECORD_FIELDS} FROM records r WHERE {where} {NEWEST_FIRST} LIMIT ?",
                    (*params, limit),
                ).fetchall()
                return [Candidate(record=parsed(row)) for row in rows]

            similarity: dict[int, float] = {}
            span: Span | None = None
            if query_vector is not None:
                ask = VectorAsk(query.tenant_id, query.agent_id, where, params, query_vector, limit)
                hits, span = self._vector_hits(conn, ask, query.space)
                similarity = dict(hits)

            lexical = (
                scaled_to_best(
                    _lexical_hits(conn, terms, where, params, limit, self._db.document_count(conn), span)
                )
                if terms
                else {}
            )
            order = fused_order(list(similarity), list(lexical))
            lexical_only = lacking_cosine(order, similarity)
            if query_vector is not None and lexical_only:
                similarity.update(
                    self._cosines(
                        conn, query.tenant_id, query.agent_id, lexical_only, query_vector, query.space
                    )
                )

            records = _fetch(conn, order)

        return [
            Candidate(record=records[rowid], similarity=similarity.get(rowid), lexical=lexical.get(rowid))
            for rowid in order
            if rowid in records
        ]


def _informative_terms(conn: sqlite3.Connection, terms: list[str], docs: int) -> tuple[list[str], int | None]:
    """``terms`` without those in more than `COMMON_TERM_SHARE` of the indexed documents and, on a
    store of `LARGE_STORE_DOCS` or more, without the most common of the rest beyond
    `MAX_POSTINGS` documents in all.

    Scoring a common word ("the", "to", "a") costs BM25 a visit to most documents while it adds
    almost nothing to the ranking (its IDF is near zero; above half the documents FTS5 clamps it to
    zero). Dropping them takes most of the work out of a question-like query on a large store.
    On a very large store even a word in 2 % of the documents is 20,000 visits per million, and
    BM25 costs about 1.5 µs a visit: the rarest words, which carry most of the score, are kept
    until the query would read `MAX_POSTINGS`; the rarest is always kept. Small stores keep every
    word (their statistics are too noisy, and every query is cheap), and so does a query whose
    remaining words match nothing. Document frequencies are those of the whole index (of each
    word's stem, as FTS5 indexes it), as BM25's own are.

    The second value is a floor on the rowids to score (None: all): when even the words kept
    match more than `MAX_POSTINGS` documents of a large store (a question whose only searchable
    word is common, "marathon" in 42,000 of a million: 80 ms), BM25 scores the newest of them
    only: the newest `MAX_POSTINGS` matches (FTS5 keeps a word's postings in rowid order, and
    starts at the floor). Vector search still looks at every memory; the words of
    such a question say little about which of 42,000 matches is meant.
    """
    if docs < COMMON_TERM_MIN_DOCS or (len(terms) < 2 and docs < LARGE_STORE_DOCS):
        return terms, None
    stems = _stems(conn, terms)
    distinct = list(dict.fromkeys(stems.values()))
    marks = ", ".join("?" * len(distinct))
    df = dict(
        conn.execute(f"SELECT term, doc FROM records_fts_vocab WHERE term IN ({marks})", distinct).fetchall()
    )
    by_stem: dict[str, str] = {}
    for term in terms:
        by_stem.setdefault(stems.get(term, term), term)
    kept = [stem for stem in by_stem if df.get(stem, 0) <= docs * COMMON_TERM_SHARE]
    if not any(df.get(stem, 0) for stem in kept):
        kept = list(by_stem)
        if docs < LARGE_STORE_DOCS:
            return terms, None
    if docs >= LARGE_STORE_DOCS:
        kept.sort(key=lambda stem: df.get(stem, 0))
        budget, capped = 0, list[str]()
        for stem in kept:
            budget += df.get(stem, 0)
            if capped and budget > MAX_POSTINGS:
                break
            capped.append(stem)
        kept = capped
        words = [by_stem[stem] for stem in kept]
        return words, _newest_floor(conn, words, sum(df.get(k, 0) for k in kept))
    return [by_stem[stem] for stem in kept], None


def _newest_floor(conn: sqlite3.Connection, terms: list[str], postings: int) -> int | None:
    """The rowid of the `MAX_POSTINGS`-th newest document matching ``terms`` (walking the
    postings newest first, without scoring them, is cheap); None when fewer match."""
    if postings <= MAX_POSTINGS:
        return None
    row = conn.execute(
        "SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (fts_match(terms), MAX_POSTINGS - 1),
    ).fetchone()
    return None if row is None else int(row[0])


def _stems(conn: sqlite3.Connection, terms: list[str]) -> dict[str, str]:
    """Each term as the index stores it (the same tokenizer's stem), by the connection's scratch
    text index (`sqlite_schema.QUERY_STEMS`): the vocabulary is of stems ("offic", "befor")."""
    conn.execute("DELETE FROM temp.query_stems")
    conn.executemany("INSERT INTO temp.query_stems (rowid, t) VALUES (?, ?)", enumerate(terms))
    rows = conn.execute("SELECT doc, term FROM temp.query_stems_vocab WHERE offset = 0").fetchall()
    return {terms[int(doc)]: str(term) for doc, term in rows}


def _lexical_hits(
    conn: sqlite3.Connection,
    terms: list[str],
    where: str,
    params: Sequence[Any],
    limit: int,
    docs: int,
    span: Span | None = None,
) -> dict[int, float]:
    """Up to ``limit`` eligible rows matching any term, best first, with FTS5's ``bm25()`` (lower
    is better; `recall.rules.fusion.scaled_to_best` makes the top hit 1.0).

    ``span``, the rowids every eligible row lies in (`_vector_hits` read them), keeps the match
    to them: the index holds every agent's records, and scoring another agent's matches only to
    drop them was most of a small agent's search beside a large one. The scores are the same
    (BM25 reads its statistics from the whole index whatever rows are asked for)."""
    low, high = span or (0, MAX_ROWID)
    if low > high:
        return {}  # nothing is eligible
    kept, floor = _informative_terms(conn, terms, docs)
    rows = conn.execute(
        # The match runs once, first (MATERIALIZED): left to itself the planner may walk the
        # eligible rows and re-run the match for each one (seconds instead of milliseconds).
        "WITH hits AS MATERIALIZED (SELECT rowid, bm25(records_fts) AS s FROM records_fts "
        "WHERE records_fts MATCH ? AND rowid >= ? AND rowid <= ?) "
        f"SELECT r.seq, hits.s FROM hits JOIN records r ON r.seq = hits.rowid WHERE {where} "
        "ORDER BY hits.s LIMIT ?",
        (fts_match(kept), max(low, 0 if floor is None else floor), high, *params, limit),
    ).fetchall()
    return dict(rows)


def _fetch(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
    records: dict[int, MemoryRecord] = {}
    for start in range(0, len(rowids), CHUNK):
        chunk = rowids[start : start + CHUNK]
        rows = conn.execute(
            f"SELECT r.seq, {RECORD_FIELDS} FROM records r WHERE r.seq IN ({', '.join('?' * len(chunk))})",
            chunk,
        ).fetchall()
        for row in rows:
            records[row[0]] = parsed(row[1:])
    return records


def parsed(row: sqlite3.Row | tuple[Any, ...]) -> MemoryRecord:
    """``row``'s record, validated once while the same row is read again (module docstring).

    Each caller gets its own shallow copy, so a field a caller sets (``model_copy(update=...)`` or
    an assignment) never reaches the kept record. Its lists and dict are shared with the kept one:
    nothing in the service changes a record's collections in place, and a deep copy would cost
    much of the validation it saves."""
    values = tuple(row)
    if sum(len(values[i] or "") for i in _LONG_COLUMNS) > PARSED_ROW_CHARS:
        return row_to_record(values)
    return _parsed(values).model_copy()


@functools.lru_cache(maxsize=PARSED_ROWS)
def _parsed(values: tuple[Any, ...]) -> MemoryRecord:
    return row_to_record(values)
