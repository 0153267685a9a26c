"""The schema upgrade on the real OpenSearch node: an index of the previous schema version, with
memories in it, upgraded by `bootstrap` into this version's index with nothing lost
(docs/opensearch.md, "Schema versions and upgrades"). The request shapes of the same path are
pinned in tests/unit/adapters/opensearch/test_opensearch_upgrade_requests.py; this is the engine
running them: the ``_reindex``, the write block, the catch-up and the alias move."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from tests.opensearch_cluster import cluster_client, cluster_url

from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap
from agent_memory.adapters.opensearch.opensearch_documents import audit_doc_id, to_document, unit
from agent_memory.adapters.opensearch.opensearch_events import audit_document
from agent_memory.adapters.opensearch.opensearch_index import (
    EVENTS_SCHEMA_VERSION,
    LEXICAL_FIELD,
    SCHEMA_VERSION,
    events_alias_name,
    events_index_body,
    events_index_name,
    knowledge_index_name,
    records_index_body,
    records_index_name,
)
from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import AuditAction, AuditEvent, AuditQuery, StoredRecord, StoreQuery

pytestmark = pytest.mark.opensearch

DIM, MODEL = 8, "upgrade-model"
#: The texts schema version 6 copies into `LEXICAL_FIELD`, the one field BM25 scores: version 5
#: scored them field by field, and had no such field.
COPIED_IN_6 = ("content", "topic", "context", "speaker")
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def old_alias() -> Iterator[tuple[Any, str]]:
    """An alias over a records index of schema version 5 (and the events index), made as the
    bootstrap of version 5 made them; deleted afterwards with whatever the upgrade made."""
    client = cluster_client(cluster_url())
    alias = f"upgrade-{uuid.uuid4().hex[:10]}"
    old = f"{alias}-v{SCHEMA_VERSION - 1}"
    body = records_index_body(DIM, MODEL)
    body["mappings"]["_meta"]["schema_version"] = SCHEMA_VERSION - 1
    properties = body["mappings"]["properties"]
    del properties[LEXICAL_FIELD]
    for name in COPIED_IN_6:
        del properties[name]["copy_to"]
    client.indices.create(index=old, body={**body, "aliases": {alias: {"is_write_index": True}}})
    client.indices.create(
        index=events_index_name(alias),
        body={**events_index_body(), "aliases": {events_alias_name(alias): {}}},
    )
    try:
        yield client, alias
    finally:
        names = [old, records_index_name(alias), events_index_name(alias), knowledge_index_name(alias)]
        client.indices.delete(index=",".join(names), params={"ignore_unavailable": "true"})


def _record(n: int) -> StoredRecord:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[n % DIM] = 1.0
    vector[(n + 1) % DIM] = 0.5
    at = T0 + timedelta(minutes=n)
    record = MemoryRecord(
        id=f"mem_{n:016d}",
        tenant_id="t1",
        agent_id="a1",
        content=f"Memory number {n} about the launch.",
        content_hash=f"h{n}",
        created_at=at,
        updated_at=at,
        occurred_at=at,
    )
    return StoredRecord(record, vector)


def test_bootstrap_upgrades_an_index_of_the_previous_schema_with_no_memory_lost(
    old_alias: tuple[Any, str],
) -> None:
    # GIVEN 250 memories in an index of schema version 5, written as version 5 wrote them (the
    # same documents: the field version 6 fills is filled by the index, never sent)
    client, alias = old_alias
    lines: list[dict[str, Any]] = []
    for n in range(250):
        stored = _record(n)
        source = to_document(stored.record, unit(stored.vector, DIM, MODEL), {})
        lines += [
            {"index": {"_index": alias, "_id": f"t1:a1:{stored.record.id}", "routing": "t1:a1"}},
            source,
        ]
    response = client.bulk(body=lines, params={"refresh": "true"})
    assert not response["errors"]

    # WHEN the bootstrap of this version runs
    result = bootstrap(client, alias, DIM, MODEL)

    # THEN the alias points at this version's index, which holds every memory, whole
    assert result.upgraded_from == f"{alias}-v{SCHEMA_VERSION - 1}"
    assert list(client.indices.get_alias(name=alias)) == [records_index_name(alias)]
    store = OpenSearchStore(client, alias, DIM, MODEL)  # checks the index: version, model, dimension
    assert client.count(index=records_index_name(alias))["count"] == 250
    for n in (0, 117, 249):
        got = store.get("t1", "a1", f"mem_{n:016d}")
        assert got is not None and got.content == f"Memory number {n} about the launch."
    # AND the copy analysed every text anew into the field words are searched in
    found = store.search(StoreQuery(tenant_id="t1", agent_id="a1", now=T0 + timedelta(days=1), text="117"))
    assert [c.record.id for c in found] == [f"mem_{117:016d}"]


def test_bootstrap_adds_the_append_order_to_an_events_index_of_the_first_version() -> None:
    # GIVEN an alias whose records index is current and whose events index was made by version 1
    # (no ``seq``), holding an audit event written then
    client = cluster_client(cluster_url())
    alias = f"events-{uuid.uuid4().hex[:10]}"
    body = events_index_body()
    body["mappings"]["_meta"]["schema_version"] = 1
    del body["mappings"]["properties"]["seq"]
    client.indices.create(
        index=events_index_name(alias), body={**body, "aliases": {events_alias_name(alias): {}}}
    )
    old = AuditEvent("t1", "a1", "m0", AuditAction.FORGET, "v1", T0, {})
    doc = {k: v for k, v in audit_document(old, 0).items() if k != "seq"}
    client.index(
        index=events_alias_name(alias),
        id=audit_doc_id(old),
        body=doc,
        params={"routing": "t1:a1", "refresh": "true"},
    )
    try:
        # WHEN this version's bootstrap runs and events of the same instant are appended
        result = bootstrap(client, alias, DIM, MODEL)
        store = OpenSearchStore(client, alias, DIM, MODEL)
        store.append_audit([AuditEvent("t1", "a1", "s0", AuditAction.STALE, "v2", T0, {})])
        store.append_audit([AuditEvent("t1", "a1", "a0", AuditAction.STALE, "v2", T0, {})])

        # THEN the index was kept and took the field; the new events list newest appended first,
        # the one written before ``seq`` existed after them, and nothing is lost
        assert not result.events_created and result.events_index == events_index_name(alias)
        mapping = client.indices.get_mapping(index=events_alias_name(alias))[events_index_name(alias)][
            "mappings"
        ]
        assert mapping["properties"]["seq"] == {"type": "long"}
        assert mapping["_meta"]["schema_version"] == EVENTS_SCHEMA_VERSION
        trail = store.audit_events(AuditQuery("t1", "a1"))
        assert [(e.record_id, e.actor) for e in trail.events] == [("a0", "v2"), ("s0", "v2"), ("m0", "v1")]
        # AND a second bootstrap changes nothing
        bootstrap(client, alias, DIM, MODEL)
        assert store.audit_events(AuditQuery("t1", "a1")).events == trail.events
    finally:
        names = [records_index_name(alias), events_index_name(alias), knowledge_index_name(alias)]
        client.indices.delete(index=",".join(names), params={"ignore_unavailable": "true"})
