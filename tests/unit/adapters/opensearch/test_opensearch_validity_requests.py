"""Request shapes of the OpenSearch store for supersession: `set_validity`'s scripted update, the
documents that carry the four fields, and their mapping.

Uses the transport double of test_opensearch_requests.py: real client, recorded requests.
"""

from __future__ import annotations

from datetime import timedelta

from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    DIM,
    INDEX,
    MODEL,
    NOW,
    Cluster,
    bulk_ok,
    record,
    source_of,
    store,
    unit_vector,
)

from agent_memory.adapters.opensearch.opensearch_documents import to_document, to_record
from agent_memory.adapters.opensearch.opensearch_index import SCHEMA_VERSION, records_index_body
from agent_memory.adapters.opensearch.opensearch_scripts import VALIDITY_SCRIPT
from agent_memory.model.records import RecordValidity
from agent_memory.ports import AuditAction, AuditEvent

RECORD = "mem_ssssssssssssssss"
LATER = NOW + timedelta(days=90)
MARKED = RecordValidity(valid_from=NOW, valid_to=LATER, supersedes=("mem_older",), superseded_by="mem_newer")


def superseded() -> AuditEvent:
    return AuditEvent("t1", "a1", RECORD, AuditAction.SUPERSEDED, "writer", NOW, {"by": "mem_newer"})


def test_set_validity_is_a_routed_scripted_update_of_the_four_fields_then_the_audit_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the cluster updates the document, then takes the audit event
    cluster.reply({"_index": INDEX, "_id": f"t1:a1:{RECORD}", "result": "updated"})
    cluster.reply(bulk_ok(1))
    # WHEN the record is marked superseded
    changed = store(client).set_validity("t1", "a1", RECORD, MARKED, superseded())
    # THEN one routed update carrying the fields (times fixed-width), guarded by the script, then the event
    assert changed is True
    update, audit = cluster.sent
    assert (update.method, update.path) == ("POST", f"/mem/_update/t1:a1:{RECORD}")
    assert update.params == {"routing": "t1:a1", "retry_on_conflict": "3"}
    assert update.body["script"]["source"] == VALIDITY_SCRIPT
    assert update.body["script"]["params"] == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "at": "2026-11-22T12:00:00.000000Z",
        "valid_from": "2026-11-22T12:00:00.000000Z",
        "valid_to": "2027-02-20T12:00:00.000000Z",
        "supersedes": ["mem_older"],
        "superseded_by": "mem_newer",
    }
    action, doc = audit.lines
    assert action["create"]["_index"] == "mem-events" and doc["action"] == "superseded"
    cluster.done()


def test_cleared_validity_sends_nulls_and_an_empty_list(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply({"_index": INDEX, "_id": f"t1:a1:{RECORD}", "result": "updated"})
    cluster.reply(bulk_ok(1))
    # WHEN a supersession is undone
    store(client).set_validity("t1", "a1", RECORD, RecordValidity(), superseded())
    # THEN the script is told to clear every field
    params = cluster.sent[0].body["script"]["params"]
    assert (params["valid_from"], params["valid_to"], params["superseded_by"]) == (None, None, None)
    assert params["supersedes"] == []


def test_set_validity_on_a_record_the_script_refuses_writes_no_audit(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the script found the record forgotten (or another tenant's): noop
    cluster.reply({"_index": INDEX, "_id": f"t1:a1:{RECORD}", "result": "noop"})
    # WHEN / THEN nothing changed and no event was written
    assert store(client).set_validity("t1", "a1", RECORD, MARKED, superseded()) is False
    assert len(cluster.sent) == 1
    cluster.done()


def test_set_validity_on_a_missing_record_writes_no_audit(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN no such document
    missing = {
        "error": {"type": "document_missing_exception", "reason": "[x]: document missing"},
        "status": 404,
    }
    cluster.reply(missing, status=404)
    # WHEN / THEN
    assert store(client).set_validity("t1", "a1", RECORD, MARKED, superseded()) is False
    assert len(cluster.sent) == 1
    cluster.done()


def test_the_validity_script_changes_only_the_four_fields_of_a_live_record_of_the_caller() -> None:
    for clause in (
        "s.tenant_id != params.tenant_id",
        "s.agent_id != params.agent_id",
        "s.deleted_at != null",
        "s.expires_at.compareTo(params.at) <= 0",
        "ctx.op = 'noop'",
        "s.valid_from = params.valid_from",
        "s.valid_to = params.valid_to",
        "s.supersedes = params.supersedes",
        "s.superseded_by = params.superseded_by",
    ):
        assert clause in VALIDITY_SCRIPT
    # updated_at moves forward only (an upgrade's catch-up sees the change); content and vectors stay
    assert "s.updated_at.compareTo(params.at) < 0) { s.updated_at = params.at; }" in VALIDITY_SCRIPT
    assert "content" not in VALIDITY_SCRIPT and "vector" not in VALIDITY_SCRIPT


def test_a_document_carries_the_four_fields_and_reads_them_back() -> None:
    # GIVEN a record that superseded another
    r = record(RECORD, valid_from=NOW, supersedes=["mem_older"])
    # WHEN
    doc = to_document(r, unit_vector(1))
    # THEN times are the store's fixed-width strings, and the record round-trips
    assert (doc["valid_from"], doc["valid_to"]) == ("2026-11-22T12:00:00.000000Z", None)
    assert (doc["supersedes"], doc["superseded_by"]) == (["mem_older"], None)
    assert to_record(doc) == r


def test_a_document_of_schema_4_reads_back_with_no_supersession() -> None:
    # GIVEN a document copied from a version 4 index: none of the four fields
    doc = source_of(record(RECORD))
    for field in ("valid_from", "valid_to", "supersedes", "superseded_by"):
        del doc[field]
    # WHEN
    read = to_record(doc)
    # THEN the defaults: nothing replaced it and it replaced nothing
    assert read.validity == RecordValidity()
    assert read == record(RECORD)


def test_schema_5_maps_the_four_fields_as_dates_and_keywords() -> None:
    # WHEN / THEN
    props = records_index_body(DIM, MODEL)["mappings"]["properties"]
    assert SCHEMA_VERSION >= 5
    assert props["valid_from"] == props["valid_to"] == {"type": "date"}
    assert props["supersedes"] == props["superseded_by"] == {"type": "keyword"}
