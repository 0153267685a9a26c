"""Request shapes of the embedding spaces on OpenSearch (`opensearch_spaces`): a tenant's space is
a ``knn_vector`` field of its own (mapped once, at the model's size, with the ``vector`` field's
method), a k-NN query names exactly that field, and the re-embedding's reads and writes are
scoped to one tenant and conditional on the record being unchanged."""

from __future__ import annotations

import numpy as np
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    INDEX,
    NOW,
    Cluster,
    bulk_ok,
    mapping_response,
    record,
    search_response,
    source_of,
    store,
    unit_vector,
)

from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.adapters.opensearch.opensearch_spaces import SET_SPACE_SCRIPT
from agent_memory.ports import SpaceVector, StoredRecord, StoreQuery

SPACE = "sp_abcdefghijklmnop"


def test_a_record_with_a_tenant_space_maps_the_field_once_then_indexes_both(
    cluster: Cluster, client: OpenSearch
) -> None:
    # GIVEN the records index's mapping
    cluster.reply(mapping_response()).reply({"acknowledged": True}).reply(bulk_ok(1)).reply(bulk_ok(1))
    s = store(client)
    r = record()
    item = StoredRecord(r, None, (SpaceVector(SPACE, np.array([3.0, 4.0, 0.0], dtype=np.float32)),))
    # WHEN a record embedded by the tenant's own model only is stored, twice
    s.put([item])
    s.put([item])
    # THEN the space's field is mapped once, as the vector field's method at the model's size
    get, put_mapping, bulk, again = cluster.sent
    assert (get.method, get.path) == ("GET", "/mem/_mapping")
    field = put_mapping.body["properties"]["spaces"]["properties"][SPACE]
    assert (put_mapping.method, put_mapping.path) == ("POST", "/mem/_mapping")  # no ESHttpPut grant
    vector = mapping_response()[INDEX]["mappings"]["properties"]["vector"]
    assert field == {**vector, "dimension": 3}
    # AND the document holds the space's unit vector and no deployment-space vector
    doc = bulk.lines[1]
    assert "vector" not in doc and doc["spaces"] == {SPACE: [0.6, 0.8, 0.0]}
    assert again.path == "/_bulk"
    cluster.done()


def test_a_search_in_a_tenant_space_names_that_field_only(cluster: Cluster, client: OpenSearch) -> None:
    # GIVEN
    r = record()
    cluster.reply({"responses": [search_response()]})
    # WHEN the tenant's space is searched by vector
    store(client).search(StoreQuery("t1", "a1", NOW, vector=np.array([1.0, 0.0, 0.0]), space=SPACE))
    # THEN the one k-NN clause is on the space's field, with the tenant and agent inside it
    [msearch] = cluster.sent
    knn = msearch.lines[1]["query"]["knn"]
    assert list(knn) == [f"spaces.{SPACE}"] and knn[f"spaces.{SPACE}"]["vector"] == [1.0, 0.0, 0.0]
    filters = knn[f"spaces.{SPACE}"]["filter"]["bool"]["filter"]
    assert {"term": {"tenant_id": "t1"}} in filters and {"term": {"agent_id": "a1"}} in filters
    assert msearch.lines[1]["_source"] == {"excludes": ["vector", "spaces"]}
    assert r.tenant_id == "t1"


def test_missing_vectors_are_read_per_tenant_oldest_first_and_filled_only_if_unchanged(
    cluster: Cluster, client: OpenSearch
) -> None:
    # GIVEN one record of the tenant without a vector in the space
    r = record()
    cluster.reply(search_response({"_id": "x", "_score": None, "_source": source_of(r)}))
    cluster.reply(mapping_response()).reply({"acknowledged": True})
    cluster.reply(
        {"took": 1, "errors": False, "items": [{"update": {"_id": "x", "result": "updated", "status": 200}}]}
    )
    cluster.reply({"count": 0})
    s = store(client)
    # WHEN the job reads, fills and counts
    [missing] = s.missing_in_space("t1", SPACE, 64)
    stored = s.put_space_vectors(
        "t1",
        SPACE,
        [(missing, np.array([0.0, 2.0], dtype=np.float32)), (record(tenant="t2"), unit_vector(1))],
    )
    left = s.count_missing("t1", SPACE)
    # THEN the read is the tenant's live records lacking the field, oldest first
    read, _, _, update, count = cluster.sent
    filters = read.body["query"]["bool"]["filter"]
    assert {"term": {"tenant_id": "t1"}} in filters
    assert {"bool": {"must_not": [{"exists": {"field": f"spaces.{SPACE}"}}]}} in filters
    assert {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}} in filters
    assert read.body["sort"][0] == {"created_at": {"order": "asc"}}
    # AND the write is one scripted update, conditional on the tenant and the time it was read;
    # the other tenant's record was never sent
    assert update.params["refresh"] == "wait_for"  # the job's next read must not see them missing
    action, script = update.lines
    assert action["update"]["_id"] == "t1:a1:mem_aaaaaaaaaaaaaaaa" and action["update"]["routing"] == "t1:a1"
    assert script["script"]["source"] == SET_SPACE_SCRIPT
    assert script["script"]["params"] == {
        "tenant": "t1",
        "updated": ts(r.updated_at),
        "space": SPACE,
        "v": [0.0, 1.0],
    }
    assert (stored, left) == (1, 0)
    assert count.path == "/mem/_count" and count.body["query"]["bool"]["filter"] == filters


def test_dropping_a_space_touches_only_the_tenants_documents_holding_it(
    cluster: Cluster, client: OpenSearch
) -> None:
    # GIVEN
    cluster.reply({"updated": 7})
    # WHEN
    dropped = store(client).drop_space("t1", SPACE)
    # THEN
    [sent] = cluster.sent
    assert (sent.method, sent.path, dropped) == ("POST", "/mem/_update_by_query", 7)
    assert sent.body["query"]["bool"]["filter"] == [
        {"term": {"tenant_id": "t1"}},
        {"exists": {"field": f"spaces.{SPACE}"}},
    ]
    assert sent.params["conflicts"] == "proceed" and sent.body["script"]["params"] == {"space": SPACE}
