"""Request shapes of the OpenSearch knowledge store (`opensearch_knowledge`), field by field.

The knowledge index is a sibling of the records index (``{alias}-knowledge``). Pinned here: its
mapping and its bootstrap; that every query filters the tenant (and the ``kind``), that every
request is routed by the tenant, that ids are tenant-scoped, that the k-NN filter sits inside
the ``knn`` clause; how a put replaces a document's passages and a delete leaves a tombstone.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses shaped like the OpenSearch documentation's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from fnmatch import fnmatch
from typing import Any

import numpy as np
import pytest
from opensearchpy import ConnectionError as OpenSearchConnectionError
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    ALIAS,
    DIM,
    INDEX,
    MODEL,
    NOW,
    Cluster,
    mapping_response,
    search_response,
    store,
    unit_vector,
)

from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap, bootstrap_knowledge
from agent_memory.adapters.opensearch.opensearch_cursors import encode_cursor
from agent_memory.adapters.opensearch.opensearch_documents import vector_json
from agent_memory.adapters.opensearch.opensearch_index import (
    ANALYSIS,
    KNOWLEDGE_SCHEMA_VERSION,
    TEXT_ANALYZER,
    TEXT_SEARCH_ANALYZER,
    events_index_name,
    knowledge_alias_name,
    knowledge_index_body,
    knowledge_index_name,
    records_index_body,
    records_index_name,
)
from agent_memory.adapters.opensearch.opensearch_knowledge_queries import (
    DOCUMENT_HITS_SCRIPT,
    MAX_SEARCH_HITS,
    PASSAGE_PAGE,
    TOMBSTONE_SCRIPT,
    document_source,
    passage_source,
)
from agent_memory.adapters.opensearch.opensearch_roles import data_index_patterns
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.knowledge.rules.passages import KnowledgeDocument, Passage, document_hash, passages_of
from agent_memory.ports import PassageQuery, StoredPassage

KALIAS = f"{ALIAS}-knowledge"
KINDEX = f"{ALIAS}-knowledge-v{KNOWLEDGE_SCHEMA_VERSION}"
T0 = datetime(2026, 11, 20, 9, 30, 0, 250000, tzinfo=UTC)
TEXT = "# Runbook\n\nFailover starts with DNS.\n\n## Rollback\n\nPoint the record back."
TENANT_FILTER = {"term": {"tenant_id": "t1"}}


def document(doc_id: str = "runbook", version: str = "v2", **kw: Any) -> KnowledgeDocument:
    text = kw.pop("text", TEXT)
    fields: dict[str, Any] = {
        "tenant_id": "t1",
        "doc_id": doc_id,
        "version": version,
        "title": "Runbook",
        "text": text,
        "content_hash": document_hash(text),
        "tags": ["ops", "dns"],
        "valid_from": date(2026, 1, 1),
        "created_at": T0,
        "updated_at": T0,
    }
    doc = KnowledgeDocument(**(fields | kw))
    return doc.model_copy(update={"passages": len(passages_of(doc))})


def stored(doc: KnowledgeDocument) -> list[StoredPassage]:
    return [StoredPassage(p, unit_vector(1.0, float(p.ordinal))) for p in passages_of(doc)]


def passage_hit(p: Passage, score: float, sort: list[Any] | None = None) -> dict[str, Any]:
    source = passage_source(p, unit_vector(1.0))
    del source["vector"]  # searches exclude it
    out: dict[str, Any] = {"_index": KINDEX, "_id": f"t1:psg:{p.id}", "_score": score, "_source": source}
    if sort is not None:
        out["sort"] = sort
    return out


PIT = "pit-of-t1"
#: A hit of the document's earlier version.
OLD_HIT = {
    "_index": "x",
    "_id": "t1:psg:psg_old",
    "_score": 1.0,
    "_source": {
        **passage_source(passages_of(document())[0], unit_vector(1.0)),
        "id": "psg_old",
        "version": "v1",
    },
}
PIT_BODY = {"id": PIT, "keep_alive": "30s"}


def pit_opened() -> dict[str, Any]:
    return {"pit_id": PIT, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}


def pit_closed() -> dict[str, Any]:
    return {"pits": [{"pit_id": PIT, "successful": True}]}


def msearch_response(*responses: dict[str, Any]) -> dict[str, Any]:
    return {"took": 3, "responses": [{**r, "status": 200} for r in responses]}


def watched(response: dict[str, Any], *under_way: str) -> dict[str, Any]:
    """A search response with the aggregation of the puts under way (of documents ``under_way``)."""
    buckets = [{"key": doc_id, "doc_count": 1} for doc_id in under_way]
    docs = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": buckets}
    of_tenant = {"doc_count": len(buckets), "docs": docs}
    return {**response, "aggregations": {"puts_under_way": {"doc_count": 9, "of_tenant": of_tenant}}}


def document_hit(doc: KnowledgeDocument) -> dict[str, Any]:
    source = {"kind": "document", "tenant_id": doc.tenant_id, "doc_id": doc.doc_id, "version": doc.version}
    return {"_index": KINDEX, "_id": f"t1:doc:{doc.doc_id}", "_score": 0.0, "_source": source}


def assert_one_snapshot(sent: list[Any]) -> None:
    """A read opened a point in time on the tenant's shard first, searched only in it (empty
    headers: index and routing are the snapshot's), and closed it last."""
    opened, *searches, closed = sent
    assert (opened.method, opened.path) == ("POST", f"/{KALIAS}/_search/point_in_time")
    assert opened.params == {"keep_alive": "30s", "routing": "t1"}
    for search in searches:
        assert (search.method, search.path) == ("POST", "/_msearch")
        assert search.lines[0::2] == [{}] * (len(search.lines) // 2)
        assert all(body["pit"] == PIT_BODY for body in search.lines[1::2])
    assert (closed.method, closed.path, closed.body) == (
        "DELETE",
        "/_search/point_in_time",
        {"pit_id": [PIT]},
    )


def bulk_items(*results: tuple[str, str, int]) -> dict[str, Any]:
    return {
        "took": 4,
        "errors": False,
        "items": [{op: {"_index": KINDEX, "result": r, "status": s}} for op, r, s in results],
    }


def by_query(deleted: int) -> dict[str, Any]:
    return {"took": 9, "timed_out": False, "total": deleted, "deleted": deleted, "batches": 1, "failures": []}


def filters_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = body["query"]["bool"]["filter"]
    return filters


# ------------------------------------------------------------------------------------------------
# The index and its bootstrap
# ------------------------------------------------------------------------------------------------


def test_the_knowledge_index_is_a_versioned_sibling_of_the_records_index() -> None:
    assert knowledge_alias_name("agent-memory") == "agent-memory-knowledge"
    assert knowledge_index_name("agent-memory") == f"agent-memory-knowledge-v{KNOWLEDGE_SCHEMA_VERSION}"


def test_the_knowledge_mapping_shares_the_records_vector_space_and_analysis() -> None:
    # WHEN
    engine = "lucene"
    body = knowledge_index_body(384, "amazon.titan-embed-text-v2:0")

    # THEN the same vector field (engine, innerproduct, HNSW parameters) and analysis as records
    records = records_index_body(384, "amazon.titan-embed-text-v2:0")
    assert body["settings"] == records["settings"] == {"index": {"knn": True, "analysis": ANALYSIS}}
    props = body["mappings"]["properties"]
    assert props["vector"] == records["mappings"]["properties"]["vector"]
    assert props["vector"]["method"]["space_type"] == "innerproduct"
    assert body["mappings"]["_meta"] == {
        "kind": "knowledge",
        "schema_version": KNOWLEDGE_SCHEMA_VERSION,
        "embedding_model_id": "amazon.titan-embed-text-v2:0",
        "dimension": 384,
        "engine": engine,
        "space_type": "innerproduct",
    }
    assert body["mappings"]["dynamic"] == "strict"
    assert body["mappings"]["_routing"] == {"required": True}


def test_every_document_and_passage_field_is_mapped() -> None:
    # GIVEN
    props = knowledge_index_body(DIM, MODEL)["mappings"]["properties"]

    # WHEN / THEN dynamic strict would refuse a field missing here: every field a put writes is mapped
    doc = document()
    written = set(document_source(doc, counters=True)) | set(
        passage_source(passages_of(doc)[0], unit_vector(1.0))
    )
    written |= {"deleted_at"}  # tombstones
    assert written <= set(props)
    for name in ("kind", "id", "tenant_id", "doc_id", "version", "tags", "format", "content_hash"):
        assert props[name] == {"type": "keyword"}, name
    for name in ("valid_from", "valid_until", "created_at", "updated_at", "last_hit_at", "deleted_at"):
        assert props[name] == {"type": "date"}, name
    for name in ("text", "title", "heading_path"):  # searched as the records' text is
        assert props[name] == {
            "type": "text",
            "analyzer": TEXT_ANALYZER,
            "search_analyzer": TEXT_SEARCH_ANALYZER,
        }
    # AND a document's whole text is stored, never indexed (its passages are what is searched)
    assert props["document_text"] == {"type": "text", "index": False}
    for name in ("passages", "start", "end", "ordinal", "hits"):
        assert props[name] == {"type": "integer"}, name


def test_bootstrap_creates_the_knowledge_index_with_its_alias_after_the_others(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN an empty cluster
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": INDEX})
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": "mem-events-v1"})
    cluster.reply(mapping_response())
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": KINDEX})
    cluster.reply({KINDEX: {"mappings": knowledge_index_body(DIM, MODEL)["mappings"]}})

    # WHEN
    result = bootstrap(client, ALIAS, DIM, MODEL, engine="lucene")

    # THEN the records and events requests as ever, then the knowledge index and its check
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent][7:] == [
        ("HEAD", f"/_alias/{KALIAS}"),
        ("HEAD", f"/{KINDEX}"),
        ("PUT", f"/{KINDEX}"),
        ("GET", f"/{KALIAS}/_mapping"),
    ]
    create = cluster.sent[9].body
    assert create["aliases"] == {KALIAS: {"is_write_index": True}}
    assert create["mappings"] == knowledge_index_body(DIM, MODEL, "lucene")["mappings"]
    assert create["settings"] == {"index": {"knn": True, "analysis": ANALYSIS}}
    assert (result.knowledge_alias, result.knowledge_index, result.knowledge_created) == (
        KALIAS,
        KINDEX,
        True,
    )


def test_bootstrap_of_an_existing_deployment_adds_the_missing_knowledge_index(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the records and events indexes of a deployment made before the knowledge index
    cluster.reply().reply().reply(mapping_response())
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": KINDEX})
    cluster.reply({KINDEX: {"mappings": knowledge_index_body(DIM, MODEL)["mappings"]}})

    # WHEN bootstrapping again, as every deployment does
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN the others are only checked, and the knowledge index is created with its alias
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("HEAD", f"/_alias/{ALIAS}"),
        ("HEAD", f"/_alias/{ALIAS}-events"),
        ("GET", f"/{ALIAS},{ALIAS}-events/_mapping"),
        ("HEAD", f"/_alias/{KALIAS}"),
        ("HEAD", f"/{KINDEX}"),
        ("PUT", f"/{KINDEX}"),
        ("GET", f"/{KALIAS}/_mapping"),
    ]
    assert cluster.sent[5].body["mappings"] == knowledge_index_body(DIM, MODEL)["mappings"]
    assert not result.created and not result.events_created
    assert (result.knowledge_index, result.knowledge_created) == (KINDEX, True)


def test_bootstrap_knowledge_over_an_existing_index_only_checks_it(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the alias exists
    cluster.reply().reply({KINDEX: {"mappings": knowledge_index_body(DIM, MODEL)["mappings"]}})

    # WHEN
    made = bootstrap_knowledge(client, ALIAS, DIM, MODEL)

    # THEN
    cluster.done()
    assert [s.method for s in cluster.sent] == ["HEAD", "GET"]
    assert not made.created


def test_bootstrap_knowledge_refuses_an_index_of_another_model(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply().reply({KINDEX: {"mappings": knowledge_index_body(384, "other-model")["mappings"]}})

    with pytest.raises(ConfigurationError, match="other-model") as exc:
        bootstrap_knowledge(client, ALIAS, DIM, MODEL)
    assert "384" in exc.value.message


def test_bootstrap_knowledge_refuses_an_index_it_did_not_make(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    foreign = knowledge_index_body(DIM, MODEL)["mappings"]
    del foreign["_meta"]
    cluster.reply().reply({KINDEX: {"mappings": foreign}})

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="not made by"):
        bootstrap_knowledge(client, ALIAS, DIM, MODEL)


def test_an_alias_that_would_collide_with_a_knowledge_alias_is_refused(client: OpenSearch) -> None:
    with pytest.raises(ConfigurationError, match="-knowledge"):
        bootstrap(client, "mem-knowledge", DIM, MODEL)


def test_the_data_role_covers_every_index_of_the_store() -> None:
    patterns = data_index_patterns("agent-memory")
    for name in (
        "agent-memory",
        records_index_name("agent-memory"),
        "agent-memory-events",
        events_index_name("agent-memory"),
        knowledge_alias_name("agent-memory"),
        knowledge_index_name("agent-memory"),
    ):
        assert any(fnmatch(name, p) for p in patterns), name


# ------------------------------------------------------------------------------------------------
# put_document
# ------------------------------------------------------------------------------------------------


def test_put_document_bulks_the_passages_then_the_document_then_deletes_the_others(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a document of two passages
    doc = document()
    items = stored(doc)
    assert len(items) == 2
    cluster.reply(bulk_items(("index", "created", 201)))
    cluster.reply(bulk_items(("index", "created", 201), ("index", "created", 201)))
    cluster.reply(bulk_items(("update", "created", 201)))
    cluster.reply(by_query(3))
    cluster.reply(bulk_items(("delete", "deleted", 200)))

    # WHEN
    store(client, refresh=True).put_document(doc, items)

    # THEN first the marker of a put under way, refreshed whatever the store's refresh
    cluster.done()
    marker, put, put_doc, clean, unmark = cluster.sent
    assert marker.params == {"require_alias": "true", "refresh": "true"}
    assert marker.lines == [
        {"index": {"_index": KALIAS, "_id": "t1:put:runbook", "routing": "t1"}},
        {
            "kind": "put",
            "tenant_id": "t1",
            "doc_id": "runbook",
            "version": "v2",
            "created_at": "2026-11-20T09:30:00.250000Z",
        },
    ]
    # AND a _bulk of the passages, each indexed under its tenant-scoped id, routed by the
    # tenant; then one of the document as a partial update (its hit counters are kept), so the
    # document names the new version only once its passages are searchable; each with the
    # store's refresh
    assert (put.method, put.path) == (put_doc.method, put_doc.path) == ("POST", "/_bulk")
    assert put.params == put_doc.params == {"require_alias": "true", "refresh": "true"}
    first, first_doc, second, _ = put.lines
    doc_action, doc_body = put_doc.lines
    assert first == {"index": {"_index": KALIAS, "_id": f"t1:psg:{items[0].passage.id}", "routing": "t1"}}
    assert second["index"]["_id"] == f"t1:psg:{items[1].passage.id}"
    assert first_doc["kind"] == "passage"
    assert (
        first_doc["tenant_id"] == "t1" and first_doc["doc_id"] == "runbook" and first_doc["version"] == "v2"
    )
    assert first_doc["heading_path"] == items[0].passage.heading_path
    assert first_doc["text"] == items[0].passage.text
    assert first_doc["valid_from"] == "2026-01-01" and first_doc["valid_until"] is None
    assert first_doc["updated_at"] == "2026-11-20T09:30:00.250000Z"
    assert first_doc["vector"] == vector_json(unit_vector(1.0, 0.0))
    assert np.linalg.norm(second_doc_vector := np.asarray(put.lines[3]["vector"])) == pytest.approx(1.0)
    assert second_doc_vector[1] > 0  # its own vector, normalised
    assert doc_action == {
        "update": {"_index": KALIAS, "_id": "t1:doc:runbook", "routing": "t1", "retry_on_conflict": 3}
    }
    assert doc_body["doc_as_upsert"] is True
    source = doc_body["doc"]
    assert source["kind"] == "document" and source["document_text"] == TEXT
    assert "text" not in source and "hits" not in source and "last_hit_at" not in source
    assert source["passages"] == 2 and source["tags"] == ["ops", "dns"]
    # AND then every other passage of the document goes: routed, the tenant filtered, by passage id
    assert (clean.method, clean.path) == ("POST", f"/{KALIAS}/_delete_by_query")
    assert clean.params == {
        "routing": "t1",
        "conflicts": "proceed",
        "wait_for_completion": "true",
        "refresh": "true",
    }
    assert clean.body == {
        "query": {
            "bool": {
                "filter": [TENANT_FILTER, {"term": {"kind": "passage"}}, {"term": {"doc_id": "runbook"}}],
                "must_not": [{"terms": {"id": [i.passage.id for i in items]}}],
            }
        }
    }
    # AND last, the put's marker goes
    assert unmark.lines == [{"delete": {"_index": KALIAS, "_id": "t1:put:runbook", "routing": "t1"}}]


def test_a_put_that_fails_half_way_leaves_its_marker(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a cluster that takes the marker and refuses the passages
    doc = document()
    cluster.reply(bulk_items(("index", "created", 201)))
    cluster.reply({"error": {"type": "mapper_parsing_exception"}}, status=400)

    # WHEN / THEN the put fails and sends nothing more: searches of the document keep reading
    # in a snapshot, which answers none of the passages it stored
    with pytest.raises(ConfigurationError):
        store(client).put_document(doc, stored(doc))
    assert [s.path for s in cluster.sent] == ["/_bulk", "/_bulk"]


def test_put_document_without_passages_removes_every_passage_of_the_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    doc = document(text="   ")
    cluster.reply(bulk_items(("index", "created", 201))).reply(bulk_items(("update", "updated", 200)))
    cluster.reply(by_query(2)).reply(bulk_items(("delete", "deleted", 200)))

    # WHEN
    store(client).put_document(doc, [])

    # THEN
    assert len(cluster.sent[1].lines) == 2  # the document alone
    assert "must_not" not in cluster.sent[2].body["query"]["bool"]
    assert cluster.sent[2].params == {"routing": "t1", "conflicts": "proceed", "wait_for_completion": "true"}


def test_put_document_refuses_bad_input_before_any_request(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a vector of the wrong size, and passages of another tenant's document
    doc = document()
    wrong_size = [StoredPassage(passages_of(doc)[0], np.ones(DIM + 1, dtype=np.float32))]
    other = document(tenant_id="t2")

    # WHEN / THEN each put is refused
    with pytest.raises(ConfigurationError, match="dimension"):
        store(client).put_document(doc, wrong_size)
    with pytest.raises(ValidationFailedError, match="not of the document"):
        store(client).put_document(doc, stored(other))
    # AND nothing was sent
    assert cluster.sent == []


# ------------------------------------------------------------------------------------------------
# delete_document, deleted_at
# ------------------------------------------------------------------------------------------------


def test_delete_document_removes_the_passages_then_the_document_and_upserts_the_tombstone(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(by_query(2))
    cluster.reply(
        bulk_items(("delete", "deleted", 200), ("delete", "not_found", 404), ("update", "created", 201))
    )

    # WHEN
    removed = store(client).delete_document("t1", "runbook", NOW)

    # THEN the passages removed are counted
    assert removed == 2
    clean, bulk = cluster.sent
    assert clean.path == f"/{KALIAS}/_delete_by_query"
    assert clean.params["routing"] == "t1"
    assert clean.body == {
        "query": {
            "bool": {
                "filter": [TENANT_FILTER, {"term": {"kind": "passage"}}, {"term": {"doc_id": "runbook"}}]
            }
        }
    }
    # AND the document, a failed put's marker if any, and the tombstone in one bulk: the
    # tombstone only ever moves later
    assert bulk.lines == [
        {"delete": {"_index": KALIAS, "_id": "t1:doc:runbook", "routing": "t1"}},
        {"delete": {"_index": KALIAS, "_id": "t1:put:runbook", "routing": "t1"}},
        {"update": {"_index": KALIAS, "_id": "t1:tomb:runbook", "routing": "t1", "retry_on_conflict": 3}},
        {
            "script": {
                "source": TOMBSTONE_SCRIPT,
                "lang": "painless",
                "params": {"tenant_id": "t1", "doc_id": "runbook", "at": "2026-11-22T12:00:00.000000Z"},
            },
            "upsert": {
                "kind": "tombstone",
                "tenant_id": "t1",
                "doc_id": "runbook",
                "deleted_at": "2026-11-22T12:00:00.000000Z",
            },
        },
    ]


def test_the_tombstone_script_guards_owner_and_keeps_the_later_deletion() -> None:
    assert "s.tenant_id != params.tenant_id" in TOMBSTONE_SCRIPT
    assert "s.kind != 'tombstone'" in TOMBSTONE_SCRIPT
    assert "s.deleted_at.compareTo(params.at) < 0" in TOMBSTONE_SCRIPT


def test_delete_document_of_an_unknown_document_still_leaves_a_tombstone(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply(by_query(0))
    cluster.reply(
        {"errors": False, "items": [{"delete": {"result": "not_found", "status": 404}}, {"update": {}}]}
    )

    assert store(client).delete_document("t1", "nope", NOW) == 0  # a missing document is no error


def test_deleted_at_reads_the_tenants_tombstone_by_id(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    tomb = {
        "kind": "tombstone",
        "tenant_id": "t1",
        "doc_id": "runbook",
        "deleted_at": "2026-11-22T12:00:00.000001Z",
    }
    cluster.reply({"docs": [{"found": True, "_source": tomb}]})

    # WHEN
    at = store(client).deleted_at("t1", "runbook")

    # THEN
    assert at == NOW + timedelta(microseconds=1)
    assert cluster.sent[0].body == {"docs": [{"_index": KALIAS, "_id": "t1:tomb:runbook", "routing": "t1"}]}


@pytest.mark.parametrize(
    "found",
    [
        {"found": False},
        {
            "found": True,
            "_source": {"kind": "tombstone", "tenant_id": "t2", "doc_id": "runbook", "deleted_at": "x"},
        },
        {"found": True, "_source": {"kind": "document", "tenant_id": "t1", "doc_id": "runbook"}},
    ],
)
def test_deleted_at_is_none_without_a_tombstone_of_the_tenant(
    client: OpenSearch, cluster: Cluster, found: dict[str, Any]
) -> None:
    cluster.reply({"docs": [found]})

    assert store(client).deleted_at("t1", "runbook") is None


# ------------------------------------------------------------------------------------------------
# Reads
# ------------------------------------------------------------------------------------------------


def test_get_document_is_one_routed_mget_and_reads_the_text_back(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the document as a put stored it, counted since
    doc = document()
    source = document_source(doc, counters=False) | {"hits": 3, "last_hit_at": "2026-11-21T08:00:00.000000Z"}
    cluster.reply({"docs": [{"_index": KINDEX, "_id": "t1:doc:runbook", "found": True, "_source": source}]})

    # WHEN
    got = store(client).get_document("t1", "runbook")

    # THEN
    assert cluster.sent[0].body == {"docs": [{"_index": KALIAS, "_id": "t1:doc:runbook", "routing": "t1"}]}
    assert got == doc.model_copy(update={"hits": 3, "last_hit_at": datetime(2026, 11, 21, 8, tzinfo=UTC)})


@pytest.mark.parametrize("tenant", ["t2", None])
def test_get_document_never_returns_another_tenants_document(
    client: OpenSearch, cluster: Cluster, tenant: str | None
) -> None:
    source = document_source(document(), counters=False) | {"tenant_id": tenant}
    cluster.reply({"docs": [{"found": True, "_source": source}]})

    assert store(client).get_document("t1", "runbook") is None


def test_list_documents_pages_by_doc_id_without_the_text_and_a_cursor_bound_to_the_tenant(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN three documents, two per page
    docs = [document(f"doc-{i}") for i in range(3)]

    def listed(d: KnowledgeDocument) -> dict[str, Any]:
        source = document_source(d, counters=False)
        del source["document_text"]  # excluded from _source
        return {"_id": f"t1:doc:{d.doc_id}", "_source": source, "sort": [d.doc_id]}

    cluster.reply(search_response(*(listed(d) for d in docs)))

    # WHEN
    page = store(client).list_documents("t1", limit=2)

    # THEN
    sent = cluster.sent[0]
    assert (sent.path, sent.params) == (f"/{KALIAS}/_search", {"routing": "t1"})
    assert sent.body == {
        "size": 3,
        "_source": {"excludes": ["document_text"]},
        "query": {"bool": {"filter": [TENANT_FILTER, {"term": {"kind": "document"}}]}},
        "sort": [{"doc_id": {"order": "asc"}}],
    }
    assert [d.doc_id for d in page.documents] == ["doc-0", "doc-1"]
    assert all(d.text == "" for d in page.documents)
    assert page.next_cursor is not None

    # WHEN the next page is asked for
    cluster.reply(search_response(listed(docs[2])))
    last = store(client).list_documents("t1", cursor=page.next_cursor, limit=2)

    # THEN it starts after the last id of the first page, and is the last page
    assert cluster.sent[1].body["search_after"] == ["doc-1"]
    assert [d.doc_id for d in last.documents] == ["doc-2"]
    assert last.next_cursor is None


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        encode_cursor({"t": "t2", "w": "documents", "s": ["doc-1"]}),
        encode_cursor({"t": "t1"}),
    ],
)
def test_a_forged_or_foreign_documents_cursor_is_refused_before_any_request(
    client: OpenSearch, cluster: Cluster, cursor: str
) -> None:
    with pytest.raises(ValidationFailedError):
        store(client).list_documents("t1", cursor=cursor)

    assert cluster.sent == []


def test_passages_reads_the_documents_passages_by_ordinal_in_pages(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the document at v2, a first page that is full, then one more passage and one of
    # another version (a put under way: not the version the document names)
    doc = document()
    first = passages_of(doc)[0]
    full = [
        passage_hit(first.model_copy(update={"ordinal": i}), 0.0, sort=[i, f"psg_{i}"])
        for i in range(PASSAGE_PAGE)
    ]
    old = first.model_copy(update={"id": "psg_old", "version": "v1"})
    cluster.reply(pit_opened()).reply(msearch_response(search_response(document_hit(doc))))
    cluster.reply(msearch_response(search_response(*full)))
    cluster.reply(
        msearch_response(
            search_response(
                passage_hit(first, 0.0, sort=[PASSAGE_PAGE, "z"]),
                passage_hit(old, 0.0, sort=[PASSAGE_PAGE, "zz"]),
            )
        )
    )
    cluster.reply(pit_closed())

    # WHEN
    out = store(client).passages("t1", "runbook")

    # THEN every page, and the document's version, read in one snapshot
    assert len(out) == PASSAGE_PAGE + 1 and {p.version for p in out} == {"v2"}
    assert_one_snapshot(cluster.sent)
    _, versions, page1, page2, _ = cluster.sent
    assert versions.lines[1] == {
        "size": 1,
        "_source": ["kind", "tenant_id", "doc_id", "version"],
        "query": {
            "bool": {
                "filter": [TENANT_FILTER, {"term": {"kind": "document"}}, {"terms": {"doc_id": ["runbook"]}}]
            }
        },
        "pit": PIT_BODY,
    }
    assert page1.lines[1] == {
        "size": PASSAGE_PAGE,
        "_source": {"excludes": ["vector", "spaces"]},
        "query": {
            "bool": {
                "filter": [TENANT_FILTER, {"term": {"kind": "passage"}}, {"term": {"doc_id": "runbook"}}]
            }
        },
        "sort": [{"ordinal": {"order": "asc"}}, {"id": {"order": "asc"}}],
        "pit": PIT_BODY,
    }
    assert page2.lines[1]["search_after"] == [PASSAGE_PAGE - 1, f"psg_{PASSAGE_PAGE - 1}"]


def test_passages_of_a_document_not_in_the_snapshot_are_none(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN no document (never put, deleted, or its first put not yet whole)
    cluster.reply(pit_opened()).reply(msearch_response(search_response())).reply(pit_closed())

    # WHEN / THEN no passage page is even read
    assert store(client).passages("t1", "runbook") == []
    assert len(cluster.sent) == 3


# ------------------------------------------------------------------------------------------------
# search_passages
# ------------------------------------------------------------------------------------------------


def test_search_passages_filters_inside_the_knn_clause_and_runs_bm25_in_the_same_msearch(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN three passages: one k-NN hit (score 1.8 = cosine 0.8), one in both lists, one lexical only
    doc = document(text="# A\n\none\n\n# B\n\ntwo\n\n# C\n\nthree")
    a, b, c = passages_of(doc)
    knn = search_response(passage_hit(a, 1.8), passage_hit(b, 1.25))
    bm25 = search_response(passage_hit(b, 4.0), passage_hit(c, 2.0))
    cluster.reply(msearch_response(watched(knn), watched(bm25)))
    stored_c = unit_vector(1.0, 1.0)  # cosine to the query (1, 0, ...) = 0.7071
    cluster.reply(
        {
            "docs": [
                {
                    "found": True,
                    "_source": {"tenant_id": "t1", "kind": "passage", "vector": stored_c.tolist()},
                }
            ]
        }
    )
    query = PassageQuery(
        tenant_id="t1",
        vector=unit_vector(2.0),
        text="How does the failover start?",
        on=date(2026, 6, 1),
        tags=("ops", "dns"),
        limit=30,
    )

    # WHEN
    candidates = store(client).search_passages(query)

    # THEN one routed _msearch on the knowledge alias: k-NN with every filter inside the clause
    sent = cluster.sent[0]
    assert (sent.method, sent.path) == ("POST", "/_msearch")
    header, knn_body, header2, bm25_body = sent.lines
    assert header == header2 == {"index": KALIAS, "routing": "t1"}
    assert list(knn_body["query"]) == ["knn"]  # no bool around it: no post-filtering
    assert knn_body["size"] == 30 and knn_body["_source"] == {"excludes": ["vector", "spaces"]}
    clause = knn_body["query"]["knn"]["vector"]
    assert clause["k"] == 30
    assert np.allclose(clause["vector"], unit_vector(1.0))  # normalised
    filters = clause["filter"]["bool"]["filter"]
    assert filters == [
        TENANT_FILTER,
        {"term": {"kind": "passage"}},
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "valid_from"}}]}},
                    {"range": {"valid_from": {"lte": "2026-06-01"}}},
                ],
                "minimum_should_match": 1,
            }
        },
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "valid_until"}}]}},
                    {"range": {"valid_until": {"gte": "2026-06-01"}}},
                ],
                "minimum_should_match": 1,
            }
        },
        {"term": {"tags": "ops"}},  # every tag, not any of them
        {"term": {"tags": "dns"}},
    ]
    # AND BM25 over the passage's text, title and headings, with the very same filters
    assert filters_of(bm25_body) == filters
    assert bm25_body["query"]["bool"]["must"] == [
        {
            "multi_match": {
                "query": "how does the failover start",
                "fields": ["text", "title", "heading_path"],
                "type": "cross_fields",
            }
        }
    ]
    # AND each search says, from its own snapshot, which of the tenant's documents have a put
    # under way (none: the hits are answered as they are)
    for body in (knn_body, bm25_body):
        assert body["aggs"] == {
            "puts_under_way": {
                "global": {},
                "aggs": {
                    "of_tenant": {
                        "filter": {"bool": {"filter": [TENANT_FILTER, {"term": {"kind": "put"}}]}},
                        "aggs": {"docs": {"terms": {"field": "doc_id", "size": 1000}}},
                    }
                },
            }
        }
    # AND the lexical-only hit's vector is read, routed, to compute its exact cosine
    assert cluster.sent[1].body == {"docs": [{"_index": KALIAS, "_id": f"t1:psg:{c.id}", "routing": "t1"}]}
    assert cluster.sent[1].params == {"_source_includes": "vector,tenant_id,kind"}
    assert len(cluster.sent) == 2
    # AND the candidates in fused order, cosines from the scores, lexical scaled to the best
    assert [x.passage.id for x in candidates] == [a.id, b.id, c.id]
    assert candidates[0].similarity == pytest.approx(0.8)
    assert candidates[1].similarity == pytest.approx(0.25)
    assert candidates[2].similarity == pytest.approx(1 / np.sqrt(2), abs=1e-6)
    assert [x.lexical for x in candidates] == [None, 1.0, 0.5]
    assert candidates[0].passage == a


def test_search_passages_by_words_alone_sends_only_bm25(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    doc = document()
    p = passages_of(doc)[0]
    cluster.reply(msearch_response(watched(search_response(passage_hit(p, 3.0)))))

    # WHEN
    out = store(client).search_passages(PassageQuery(tenant_id="t1", text="failover"))

    # THEN
    header, body = cluster.sent[0].lines
    assert header == {"index": KALIAS, "routing": "t1"}
    assert filters_of(body) == [TENANT_FILTER, {"term": {"kind": "passage"}}]
    assert [(x.passage.id, x.similarity, x.lexical) for x in out] == [(p.id, None, 1.0)]
    assert len(cluster.sent) == 1  # no vector: no cosine to read


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(lambda hits: watched(hits, "runbook"), id="a put of the document under way"),
        pytest.param(lambda hits: hits, id="no word of the puts under way"),
        pytest.param(
            lambda hits: watched(
                {**hits, "hits": {**hits["hits"], "hits": [*hits["hits"]["hits"], OLD_HIT]}}
            ),
            id="two versions of the document",
        ),
    ],
)
def test_a_search_that_may_have_seen_a_put_under_way_reads_again_in_one_snapshot(
    client: OpenSearch, cluster: Cluster, first: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    # GIVEN a first search whose hits may not be a whole version
    doc = document()
    p = passages_of(doc)[0]
    hits = search_response(passage_hit(p, 3.0))
    cluster.reply(msearch_response(first(hits))).reply(pit_opened()).reply(msearch_response(hits))
    cluster.reply(msearch_response(search_response(document_hit(doc)))).reply(pit_closed())

    # WHEN
    out = store(client).search_passages(PassageQuery(tenant_id="t1", text="failover"))

    # THEN the same search again in a snapshot, with the version the document names there
    assert_one_snapshot(cluster.sent[1:])
    assert cluster.sent[2].lines[1::2] == [
        {k: v for k, v in cluster.sent[0].lines[1].items() if k != "aggs"} | {"pit": PIT_BODY}
    ]
    assert filters_of(cluster.sent[3].lines[1])[-1] == {"terms": {"doc_id": ["runbook"]}}
    assert [(x.passage.id, x.lexical) for x in out] == [(p.id, 1.0)]


def test_a_lexical_hit_deleted_before_its_vector_is_read_makes_the_search_read_again(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a lexical-only hit whose vector is gone when read (a put finished in between)
    doc = document()
    p = passages_of(doc)[0]
    cluster.reply(msearch_response(watched(search_response()), watched(search_response(passage_hit(p, 3.0)))))
    cluster.reply({"docs": [{"found": False}]})
    cluster.reply(pit_opened()).reply(msearch_response(search_response(), search_response()))
    cluster.reply(pit_closed())

    # WHEN / THEN it is read again in one snapshot, where it is gone
    assert (
        store(client).search_passages(PassageQuery(tenant_id="t1", text="x", vector=unit_vector(1.0))) == []
    )
    assert_one_snapshot(cluster.sent[2:])


def test_a_search_that_finds_nothing_opens_no_snapshot(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN a tenant without knowledge (every context request searches it)
    cluster.reply(msearch_response(search_response()))

    # WHEN / THEN one request, no point in time
    assert store(client).search_passages(PassageQuery(tenant_id="t1", text="failover")) == []
    assert [s.path for s in cluster.sent] == ["/_msearch"]


def test_search_passages_keeps_only_the_version_each_document_names_in_the_snapshot(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN hits of v2 and of v1 of one document (a put under way), the document naming v2,
    # and a hit of a document absent from the snapshot (a first put not yet whole)
    doc = document()
    new = passages_of(doc)[0]
    old = new.model_copy(update={"id": "psg_old", "version": "v1"})
    orphan = passages_of(document(doc_id="draft"))[0]
    hits = search_response(passage_hit(old, 5.0), passage_hit(new, 3.0), passage_hit(orphan, 2.0))
    cluster.reply(msearch_response(watched(hits, "runbook"))).reply(pit_opened()).reply(
        msearch_response(hits)
    )
    cluster.reply(msearch_response(search_response(document_hit(doc)))).reply(pit_closed())

    # WHEN
    out = store(client).search_passages(PassageQuery(tenant_id="t1", text="failover"))

    # THEN only the named version's passage, scaled as the best of what is kept
    assert [(x.passage.id, x.lexical) for x in out] == [(new.id, 1.0)]
    assert filters_of(cluster.sent[3].lines[1])[-1] == {"terms": {"doc_id": ["draft", "runbook"]}}


def test_a_search_closes_its_snapshot_even_when_it_fails_and_survives_a_failed_close(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a search that the cluster refuses, then a close that fails
    doc = document()
    p = passages_of(doc)[0]
    hits = msearch_response(search_response(passage_hit(p, 3.0)))
    cluster.reply(msearch_response(watched(search_response(passage_hit(p, 3.0)), "runbook"))).reply(
        pit_opened()
    )
    cluster.reply({"error": {"type": "search_phase_execution_exception"}}, status=400)
    cluster.reply({"error": {"type": "illegal_argument_exception"}}, status=400)
    with pytest.raises(ConfigurationError):  # a 400 no retry can fix
        store(client).search_passages(PassageQuery(tenant_id="t1", text="failover"))
    assert cluster.sent[-1].path == "/_search/point_in_time"

    # WHEN a search succeeds but closing its snapshot fails
    cluster.reply(msearch_response(watched(search_response(passage_hit(p, 3.0)), "runbook")))
    cluster.reply(pit_opened()).reply(hits)
    cluster.reply(msearch_response(search_response(document_hit(doc))))
    cluster.reply({"error": {"type": "illegal_argument_exception"}}, status=400)

    # THEN it still answers (the snapshot expires by itself)
    assert [x.passage.id for x in store(client).search_passages(PassageQuery(tenant_id="t1", text="x"))] == [
        p.id
    ]


def test_search_passages_drops_hits_of_another_tenant(client: OpenSearch, cluster: Cluster) -> None:
    p = passages_of(document(tenant_id="t2"))[0]
    cluster.reply(msearch_response(search_response(passage_hit(p, 3.0)))).reply(pit_closed())

    assert store(client).search_passages(PassageQuery(tenant_id="t1", text="failover")) == []


@pytest.mark.parametrize(
    "query",
    [
        PassageQuery(tenant_id="t1"),
        PassageQuery(tenant_id="t1", text="?!"),
        PassageQuery(tenant_id="t1", text="x", limit=0),
    ],
)
def test_search_passages_with_nothing_to_search_sends_nothing(
    client: OpenSearch, cluster: Cluster, query: PassageQuery
) -> None:
    assert store(client).search_passages(query) == []
    assert cluster.sent == []


# ------------------------------------------------------------------------------------------------
# record_document_hits
# ------------------------------------------------------------------------------------------------


def test_record_document_hits_is_one_bulk_of_routed_scripted_updates(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(bulk_items(("update", "updated", 200), ("update", "updated", 200)))

    # WHEN
    store(client).record_document_hits("t1", ["runbook", "adr-12", "runbook"], NOW)

    # THEN
    sent = cluster.sent[0]
    assert sent.path == "/_bulk"
    assert sent.lines == [
        {"update": {"_index": KALIAS, "_id": "t1:doc:runbook", "routing": "t1", "retry_on_conflict": 3}},
        {
            "script": {
                "source": DOCUMENT_HITS_SCRIPT,
                "lang": "painless",
                "params": {"tenant_id": "t1", "at": "2026-11-22T12:00:00.000000Z"},
            }
        },
        {"update": {"_index": KALIAS, "_id": "t1:doc:adr-12", "routing": "t1", "retry_on_conflict": 3}},
        sent.lines[1],
    ]
    assert (
        "s.tenant_id != params.tenant_id" in DOCUMENT_HITS_SCRIPT
        and "s.kind != 'document'" in DOCUMENT_HITS_SCRIPT
    )


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 503, "body": {"error": "unavailable"}},
        {"exception": OpenSearchConnectionError("N/A", "connection refused", None)},
    ],
)
def test_record_document_hits_never_raises(
    client: OpenSearch, cluster: Cluster, failure: dict[str, Any]
) -> None:
    for _ in range(4):  # the first try and three retries
        if "exception" in failure:
            cluster.fail(failure["exception"])
        else:
            cluster.reply(failure["body"], status=failure["status"])

    store(client).record_document_hits("t1", ["runbook"], NOW)

    cluster.done()


def test_search_and_listing_stay_within_what_one_search_can_return(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN limits above the k-NN plugin's largest k and the default result window
    cluster.reply(msearch_response(search_response())).reply(search_response())

    # WHEN
    store(client).search_passages(PassageQuery(tenant_id="t1", vector=unit_vector(1.0), limit=50_000))
    store(client).list_documents("t1", limit=50_000)

    # THEN the cluster is asked for what it can answer, not refused
    knn = cluster.sent[0].lines[1]
    assert knn["size"] == knn["query"]["knn"]["vector"]["k"] == MAX_SEARCH_HITS
    assert cluster.sent[1].body["size"] == MAX_SEARCH_HITS


@pytest.mark.parametrize(
    ("settings", "sent"), [({"refresh": True}, None), ({"refresh": True, "refresh_counters": True}, "true")]
)
def test_record_document_hits_never_waits_for_a_refresh(
    client: OpenSearch, cluster: Cluster, settings: dict[str, Any], sent: str | None
) -> None:
    # GIVEN a store that refreshes after its writes, and one told to after its counters too
    cluster.reply(bulk_items(("update", "updated", 200)))

    # WHEN a search's hits are counted
    store(client, **settings).record_document_hits("t1", ["runbook"], NOW)

    # THEN the counter never makes the search wait for a refresh (as record_access) unless the
    # store was told to refresh its counters (so a listing right after sees the count)
    assert cluster.sent[0].params.get("refresh") == sent
    assert cluster.sent[0].params["require_alias"] == "true"
