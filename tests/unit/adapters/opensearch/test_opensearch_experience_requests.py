"""Request shapes of the OpenSearch store for experiences: feedback's scripted update, the
confidence floor inside the k-NN filter, and the mapping of the field.

Uses the transport double of test_opensearch_requests.py: real client, recorded requests.
"""

from __future__ import annotations

from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    DIM,
    INDEX,
    MODEL,
    NOW,
    Cluster,
    bulk_ok,
    search_response,
    store,
    unit_vector,
)

from agent_memory.adapters.opensearch.opensearch_index import records_index_body
from agent_memory.adapters.opensearch.opensearch_scripts import EXPERIENCE_SCRIPT
from agent_memory.experience.rules.confidence import Experience, FeedbackOutcome
from agent_memory.ports import AuditAction, AuditEvent, StoreQuery

RECORD = "mem_eeeeeeeeeeeeeeee"
SURE = Experience(prior=0.6).after(FeedbackOutcome.CONFIRMED)


def feedback() -> AuditEvent:
    return AuditEvent("t1", "a1", RECORD, AuditAction.FEEDBACK, "key:dev", NOW, {"outcome": "confirmed"})


def test_feedback_is_a_routed_scripted_update_of_the_experience_then_the_audit_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the cluster updates the document, then takes the audit event
    cluster.reply({"_index": INDEX, "_id": f"t1:a1:{RECORD}", "result": "updated"})
    cluster.reply(bulk_ok(1))
    # WHEN feedback is recorded
    changed = store(client).set_experience("t1", "a1", RECORD, SURE, feedback())
    # THEN one routed update carrying the whole experience, guarded by the script, then the event
    assert changed is True
    update, audit = cluster.sent
    assert (update.method, update.path) == ("POST", f"/mem/_update/t1:a1:{RECORD}")
    assert update.params == {"routing": "t1:a1", "retry_on_conflict": "3"}
    assert update.body["script"]["source"] == EXPERIENCE_SCRIPT
    params = update.body["script"]["params"]
    assert (params["tenant_id"], params["agent_id"]) == ("t1", "a1")
    assert params["experience"] == SURE.model_dump(mode="json")
    action, doc = audit.lines
    assert action["create"]["_index"] == "mem-events" and doc["action"] == "feedback"
    cluster.done()


def test_feedback_on_a_record_the_script_refuses_writes_no_audit(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the script found the record forgotten (or another tenant's): noop
    cluster.reply({"_index": INDEX, "_id": f"t1:a1:{RECORD}", "result": "noop"})
    # WHEN / THEN nothing changed and no event was written
    assert store(client).set_experience("t1", "a1", RECORD, SURE, feedback()) is False
    assert len(cluster.sent) == 1
    cluster.done()


def test_the_experience_script_changes_only_a_live_record_of_the_caller() -> None:
    for clause in (
        "s.tenant_id != params.tenant_id",
        "s.agent_id != params.agent_id",
        "s.deleted_at != null",
        "s.expires_at.compareTo(params.at) <= 0",
        "ctx.op = 'noop'",
        "s.experience = params.experience",
    ):
        assert clause in EXPERIENCE_SCRIPT


def test_a_confidence_floor_is_a_filter_inside_the_knn_clause_and_the_word_search(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply({"responses": [search_response(), search_response()]})
    # WHEN searching with a floor
    store(client).search(StoreQuery("t1", "a1", NOW, vector=unit_vector(1), text="login", min_confidence=0.7))
    # THEN both searches of the one _msearch filter on the experience's confidence
    [sent] = cluster.sent
    _knn_header, knn, _words_header, words = sent.lines
    for body in (knn, words):
        assert {"range": {"experience.confidence": {"gte": 0.7}}} in str_filters(body)


def test_the_mapping_indexes_confidence_and_run_and_is_strict() -> None:
    # WHEN / THEN
    mappings = records_index_body(DIM, MODEL)["mappings"]
    experience = mappings["properties"]["experience"]["properties"]
    assert mappings["dynamic"] == "strict"
    assert experience["confidence"] == {"type": "float"}
    assert experience["run_id"]["type"] == "keyword"
    assert set(Experience.model_fields) == set(experience)  # every field has a mapping


def str_filters(body: object) -> list[object]:
    """Every dict nested anywhere in a request body (where the filters sit differs by request)."""
    found: list[object] = []
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
