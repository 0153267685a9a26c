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
from agent_memory.adapters.opensearch.opensearch_documents import to_document, unit
from agent_memory.adapters.opensearch.opensearch_index import (
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
from agent_memory.domain.records import MemoryRecord
from agent_memory.ports import StoredRecord, StoreQuery

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
