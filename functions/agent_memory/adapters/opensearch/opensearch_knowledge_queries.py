"""The knowledge index's documents, ids, filters, request bodies and scripts, as pure functions.

Apart from the I/O (`opensearch_knowledge`) so that every request shape of the knowledge store
can be built and pinned by a test without a cluster (docs/opensearch.md, *Shared knowledge*).

* **Four kinds of document** in one index, told apart by ``kind``: ``document`` (a
  `KnowledgeDocument`, its text in ``document_text``: stored, never searched), ``passage`` (a
  `Passage` with its unit vector), ``tombstone`` (when a document was deleted), ``put`` (a put
  of a document under way).
* **Ids** are scoped by the tenant, like the records': ``tenant:doc:<doc_id>``,
  ``tenant:psg:<passage id>``, ``tenant:tomb:<doc_id>``; no tenant's write can ever overwrite
  another tenant's document (tenant and document ids cannot contain ``:``).
* **Every query filters the tenant** (routing is placement, not security) and the ``kind``.
* Passage reads never return the vector (``_source`` excludes it), document listings never
  return the text (``document_text`` excluded).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_cursors import decode_cursor, invalid_cursor
from agent_memory.adapters.opensearch.opensearch_documents import scoped_id, ts, vector_json
from agent_memory.adapters.opensearch.opensearch_filters import absent, term
from agent_memory.adapters.opensearch.opensearch_index import VECTOR_FIELD
from agent_memory.adapters.opensearch.opensearch_queries import NO_VECTOR, lexical_body
from agent_memory.adapters.opensearch.opensearch_scripts import painless
from agent_memory.knowledge.rules.passages import KnowledgeDocument, Passage
from agent_memory.ports import PassageQuery

DOCUMENT = "document"
PASSAGE = "passage"
TOMBSTONE = "tombstone"
#: A put under way: written (and refreshed) before a put's first passage, deleted after its
#: last request, so a search that sees any of the put's writes sees it too (`PUTS_UNDER_WAY`).
PUT = "put"
#: The most puts under way of one tenant a search is told about; more make every search of
#: the tenant read in a snapshot (`OpenSearchKnowledge.search_passages`).
MAX_PUTS_SEEN = 1000
#: The searched text of a passage, as SQLite's ``knowledge_fts`` has it: its words, its
#: document's title and its heading path, scored as one text (``cross_fields``: one analyzer).
KNOWLEDGE_LEXICAL_FIELDS = ("text", "title", "heading_path")
#: Passages read per page of a document's passages.
PASSAGE_PAGE = 1000
#: The most hits one search list can hold: the k-NN plugin's largest ``k`` and the default
#: ``index.max_result_window``; a larger limit would be refused by the cluster, not searched.
MAX_SEARCH_HITS = 10_000
#: A document's fields that its ``_source`` keeps under another name: the text is not searched.
DOCUMENT_TEXT = "document_text"
NO_DOCUMENT_TEXT = {"excludes": [DOCUMENT_TEXT]}
#: The aggregation of `with_puts_under_way`.
PUTS_UNDER_WAY = "puts_under_way"
#: What a read of a document's current version needs: its owner, kind and version.
OWNER_FIELDS = ("kind", "tenant_id")
VERSION_FIELDS = (*OWNER_FIELDS, "doc_id", "version")
BY_DOC_ID = [{"doc_id": {"order": "asc"}}]
BY_ORDINAL = [{"ordinal": {"order": "asc"}}, {"id": {"order": "asc"}}]
_DOCUMENT_FIELDS = frozenset(KnowledgeDocument.model_fields) - {"text"}
_PASSAGE_FIELDS = frozenset(Passage.model_fields)
_DOCUMENT_TIMES = ("created_at", "updated_at", "last_hit_at")

#: Keep the later deletion: a tombstone only moves forward in time, whatever order deletes land in.
TOMBSTONE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.kind != 'tombstone' || s.tenant_id != params.tenant_id || s.doc_id != params.doc_id) "
    "{ ctx.op = 'noop'; } "
    "else if (s.deleted_at == null || s.deleted_at.compareTo(params.at) < 0) { s.deleted_at = params.at; } "
    "else { ctx.op = 'noop'; }"
)
#: Count that a search returned a passage of the document; only on the tenant's own documents.
#: The last hit only moves later: hits recorded out of order keep the latest (as on SQLite).
DOCUMENT_HITS_SCRIPT = (
    "def s = ctx._source; "
    "if (s.kind != 'document' || s.tenant_id != params.tenant_id) { ctx.op = 'noop'; } "
    "else { s.hits = (s.hits == null ? 0 : s.hits) + 1; "
    "if (s.last_hit_at == null || s.last_hit_at.compareTo(params.at) < 0) { s.last_hit_at = params.at; } }"
)


# -- ids and routing --------------------------------------------------------------------------


def document_doc_id(tenant_id: str, doc_id: str) -> str:
    return scoped_id(tenant_id, "doc", doc_id)


def passage_doc_id(tenant_id: str, passage_id: str) -> str:
    return scoped_id(tenant_id, "psg", passage_id)


def tombstone_doc_id(tenant_id: str, doc_id: str) -> str:
    return scoped_id(tenant_id, "tomb", doc_id)


def put_doc_id(tenant_id: str, doc_id: str) -> str:
    """The marker of a put of the document under way. One per document: a document's writes
    are ordered (its message group), so two puts of it never run at once."""
    return scoped_id(tenant_id, "put", doc_id)


# -- documents ----------------------------------------------------------------------------------


def _day(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def document_source(document: KnowledgeDocument, *, counters: bool) -> dict[str, Any]:
    """The ``_source`` of a document. ``counters``: with ``hits`` and ``last_hit_at``; without
    them, a partial ``_update`` (``doc_as_upsert``) leaves the stored counters as they are, as
    the SQLite store's put keeps them."""
    doc: dict[str, Any] = document.model_dump(mode="json", exclude={"text", "hits", "last_hit_at"})
    doc.update(
        kind=DOCUMENT,
        created_at=ts(document.created_at),
        updated_at=ts(document.updated_at),
        valid_from=_day(document.valid_from),
        valid_until=_day(document.valid_until),
    )
    doc[DOCUMENT_TEXT] = document.text
    if counters:
        doc["hits"] = document.hits
        doc["last_hit_at"] = None if document.last_hit_at is None else ts(document.last_hit_at)
    return doc


def to_document(source: dict[str, Any], *, whole: bool = True) -> KnowledgeDocument:
    """A document from its ``_source`` (counters absent: never counted); ``whole=False``: with
    an empty text, as a listing returns it."""
    fields = {k: v for k, v in source.items() if k in _DOCUMENT_FIELDS and v is not None}
    fields["text"] = str(source.get(DOCUMENT_TEXT) or "") if whole else ""
    fields.setdefault("hits", 0)
    return KnowledgeDocument.model_validate(fields)


def passage_source(passage: Passage, vector: npt.NDArray[np.float32]) -> dict[str, Any]:
    doc: dict[str, Any] = passage.model_dump(mode="json")
    doc.update(
        kind=PASSAGE,
        updated_at=ts(passage.updated_at),
        valid_from=_day(passage.valid_from),
        valid_until=_day(passage.valid_until),
    )
    doc[VECTOR_FIELD] = vector_json(vector)
    return doc


def to_passage(source: dict[str, Any]) -> Passage:
    return Passage.model_validate({k: v for k, v in source.items() if k in _PASSAGE_FIELDS})


def put_source(document: KnowledgeDocument) -> dict[str, Any]:
    return {
        "kind": PUT,
        "tenant_id": document.tenant_id,
        "doc_id": document.doc_id,
        "version": document.version,
        "created_at": ts(document.updated_at),
    }


def tombstone_source(tenant_id: str, doc_id: str, at: datetime) -> dict[str, Any]:
    return {"kind": TOMBSTONE, "tenant_id": tenant_id, "doc_id": doc_id, "deleted_at": ts(at)}


def parse_ts(value: str) -> datetime:
    """A time the store wrote (`opensearch_documents.ts`), back to an aware datetime."""
    return datetime.fromisoformat(value)


def is_kind(source: dict[str, Any] | None, kind: str, tenant_id: str) -> bool:
    """A document read by id is the tenant's, and of the kind asked for: routing is no security."""
    return source is not None and source.get("kind") == kind and source.get("tenant_id") == tenant_id


# -- filters ----------------------------------------------------------------------------------


def tenant_kind(tenant_id: str, kind: str) -> list[dict[str, Any]]:
    """Where every knowledge query starts: the tenant's documents of one kind."""
    return [term("tenant_id", tenant_id), term("kind", kind)]


def doc_passages_filters(tenant_id: str, doc_id: str) -> list[dict[str, Any]]:
    return [*tenant_kind(tenant_id, PASSAGE), term("doc_id", doc_id)]


def valid_on(day: date) -> list[dict[str, Any]]:
    """Passages of documents that hold on ``day``: no bound, or a bound on the right side."""
    on = day.isoformat()
    return [
        {
            "bool": {
                "should": [absent(field), {"range": {field: {op: on}}}],
                "minimum_should_match": 1,
            }
        }
        for field, op in (("valid_from", "lte"), ("valid_until", "gte"))
    ]


def passage_filters(query: PassageQuery) -> list[dict[str, Any]]:
    """Every filter of a `PassageQuery`; the same list goes into the k-NN and the BM25 request.
    Tags: every one of them (one ``term`` each), as the SQLite store's ``EXISTS`` per tag."""
    filters = tenant_kind(query.tenant_id, PASSAGE)
    if query.on is not None:
        filters += valid_on(query.on)
    filters += [term("tags", tag) for tag in dict.fromkeys(query.tags)]
    return filters


def stale_passages_query(tenant_id: str, doc_id: str, keep: list[str]) -> dict[str, Any]:
    """The document's passages that are not among ``keep`` (the passage ids just written): what
    a put removes. By id, not by version, so a put of the same version with fewer passages
    removes the rest too (SQLite deletes every passage of the document before it inserts)."""
    query: dict[str, Any] = {"bool": {"filter": doc_passages_filters(tenant_id, doc_id)}}
    if keep:
        query["bool"]["must_not"] = [{"terms": {"id": keep}}]
    return query


def doc_passages_query(tenant_id: str, doc_id: str) -> dict[str, Any]:
    """Every passage of the document: what a delete removes."""
    return {"bool": {"filter": doc_passages_filters(tenant_id, doc_id)}}


# -- bodies -----------------------------------------------------------------------------------


def passage_lexical_body(words: str, size: int, filters: list[dict[str, Any]]) -> dict[str, Any]:
    """BM25 over `KNOWLEDGE_LEXICAL_FIELDS`, scored as one text (``cross_fields``), with ``filters``."""
    return lexical_body(words, size, filters, KNOWLEDGE_LEXICAL_FIELDS)


def passages_page_body(tenant_id: str, doc_id: str, after: list[Any] | None) -> dict[str, Any]:
    """One page of a document's passages in document order (without vectors), after ``after``."""
    body: dict[str, Any] = {
        "size": PASSAGE_PAGE,
        "_source": NO_VECTOR,
        "query": doc_passages_query(tenant_id, doc_id),
        "sort": BY_ORDINAL,
    }
    if after is not None:
        body["search_after"] = after
    return body


def with_puts_under_way(body: dict[str, Any], tenant_id: str) -> dict[str, Any]:
    """``body`` that also says, from the same snapshot as its hits, which of the tenant's
    documents have a put under way (a ``global`` aggregation: it ignores the query)."""
    under_way = {
        "filter": {"bool": {"filter": tenant_kind(tenant_id, PUT)}},
        "aggs": {"docs": {"terms": {"field": "doc_id", "size": MAX_PUTS_SEEN}}},
    }
    return {**body, "aggs": {PUTS_UNDER_WAY: {"global": {}, "aggs": {"of_tenant": under_way}}}}


def puts_under_way(response: dict[str, Any]) -> set[str] | None:
    """The documents `with_puts_under_way` found a put of; None when it may not have said all."""
    found = response.get("aggregations", {}).get(PUTS_UNDER_WAY, {}).get("of_tenant", {}).get("docs")
    if not isinstance(found, dict) or found.get("sum_other_doc_count", 0):
        return None
    return {str(bucket["key"]) for bucket in found.get("buckets", [])}


def document_versions_body(tenant_id: str, doc_ids: list[str]) -> dict[str, Any]:
    """The tenant's documents among ``doc_ids``, only what says their current version."""
    return {
        "size": len(doc_ids),
        "_source": list(VERSION_FIELDS),
        "query": {"bool": {"filter": [*tenant_kind(tenant_id, DOCUMENT), {"terms": {"doc_id": doc_ids}}]}},
    }


def current_versions(hits: list[dict[str, Any]], tenant_id: str) -> dict[str, str]:
    """doc_id -> the version it names, from `document_versions_body`'s hits (the tenant's only)."""
    return {
        str(hit["_source"]["doc_id"]): str(hit["_source"].get("version"))
        for hit in hits
        if is_kind(hit["_source"], DOCUMENT, tenant_id)
    }


def passage_vectors_body(tenant_id: str, passage_ids: list[str]) -> dict[str, Any]:
    """The tenant's passages among ``passage_ids``, only their id and vector."""
    return {
        "size": len(passage_ids),
        "_source": [VECTOR_FIELD, *OWNER_FIELDS, "id"],
        "query": {"bool": {"filter": [*tenant_kind(tenant_id, PASSAGE), {"terms": {"id": passage_ids}}]}},
    }


def documents_page_body(tenant_id: str, size: int, after: str | None) -> dict[str, Any]:
    """One page of the tenant's documents by id (without their text), after the id ``after``."""
    body: dict[str, Any] = {
        "size": size,
        "_source": NO_DOCUMENT_TEXT,
        "query": {"bool": {"filter": tenant_kind(tenant_id, DOCUMENT)}},
        "sort": BY_DOC_ID,
    }
    if after is not None:
        body["search_after"] = [after]
    return body


def delete_by_query_params(tenant_id: str, refresh: bool) -> dict[str, Any]:
    """One document's passages live on the tenant's shard: routed, no slices; waiting for the
    ``deleted`` count (`delete_document` returns it); ``conflicts=proceed`` skips a passage a
    concurrent put of the same version re-wrote (it is the new one)."""
    params: dict[str, Any] = {"routing": tenant_id, "conflicts": "proceed", "wait_for_completion": "true"}
    if refresh:
        params["refresh"] = "true"  # delete-by-query takes true/false only
    return params


def tombstone_update_body(tenant_id: str, doc_id: str, at: datetime) -> dict[str, Any]:
    """An upsert of the tombstone: made at ``at``, or moved to ``at`` if that is later."""
    return {
        "script": painless(TOMBSTONE_SCRIPT, {"tenant_id": tenant_id, "doc_id": doc_id, "at": ts(at)}),
        "upsert": tombstone_source(tenant_id, doc_id, at),
    }


def hits_update_body(tenant_id: str, at: datetime) -> dict[str, Any]:
    """One scripted ``_update`` counting a hit on a document (`DOCUMENT_HITS_SCRIPT`)."""
    return {"script": painless(DOCUMENT_HITS_SCRIPT, {"tenant_id": tenant_id, "at": ts(at)})}


# -- cursors ----------------------------------------------------------------------------------


def documents_binding(tenant_id: str) -> dict[str, Any]:
    """What a document listing's cursor is bound to: the tenant (another tenant's is refused)."""
    return {"t": tenant_id, "w": "documents"}


def documents_after(cursor: str, tenant_id: str) -> str:
    """The last document id of the page a cursor was issued after, or a 400."""
    after = decode_cursor(cursor, documents_binding(tenant_id)).get("s")
    if not isinstance(after, list) or len(after) != 1 or not isinstance(after[0], str):
        raise invalid_cursor()
    return after[0]
