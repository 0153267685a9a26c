"""`agent_memory.ports.KnowledgeStore` on OpenSearch: a tenant's documents and their passages.

A sibling index of the records (``{alias}-knowledge``, `opensearch_index.knowledge_index_body`),
not documents among them: a passage has no agent and no grain, so no query of the memory store
(the cascade's scans, retention's deletes, an agent's listing) can ever see one. Search works as
the records' does (`opensearch_retrieval`): a k-NN and a BM25 query in one ``_msearch``, merged
by the fusion rule (`recall.rules.ranking`), every filter inside the k-NN clause. The bodies are built in
`opensearch_knowledge_queries`.

* **Routing by tenant**: a tenant's knowledge lives on one shard. Routing
  is placement, not security: every query also filters the ``tenant_id`` term, and documents
  read by id are checked to be the tenant's and of the kind asked for.
* **A put** first indexes a marker of a put under way (refreshed whatever the store's refresh),
  then a ``_bulk`` (chunked) of the new passages, then one of the document, then a
  ``_delete_by_query`` of the document's other passages, and last removes the marker. A passage
  id carries the version, so the old and new passages never overwrite each other. OpenSearch
  has no transaction, and a refresh (the store's own or the periodic one) can expose any prefix
  of those requests to a search, part of one ``_bulk`` included. So a search also asks, in the
  same request (one snapshot), which of the tenant's documents have a put under way: a search
  that sees any write of a put sees its marker. Hits of documents with no put under way, one
  version each, are whole and current and are answered as they are (the common case: one
  request, as before). Otherwise the search is made again in one **snapshot** of the tenant's
  shard (a point in time, `_snapshot`) with the version each document names there, keeping that
  version's passages only and none of a document absent from it (a first put not yet whole).
  The document names a version only once every passage of it is stored and refreshed, and the
  old passages are deleted only after that, so in any snapshot the named version is whole.
  `passages` always reads in a snapshot. A read answers with one whole version of a document,
  never a mix and never a part: what SQLite's one transaction gives. A put that fails half-way
  leaves its marker, so searches of that document keep reading in a snapshot until a put of it
  succeeds (or it is deleted). Removing by passage id, not by version, also removes the tail of
  a re-put of the same version with fewer passages. The document is a partial ``_update`` with
  ``doc_as_upsert``, so the hit counters survive a put, as on SQLite.
* **A delete** removes the passages first (``_delete_by_query``, whose ``deleted`` count is
  returned), then the document and, in the same ``_bulk``, upserts the tombstone with a script
  that only moves it later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_cursors import next_page_cursor
from agent_memory.adapters.opensearch.opensearch_documents import bulk_lines, cosine_of, found_source, unit
from agent_memory.adapters.opensearch.opensearch_filters import query_words
from agent_memory.adapters.opensearch.opensearch_index import (
    VECTOR_FIELD,
    cosine_from_score,
    knowledge_alias_name,
)
from agent_memory.adapters.opensearch.opensearch_knowledge_queries import (
    DOCUMENT,
    MAX_SEARCH_HITS,
    PASSAGE,
    PASSAGE_PAGE,
    TOMBSTONE,
    current_versions,
    delete_by_query_params,
    doc_passages_query,
    document_doc_id,
    document_source,
    document_versions_body,
    documents_after,
    documents_binding,
    documents_page_body,
    hits_update_body,
    is_kind,
    parse_ts,
    passage_doc_id,
    passage_filters,
    passage_lexical_body,
    passage_source,
    passage_vectors_body,
    passages_page_body,
    put_doc_id,
    put_source,
    puts_under_way,
    stale_passages_query,
    to_document,
    to_passage,
    tombstone_doc_id,
    tombstone_update_body,
    with_puts_under_way,
)
from agent_memory.adapters.opensearch.opensearch_queries import knn_body
from agent_memory.adapters.opensearch.opensearch_responses import (
    hits_of,
    item_failures,
    raise_for_items,
    raise_for_response,
)
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.knowledge.rules.passages import KnowledgeDocument, Passage
from agent_memory.ports import DocumentPage, PassageCandidate, PassageQuery, StoredPassage
from agent_memory.recall.rules.fusion import fused_order, lacking_cosine, scaled_to_best

logger = logging.getLogger(__name__)

#: How long a read's snapshot (`OpenSearchKnowledge._snapshot`) outlives a reader that never
#: closes it; each search in it extends it by as much.
SNAPSHOT_KEEP_ALIVE = "30s"
#: Passages per ``_bulk`` request (as the records' `opensearch_records.BULK_CHUNK`).
KNOWLEDGE_BULK_CHUNK = 200


class OpenSearchKnowledge(OpenSearchBase):
    """`agent_memory.ports.KnowledgeStore` (see the module docstring)."""

    @property
    def knowledge_alias(self) -> str:
        """Where every knowledge request goes: an alias, so the index can be rebuilt behind it."""
        return knowledge_alias_name(self.alias)

    # -- request plumbing ---------------------------------------------------------------------

    def _tenant_route(self, tenant_id: str) -> dict[str, str]:
        """Routing by the tenant alone (knowledge has no agent)."""
        return {"routing": tenant_id}

    def _knowledge_action(self, op: str, _id: str, tenant_id: str) -> dict[str, Any]:
        """A routed ``_bulk`` action line; an ``update`` retries a concurrent change (a counter)."""
        action: dict[str, Any] = {"_index": self.knowledge_alias, "_id": _id, **self._tenant_route(tenant_id)}
        if op == "update":
            action["retry_on_conflict"] = 3
        return {op: action}

    def _knowledge_bulk(self, lines: list[dict[str, Any]], what: str, **params: str) -> dict[str, Any]:
        """`OpenSearchBase._bulk_checked` with errors naming the knowledge alias; ``params`` over
        the store's write parameters. A delete of a document already gone is not a failure."""
        with os_errors(what, self.knowledge_alias):
            response: dict[str, Any] = self._client.bulk(
                body=lines, params={**self._write_params(), **params}
            )
        raise_for_items(response, what)
        return response

    def _knowledge_search(self, body: dict[str, Any], what: str, tenant_id: str) -> dict[str, Any]:
        """A search of the tenant's shard of the knowledge index (the body filters the tenant)."""
        with os_errors(what, self.knowledge_alias):
            response: dict[str, Any] = self._client.search(
                index=self.knowledge_alias, body=body, params=self._tenant_route(tenant_id)
            )
        return response

    def _knowledge_mget(
        self, ids: list[str], tenant_id: str, what: str, **params: Any
    ) -> list[dict[str, Any]]:
        """Routed, real-time reads by id; each entry's own error raises (a 200 can hide one)."""
        docs = [{"_index": self.knowledge_alias, "_id": _id, **self._tenant_route(tenant_id)} for _id in ids]
        with os_errors(what, self.knowledge_alias):
            response = self._client.mget(body={"docs": docs}, params=params)
        found: list[dict[str, Any]] = response.get("docs", [])
        for doc in found:
            raise_for_response(doc, what)
        return found

    def _knowledge_msearch(
        self, searches: list[tuple[dict[str, Any], dict[str, Any]]], what: str
    ) -> list[dict[str, Any]]:
        """Several searches in one round trip; each response's own error raises."""
        lines: list[dict[str, Any]] = []
        for header, body in searches:
            lines += [header, body]
        with os_errors(what, self.knowledge_alias):
            response = self._client.msearch(body=lines)
        results: list[dict[str, Any]] = response.get("responses", [])
        for result in results:
            raise_for_response(result, what)
        return results

    def _delete_passages(self, tenant_id: str, query: dict[str, Any], what: str) -> int:
        """The passages ``query`` matches, gone: one routed ``_delete_by_query``. The number
        deleted."""
        with os_errors(what, self.knowledge_alias):
            response: dict[str, Any] = self._client.delete_by_query(
                index=self.knowledge_alias,
                body={"query": query},
                params=delete_by_query_params(tenant_id, bool(self._refresh)),
            )
        failures = response.get("failures") or []
        if failures:
            raise DependencyError(
                f"{what}: {len(failures)} passages could not be deleted (first: {failures[0]}); "
                "it is safe to try again"
            )
        return int(response.get("deleted", 0))

    # -- writes -------------------------------------------------------------------------------

    def put_document(self, document: KnowledgeDocument, passages: Sequence[StoredPassage]) -> None:
        """The passages, then the document, in ``_bulk`` requests; then the document's other
        passages deleted (module docstring). Every vector is checked before anything is sent."""
        tenant_id, doc_id = document.tenant_id, document.doc_id
        pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for item in passages:
            passage = item.passage
            if passage.tenant_id != tenant_id or passage.doc_id != doc_id:
                raise ValidationFailedError(
                    f"passage {passage.id} is of {passage.tenant_id}/{passage.doc_id}, "
                    f"not of the document {tenant_id}/{doc_id} being stored"
                )
            vector = unit(item.vector, self.dimension, self.model_id)
            action = self._knowledge_action("index", passage_doc_id(tenant_id, passage.id), tenant_id)
            pairs.append((action, passage_source(passage, vector)))
        _id = document_doc_id(tenant_id, doc_id)
        upsert = {"doc": document_source(document, counters=False), "doc_as_upsert": True}
        document_pair = (self._knowledge_action("update", _id, tenant_id), upsert)
        marker = self._knowledge_action("index", put_doc_id(tenant_id, doc_id), tenant_id)
        # The marker first, searchable before any other write of the put whatever the store's
        # refresh: a search that sees one of the put's writes sees the marker too.
        self._knowledge_bulk(
            bulk_lines([(marker, put_source(document))]), "storing a document", refresh="true"
        )
        for start in range(0, len(pairs), KNOWLEDGE_BULK_CHUNK):
            self._knowledge_bulk(
                bulk_lines(pairs[start : start + KNOWLEDGE_BULK_CHUNK]), "storing a document"
            )
        # The document last, in a request of its own: once it names the new version, every new
        # passage is searchable (the store's refresh), which a read's snapshot relies on.
        self._knowledge_bulk(bulk_lines([document_pair]), "storing a document")
        keep = list(dict.fromkeys(item.passage.id for item in passages))
        self._delete_passages(
            tenant_id, stale_passages_query(tenant_id, doc_id, keep), "removing a document's earlier passages"
        )
        # Only a put that got this far removes its marker: one that failed half-way leaves it, so
        # searches of the document keep reading in a snapshot until a put of it succeeds.
        self._knowledge_bulk(
            [self._knowledge_action("delete", put_doc_id(tenant_id, doc_id), tenant_id)], "storing a document"
        )

    def delete_document(self, tenant_id: str, doc_id: str, at: datetime) -> int:
        """Passages first (a reader that still finds the document finds its passages, never the
        reverse), then the document and the tombstone in one ``_bulk``."""
        removed = self._delete_passages(
            tenant_id, doc_passages_query(tenant_id, doc_id), "deleting a document"
        )
        lines = [
            self._knowledge_action("delete", document_doc_id(tenant_id, doc_id), tenant_id),
            self._knowledge_action("delete", put_doc_id(tenant_id, doc_id), tenant_id),  # a failed put's
        ]
        lines += [
            self._knowledge_action("update", tombstone_doc_id(tenant_id, doc_id), tenant_id),
            tombstone_update_body(tenant_id, doc_id, at),
        ]
        self._knowledge_bulk(lines, "deleting a document")
        return removed

    def record_document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        """Best effort, never raises: one ``_bulk`` of scripted updates; a document deleted
        meanwhile (404) is not a failure."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return
        body = hits_update_body(tenant_id, at)
        lines: list[dict[str, Any]] = []
        for doc_id in ids:
            lines += [self._knowledge_action("update", document_doc_id(tenant_id, doc_id), tenant_id), body]
        try:
            with os_errors("counting document hits", self.knowledge_alias):
                response = self._client.bulk(
                    body=lines, params={"require_alias": "true", **self._bookkeeping_refresh()}
                )
            failures = [f for f in item_failures(response) if f[0] != 404]
            if failures:
                logger.warning(
                    "record_document_hits: %d updates failed, first: %s", len(failures), failures[0]
                )
        except Exception as exc:  # best effort by contract: a search must not fail on its bookkeeping
            logger.warning(
                "record_document_hits skipped for %d documents of %s: %s", len(ids), tenant_id, exc
            )

    # -- reads --------------------------------------------------------------------------------

    def get_document(self, tenant_id: str, doc_id: str) -> KnowledgeDocument | None:
        """One routed ``_mget`` (real-time: a put is read back at once), checked to be the
        tenant's document."""
        (doc,) = self._knowledge_mget([document_doc_id(tenant_id, doc_id)], tenant_id, "reading a document")
        source = found_source(doc)
        if source is None or not is_kind(source, DOCUMENT, tenant_id) or source.get("doc_id") != doc_id:
            return None
        return to_document(source)

    def deleted_at(self, tenant_id: str, doc_id: str) -> datetime | None:
        (doc,) = self._knowledge_mget(
            [tombstone_doc_id(tenant_id, doc_id)], tenant_id, "reading a document's tombstone"
        )
        source = found_source(doc)
        if source is None or not is_kind(source, TOMBSTONE, tenant_id) or source.get("doc_id") != doc_id:
            return None
        at = source.get("deleted_at")
        return parse_ts(at) if isinstance(at, str) else None

    def list_documents(self, tenant_id: str, cursor: str | None = None, limit: int = 50) -> DocumentPage:
        """The tenant's documents by id, without their text, ``size = limit + 1`` and
        ``search_after`` the last id; the cursor is bound to the tenant (another's is a 400)."""
        after = documents_after(cursor, tenant_id) if cursor else None
        if limit < 1:
            return DocumentPage(documents=[], next_cursor=None)
        limit = min(limit, MAX_SEARCH_HITS - 1)  # a longer page is cut, and its cursor goes on
        body = documents_page_body(tenant_id, limit + 1, after)
        hits = hits_of(self._knowledge_search(body, "listing documents", tenant_id))
        documents = [
            to_document(h["_source"], whole=False)
            for h in hits[:limit]
            if is_kind(h["_source"], DOCUMENT, tenant_id)
        ]
        return DocumentPage(
            documents=documents, next_cursor=next_page_cursor(documents_binding(tenant_id), hits, limit)
        )

    def passages(self, tenant_id: str, doc_id: str) -> list[Passage]:
        """Every passage of the document's current version by ordinal, in pages of
        `PASSAGE_PAGE` (``search_after``), all read in one snapshot with the document: during a
        put, one whole version, never a mix (module docstring)."""
        with self._snapshot(tenant_id, "reading a document's passages") as pit:
            version = self._snapshot_lookups(pit, tenant_id, [doc_id], [])[0].get(doc_id)
            if version is None:  # no document in the snapshot: a first put not yet whole
                return []
            out: list[Passage] = []
            after: list[Any] | None = None
            while True:
                (page,) = self._snapshot_msearch(
                    pit, [passages_page_body(tenant_id, doc_id, after)], "reading a document's passages"
                )
                hits = hits_of(page)
                out += [
                    to_passage(h["_source"])
                    for h in hits
                    if is_kind(h["_source"], PASSAGE, tenant_id) and h["_source"].get("version") == version
                ]
                if len(hits) < PASSAGE_PAGE:
                    return out
                after = hits[-1]["sort"]

    def search_passages(self, query: PassageQuery) -> list[PassageCandidate]:
        """Up to ``limit`` k-NN hits and up to ``limit`` BM25 hits (one ``_msearch``, the same
        filters inside the k-NN clause and around the BM25 query), merged as
        `opensearch_retrieval.OpenSearchRetrieval.search` merges records: vector hits first, then
        lexical-only ones; with a vector, every candidate carries its cosine. ``limit`` is
        capped at `MAX_SEARCH_HITS`, the most one search list can hold.

        One version of each document, whole (module docstring): each search also says, from
        its own snapshot, which documents have a put under way. Hits of none of those, one
        version per document, are whole and current as they are: the answer (the vectors of
        lexical-only hits read by id). Otherwise the search is made again in one snapshot with
        the versions the documents name there (`_snapshot`), which costs three requests more."""
        limit = min(max(0, query.limit), MAX_SEARCH_HITS)
        if limit == 0:
            return []
        tenant_id = query.tenant_id
        words = query_words(query.text)
        query_vector = None if query.vector is None else unit(query.vector, self.dimension, self.model_id)
        if query_vector is None and words is None:
            return []
        filters = passage_filters(query)
        bodies: list[dict[str, Any]] = []
        if query_vector is not None:
            bodies.append(knn_body(query_vector, limit, filters))
        if words is not None:
            bodies.append(passage_lexical_body(words, limit, filters))
        header = {"index": self.knowledge_alias, **self._tenant_route(tenant_id)}
        watched = [(header, with_puts_under_way(body, tenant_id)) for body in bodies]
        responses = self._knowledge_msearch(watched, "searching knowledge")
        hits = _Hits(responses, query_vector, words is not None, tenant_id)
        if not hits.found:
            return []
        if hits.settled(responses):
            vectors = self._vectors_now(tenant_id, hits.lexical_only)
            if all(pid in vectors for pid in hits.lexical_only):  # else deleted since: read again
                return hits.answer(None, vectors)
        with self._snapshot(tenant_id, "searching knowledge") as pit:
            hits = _Hits(
                self._snapshot_msearch(pit, bodies, "searching knowledge"),
                query_vector,
                words is not None,
                tenant_id,
            )
            if not hits.found:
                return []
            doc_ids = sorted({passage.doc_id for passage in hits.found.values()})
            current, vectors = self._snapshot_lookups(pit, tenant_id, doc_ids, hits.lexical_only)
        return hits.answer(current, vectors)

    def _vectors_now(self, tenant_id: str, passage_ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of ``passage_ids`` (routed, real-time ``_mget``); a passage gone
        has none."""
        if not passage_ids:
            return {}
        found = self._knowledge_mget(
            [passage_doc_id(tenant_id, pid) for pid in passage_ids],
            tenant_id,
            "reading passage vectors",
            _source_includes=f"{VECTOR_FIELD},tenant_id,kind",
        )
        vectors: dict[str, list[float]] = {}
        for pid, doc in zip(passage_ids, found, strict=True):
            if (vector := _passage_vector(found_source(doc), tenant_id)) is not None:
                vectors[pid] = vector
        return vectors

    # -- one snapshot ---------------------------------------------------------------------------

    @contextmanager
    def _snapshot(self, tenant_id: str, what: str) -> Iterator[str]:
        """A point in time of the tenant's shard of the knowledge index, closed on the way out.

        A put is several requests (module docstring) and a periodic refresh can expose any
        prefix of them, part of one ``_bulk`` included; reads that must agree with each other
        (the hits and their documents' versions) are made in one snapshot, so the version a
        document names there is one whose passages are all in it. Closing is best effort: a
        point in time left open expires after `SNAPSHOT_KEEP_ALIVE`."""
        with os_errors(what, self.knowledge_alias):
            opened: dict[str, Any] = self._client.create_pit(
                index=self.knowledge_alias,
                params={"keep_alive": SNAPSHOT_KEEP_ALIVE, **self._tenant_route(tenant_id)},
            )
        pit_id = str(opened["pit_id"])
        try:
            yield pit_id
        finally:
            try:
                self._client.delete_pit(body={"pit_id": [pit_id]})
            except Exception as exc:  # it expires on its own: never fail a read that succeeded
                logger.warning("closing a knowledge snapshot failed (it expires by itself): %s", exc)

    def _snapshot_msearch(self, pit_id: str, bodies: list[dict[str, Any]], what: str) -> list[dict[str, Any]]:
        """Searches in the snapshot ``pit_id``, in one round trip (index and routing come from
        the point in time, so the headers are empty)."""
        pit = {"id": pit_id, "keep_alive": SNAPSHOT_KEEP_ALIVE}
        return self._knowledge_msearch([({}, {**body, "pit": pit}) for body in bodies], what)

    def _snapshot_lookups(
        self, pit_id: str, tenant_id: str, doc_ids: list[str], lexical_only: list[str]
    ) -> tuple[dict[str, str], dict[str, list[float]]]:
        """In one round trip in the snapshot: the version each of ``doc_ids`` names there (a
        document absent from it has none), and the vectors of the ``lexical_only`` passages (to
        give them a cosine)."""
        bodies = [document_versions_body(tenant_id, doc_ids)]
        if lexical_only:
            bodies.append(passage_vectors_body(tenant_id, lexical_only))
        responses = self._snapshot_msearch(pit_id, bodies, "reading the current versions of documents")
        vectors: dict[str, list[float]] = {}
        for hit in hits_of(responses[1]) if lexical_only else []:
            if (vector := _passage_vector(hit["_source"], tenant_id)) is not None:
                vectors[str(hit["_source"]["id"])] = vector
        return current_versions(hits_of(responses[0]), tenant_id), vectors


def _passage_vector(source: dict[str, Any] | None, tenant_id: str) -> list[float] | None:
    """The stored vector of a read passage's ``_source``, if it is the tenant's passage and has one."""
    if source is None or not is_kind(source, PASSAGE, tenant_id):
        return None
    vector: list[float] | None = source.get(VECTOR_FIELD)
    return vector


class _Hits:
    """The passages a k-NN and/or BM25 ``_msearch`` found, by id, with their scores."""

    def __init__(
        self,
        responses: list[dict[str, Any]],
        query_vector: npt.NDArray[np.float32] | None,
        lexical: bool,
        tenant_id: str,
    ) -> None:
        self.query_vector = query_vector
        self.found: dict[str, Passage] = {}
        self.similarity: dict[str, float] = {}
        self.raw_lexical: dict[str, float] = {}
        for hit in hits_of(responses[0]) if query_vector is not None else []:
            if is_kind(hit["_source"], PASSAGE, tenant_id):
                passage = self.found.setdefault(hit["_source"]["id"], to_passage(hit["_source"]))
                self.similarity[passage.id] = cosine_from_score(float(hit["_score"]))
        for hit in hits_of(responses[-1]) if lexical else []:
            if is_kind(hit["_source"], PASSAGE, tenant_id):
                passage = self.found.setdefault(hit["_source"]["id"], to_passage(hit["_source"]))
                self.raw_lexical[passage.id] = float(hit["_score"])

    @property
    def lexical_only(self) -> list[str]:
        """Hits of BM25 alone, which a query with a vector gives a cosine from their vectors."""
        if self.query_vector is None:
            return []
        return [pid for pid in self.raw_lexical if pid not in self.similarity]

    def settled(self, responses: list[dict[str, Any]]) -> bool:
        """Whether the hits can be answered as they are: no put under way of any of their
        documents in the searches' snapshots (a put's marker is searchable before its first
        write), and one version of each document among them (each search may have had its own
        snapshot)."""
        under_way: set[str] = set()
        for response in responses:
            seen = puts_under_way(response)
            if seen is None:
                return False
            under_way |= seen
        versions: dict[str, set[str]] = {}
        for passage in self.found.values():
            versions.setdefault(passage.doc_id, set()).add(passage.version)
        return not (under_way & set(versions)) and all(len(v) == 1 for v in versions.values())

    def answer(
        self, current: dict[str, str] | None, vectors: dict[str, list[float]]
    ) -> list[PassageCandidate]:
        """The candidates in fused order; with ``current`` (doc_id -> version), only passages of
        the version their document names. ``vectors`` give the lexical-only hits their cosine."""
        kept = {
            pid
            for pid, passage in self.found.items()
            if current is None or current.get(passage.doc_id) == passage.version
        }
        similarity = {pid: s for pid, s in self.similarity.items() if pid in kept}
        raw_lexical = {pid: s for pid, s in self.raw_lexical.items() if pid in kept}
        lexical = scaled_to_best(raw_lexical)
        order = fused_order(list(similarity), list(raw_lexical))
        if self.query_vector is not None:
            lacking = lacking_cosine(order, similarity)
            similarity.update({p: cosine_of(vectors[p], self.query_vector) for p in lacking if p in vectors})
            order = [pid for pid in order if pid in similarity]  # a passage stored without a vector
        return [
            PassageCandidate(
                passage=self.found[pid], similarity=similarity.get(pid), lexical=lexical.get(pid)
            )
            for pid in order
        ]
