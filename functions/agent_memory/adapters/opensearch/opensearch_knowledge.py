"""`agent_memory.ports.KnowledgeStore` on OpenSearch: a tenant's documents and their passages.

A sibling index of the records (``{alias}-knowledge``, `opensearch_index.knowledge_index_body`),
not documents among them: a passage has no agent and no grain, so no query of the memory store
(the cascade's scans, retention's deletes, an agent's listing) can ever see one. Search works as
the records' does (`opensearch_retrieval`): a k-NN and a BM25 query in one ``_msearch``, merged
by `domain.fusion`'s rule, every filter inside the k-NN clause. The bodies are built in
`opensearch_knowledge_queries`.

* **Routing by tenant**: a tenant's knowledge lives on one shard. Routing
  is placement, not security: every query also filters the ``tenant_id`` term, and documents
  read by id are checked to be the tenant's and of the kind asked for.
* **A put** is a ``_bulk`` (chunked) of the new passages, then one of the document, followed by
  a ``_delete_by_query`` of the document's other passages. A passage id carries the version, so
  the old and new passages never overwrite each other. OpenSearch has no transaction: between
  the requests a search may find both versions' passages, never neither (one shard, whose
  refresh exposes the writes in the order they were made); it then keeps those of the version
  the document names (`_current_versions`), and the document names the new version only once
  its passages are searchable (the writes wait for a refresh) — the closest OpenSearch allows to
  SQLite's one transaction. Removing by passage id, not by version, also
  removes the tail of a re-put of the same version with fewer passages. The document is a partial
  ``_update`` with ``doc_as_upsert``, so the hit counters survive a put, as on SQLite.
* **A delete** removes the passages first (``_delete_by_query``, whose ``deleted`` count is
  returned), then the document and, in the same ``_bulk``, upserts the tombstone with a script
  that only moves it later.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_cursors import next_page_cursor
from agent_memory.adapters.opensearch.opensearch_documents import bulk_lines, found_source, unit
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
    delete_by_query_params,
    doc_passages_query,
    document_doc_id,
    document_source,
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
    passages_page_body,
    stale_passages_query,
    to_document,
    to_passage,
    tombstone_doc_id,
    tombstone_update_body,
)
from agent_memory.adapters.opensearch.opensearch_queries import knn_body
from agent_memory.adapters.opensearch.opensearch_responses import (
    hits_of,
    item_failures,
    raise_for_items,
    raise_for_response,
)
from agent_memory.domain.fusion import fused_order, lacking_cosine, scaled_to_best
from agent_memory.domain.knowledge import KnowledgeDocument, Passage
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.ports import DocumentPage, PassageCandidate, PassageQuery, StoredPassage

logger = logging.getLogger(__name__)

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

    def _knowledge_bulk(self, lines: list[dict[str, Any]], what: str) -> dict[str, Any]:
        """`OpenSearchBase._bulk_checked` with errors naming the knowledge alias."""
        with os_errors(what, self.knowledge_alias):
            response: dict[str, Any] = self._client.bulk(body=lines, params=self._write_params())
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
        for start in range(0, len(pairs), KNOWLEDGE_BULK_CHUNK):
            self._knowledge_bulk(
                bulk_lines(pairs[start : start + KNOWLEDGE_BULK_CHUNK]), "storing a document"
            )
        # The document last, in a request of its own: once it names the new version, every new
        # passage is searchable (the store's refresh), which `_current_versions` relies on.
        self._knowledge_bulk(bulk_lines([document_pair]), "storing a document")
        keep = list(dict.fromkeys(item.passage.id for item in passages))
        self._delete_passages(
            tenant_id, stale_passages_query(tenant_id, doc_id, keep), "removing a document's earlier passages"
        )

    def delete_document(self, tenant_id: str, doc_id: str, at: datetime) -> int:
        """Passages first (a reader that still finds the document finds its passages, never the
        reverse), then the document and the tombstone in one ``_bulk``."""
        removed = self._delete_passages(
            tenant_id, doc_passages_query(tenant_id, doc_id), "deleting a document"
        )
        lines = [self._knowledge_action("delete", document_doc_id(tenant_id, doc_id), tenant_id)]
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
        """Every passage of the document by ordinal, in pages of `PASSAGE_PAGE` (``search_after``)."""
        out: list[Passage] = []
        after: list[Any] | None = None
        while True:
            body = passages_page_body(tenant_id, doc_id, after)
            hits = hits_of(self._knowledge_search(body, "reading a document's passages", tenant_id))
            out += [to_passage(h["_source"]) for h in hits if is_kind(h["_source"], PASSAGE, tenant_id)]
            if len(hits) < PASSAGE_PAGE:
                return out
            after = hits[-1]["sort"]

    def search_passages(self, query: PassageQuery) -> list[PassageCandidate]:
        """Up to ``limit`` k-NN hits and up to ``limit`` BM25 hits (one routed ``_msearch``, the
        same filters inside the k-NN clause and around the BM25 query), merged as
        `opensearch_retrieval.OpenSearchRetrieval.search` merges records: vector hits first, then
        lexical-only ones; with a vector, every candidate carries its cosine. ``limit`` is
        capped at `MAX_SEARCH_HITS`, the most one search list can hold."""
        limit = min(max(0, query.limit), MAX_SEARCH_HITS)
        if limit == 0:
            return []
        tenant_id = query.tenant_id
        words = query_words(query.text)
        query_vector = None if query.vector is None else unit(query.vector, self.dimension, self.model_id)
        if query_vector is None and words is None:
            return []
        filters = passage_filters(query)
        header = {"index": self.knowledge_alias, **self._tenant_route(tenant_id)}
        searches: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if query_vector is not None:
            searches.append((header, knn_body(query_vector, limit, filters)))
        if words is not None:
            searches.append((header, passage_lexical_body(words, limit, filters)))
        responses = self._knowledge_msearch(searches, "searching knowledge")
        vector_hits = hits_of(responses[0]) if query_vector is not None else []
        lexical_hits = hits_of(responses[-1]) if words is not None else []

        found: dict[str, Passage] = {}
        similarity: dict[str, float] = {}
        raw_lexical: dict[str, float] = {}
        for hit in vector_hits:
            if is_kind(hit["_source"], PASSAGE, tenant_id):
                passage = found.setdefault(hit["_source"]["id"], to_passage(hit["_source"]))
                similarity[passage.id] = cosine_from_score(float(hit["_score"]))
        for hit in lexical_hits:
            if is_kind(hit["_source"], PASSAGE, tenant_id):
                passage = found.setdefault(hit["_source"]["id"], to_passage(hit["_source"]))
                raw_lexical[passage.id] = float(hit["_score"])
        kept = self._current_versions(tenant_id, found)
        similarity = {pid: s for pid, s in similarity.items() if pid in kept}
        raw_lexical = {pid: s for pid, s in raw_lexical.items() if pid in kept}
        lexical = scaled_to_best(raw_lexical)
        order = fused_order(list(similarity), list(raw_lexical))
        if query_vector is not None:
            missing = lacking_cosine(order, similarity)
            similarity.update(self._passage_cosines(tenant_id, missing, query_vector))
            order = [pid for pid in order if pid in similarity]  # a passage deleted in between
        return [
            PassageCandidate(passage=found[pid], similarity=similarity.get(pid), lexical=lexical.get(pid))
            for pid in order
        ]

    def _current_versions(self, tenant_id: str, found: dict[str, Passage]) -> set[str]:
        """The ids of ``found`` to answer with: a document's passages of one version only.

        A put exposes the new version's passages before it deletes the old ones (module
        docstring), so a search in between can find both; the real engine does (the contract's
        `test_a_search_during_puts_sees_one_whole_version`). Where the hits hold two versions of
        a document, one routed real-time ``_mget`` of those documents says which version is
        current, and only its passages are kept. A document not found (deleted meanwhile) keeps
        what was found; hits of one version per document cost no request."""
        versions: dict[str, set[str]] = {}
        for passage in found.values():
            versions.setdefault(passage.doc_id, set()).add(passage.version)
        mixed = sorted(doc_id for doc_id, seen in versions.items() if len(seen) > 1)
        if not mixed:
            return set(found)
        docs = self._knowledge_mget(
            [document_doc_id(tenant_id, doc_id) for doc_id in mixed],
            tenant_id,
            "reading the current versions of documents",
            _source_includes="kind,tenant_id,doc_id,version",
        )
        current: dict[str, str] = {}
        for doc_id, doc in zip(mixed, docs, strict=True):
            source = found_source(doc)
            if source is not None and is_kind(source, DOCUMENT, tenant_id):
                current[doc_id] = str(source.get("version"))
        return {
            pid
            for pid, passage in found.items()
            if passage.doc_id not in current or passage.version == current[passage.doc_id]
        }

    def _passage_cosines(
        self, tenant_id: str, passage_ids: list[str], query_vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """Exact cosines of passages the k-NN query did not return (lexical-only hits)."""
        if not passage_ids:
            return {}
        found = self._knowledge_mget(
            [passage_doc_id(tenant_id, pid) for pid in passage_ids],
            tenant_id,
            "reading passage vectors",
            _source_includes=f"{VECTOR_FIELD},tenant_id,kind",
        )
        out: dict[str, float] = {}
        q = query_vector.astype(np.float64)
        for pid, doc in zip(passage_ids, found, strict=True):
            source = found_source(doc)
            if source is None or not is_kind(source, PASSAGE, tenant_id) or VECTOR_FIELD not in source:
                continue
            v = np.asarray(source[VECTOR_FIELD], dtype=np.float64)
            norm = float(np.linalg.norm(v))
            out[pid] = min(1.0, max(-1.0, float(v @ q / norm))) if norm > 0 else 0.0
        return out
