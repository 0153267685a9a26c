"""`agent_memory.ports.Retrieval` on OpenSearch: k-NN and BM25, the raw evidence of a search.

Its own module because retrieval is where the store's two scores meet: the k-NN and the BM25
queries go out in one ``_msearch`` (bodies in `opensearch_queries`), and their hits are handed
over as the fusion rule (`recall.rules.ranking`) says, the same on every store (this module does
no ranking of its own).

* **Similarity = cosine.** The index uses ``innerproduct`` on unit vectors (the store
  normalises every vector it writes and every query vector), and the engine score is converted
  back with `cosine_from_score`. Lexical-only hits get their cosine computed here from the
  stored vector.
* **Lexical** scores are divided by the best one (best hit = 1.0): `recall.rules.fusion.scaled_to_best`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_documents import (
    cosine_of,
    doc_id,
    found_source,
    owned,
    to_record,
    unit,
)
from agent_memory.adapters.opensearch.opensearch_filters import query_filters, query_words
from agent_memory.adapters.opensearch.opensearch_index import VECTOR_FIELD, cosine_from_score
from agent_memory.adapters.opensearch.opensearch_queries import (
    NEWEST_FIRST,
    knn_body,
    lexical_body,
    nearest_body,
    records_page_body,
)
from agent_memory.adapters.opensearch.opensearch_responses import hits_of
from agent_memory.adapters.opensearch.opensearch_spaces import space_field, space_vector
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import Candidate, NearestQuery, StoreQuery, Vector
from agent_memory.recall.rules.fusion import fused_order, lacking_cosine, scaled_to_best


class OpenSearchRetrieval(OpenSearchBase):
    """`agent_memory.ports.Retrieval` (see the module docstring)."""

    def nearest(self, query: NearestQuery) -> tuple[MemoryRecord, float] | None:
        """`Retrieval.nearest`: one k-NN search, the neighbourhood inside the k-NN clause's filter."""
        query_vector = self._query_unit(query.vector, query.space)
        body = nearest_body(
            query.tenant_id,
            query.agent_id,
            query.grain,
            query_vector,
            query.now,
            query.within,
            space_field(query.space),
        )
        hits = hits_of(
            self._search(body, "finding the nearest record", **self._route(query.tenant_id, query.agent_id))
        )
        if not hits:
            return None
        return to_record(hits[0]["_source"]), cosine_from_score(float(hits[0]["_score"]))

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` k-NN hits and up to ``limit`` BM25 hits (one ``_msearch``), merged.

        Vector hits first in vector-rank order, then lexical-only hits in lexical-rank order.
        With a query vector every candidate carries its cosine. Without a vector and without a
        word in ``text``: the newest live records in the window.
        """
        limit = max(0, query.limit)
        if limit == 0:
            return []
        filters = query_filters(query)
        route = self._route(query.tenant_id, query.agent_id)
        words = query_words(query.text)
        query_vector = None if query.vector is None else self._query_unit(query.vector, query.space)
        if query_vector is None and words is None:
            body = records_page_body(filters, limit, NEWEST_FIRST)
            return [
                Candidate(record=to_record(h["_source"]))
                for h in hits_of(self._search(body, "listing records", **route))
            ]

        header = {"index": self.alias, **route}
        searches: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if query_vector is not None:
            searches.append((header, knn_body(query_vector, limit, filters, space_field(query.space))))
        if words is not None:
            searches.append((header, lexical_body(words, limit, filters)))
        responses = self._msearch(searches, "searching records")
        vector_hits = hits_of(responses[0]) if query_vector is not None else []
        lexical_hits = hits_of(responses[-1]) if words is not None else []

        records: dict[str, MemoryRecord] = {}
        similarity: dict[str, float] = {}
        raw_lexical: dict[str, float] = {}
        for hit in vector_hits:
            record = to_record(hit["_source"])
            records.setdefault(record.id, record)
            similarity[record.id] = cosine_from_score(float(hit["_score"]))
        for hit in lexical_hits:
            record = to_record(hit["_source"])
            records.setdefault(record.id, record)
            raw_lexical[record.id] = float(hit["_score"])
        lexical = scaled_to_best(raw_lexical)
        order = fused_order(list(similarity), list(raw_lexical))
        if query_vector is not None:
            missing = lacking_cosine(order, similarity)
            similarity.update(self._cosines(query, missing, query_vector))
            order = [rid for rid in order if rid in similarity]  # a record deleted in between
        return [
            Candidate(record=records[rid], similarity=similarity.get(rid), lexical=lexical.get(rid))
            for rid in order
        ]

    def _query_unit(self, vector: Vector, space: str) -> npt.NDArray[np.float32]:
        """A query vector at unit length: of the deployment's model's size in its space, of any
        size in a tenant's own (its model's, which the index mapping checks)."""
        if not space:
            return unit(vector, self.dimension, self.model_id)
        return np.asarray(space_vector(vector), dtype=np.float32)

    def _cosines(
        self, query: StoreQuery, record_ids: list[str], query_vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """Exact cosines of records the k-NN query did not return (lexical-only hits), in the
        query's agent and embedding space."""
        if not record_ids:
            return {}
        tenant_id, agent_id, space = query.tenant_id, query.agent_id, query.space
        docs = [
            self._doc_ref(self.alias, doc_id(tenant_id, agent_id, rid), tenant_id, agent_id)
            for rid in record_ids
        ]
        field = space_field(space)
        found = self._mget(docs, "reading vectors", _source_includes=f"{field},tenant_id,agent_id")
        out: dict[str, float] = {}
        for rid, doc in zip(record_ids, found, strict=True):
            source = found_source(doc)
            if not source or not owned(source, tenant_id, agent_id):
                continue
            stored = source.get(VECTOR_FIELD) if not space else (source.get("spaces") or {}).get(space)
            if stored is None:
                continue
            out[rid] = cosine_of(stored, query_vector)
        return out
