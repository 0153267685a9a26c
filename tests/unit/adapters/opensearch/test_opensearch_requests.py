"""Request shapes of the OpenSearch adapter, asserted field by field against the documented API.

A transport double (an opensearch-py `Connection` subclass) records every request the real
client would put on the wire — method, path, query parameters, decoded body (NDJSON split into
lines) — and replays responses shaped like the ones in the OpenSearch documentation. Everything
above the socket is real: the client, its serializer, the transport's retries and exceptions.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from opensearchpy import Connection, OpenSearch
from opensearchpy import ConnectionError as OpenSearchConnectionError

from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap, status
from agent_memory.adapters.opensearch.opensearch_cursors import encode_cursor
from agent_memory.adapters.opensearch.opensearch_documents import to_document, ts
from agent_memory.adapters.opensearch.opensearch_index import (
    ANALYSIS,
    LEXICAL_FIELD,
    SCHEMA_VERSION,
    TEXT_ANALYZER,
    TEXT_SEARCH_ANALYZER,
    OlderSchemaError,
    check_index,
    cosine_from_score,
    events_index_body,
    knowledge_index_body,
    knowledge_index_name,
    records_index_body,
    records_index_name,
)
from agent_memory.adapters.opensearch.opensearch_queries import NEAREST_K
from agent_memory.adapters.opensearch.opensearch_retention_queries import MAINTENANCE_TIMEOUT_S
from agent_memory.adapters.opensearch.opensearch_scripts import ACCESS_SCRIPT, SOFT_DELETE_SCRIPT
from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.contract.v1 import ErrorDetail
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind, MemoryRecord, Source
from agent_memory.model.words import STOPWORDS
from agent_memory.ports import AuditEvent, ListQuery, NearestQuery, PeriodScan, StoredRecord, StoreQuery

DIM = 8
MODEL = "test-model"
ALIAS = "mem"
T0 = datetime(2026, 11, 20, 14, 3, 0, 123456, tzinfo=UTC)
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
INDEX = records_index_name(ALIAS)  # the versioned index behind the alias
KINDEX = knowledge_index_name(ALIAS)  # the versioned knowledge index, behind mem-knowledge


# ------------------------------------------------------------------------------------------------
# The transport double
# ------------------------------------------------------------------------------------------------


@dataclass
class Sent:
    method: str
    path: str
    params: dict[str, str]
    body: Any
    timeout: float | None

    @property
    def lines(self) -> list[dict[str, Any]]:
        assert isinstance(self.body, list), "not an NDJSON body"
        return self.body


class Cluster:
    """Replays queued (status, body) responses, or raises a queued exception, and records."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self._replies: deque[tuple[int, Any] | Exception] = deque()

    def reply(self, body: Any = None, status: int = 200) -> Cluster:
        self._replies.append((status, {} if body is None else body))
        return self

    def fail(self, exc: Exception) -> Cluster:
        self._replies.append(exc)
        return self

    def next(self) -> tuple[int, Any] | Exception:
        assert self._replies, f"unexpected request: {self.sent[-1]}"
        return self._replies.popleft()

    def done(self) -> None:
        assert not self._replies, f"{len(self._replies)} replies never requested"


class RecordingConnection(Connection):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cluster = cluster

    def perform_request(
        self,
        method: str,
        url: str,
        params: Any = None,
        body: bytes | None = None,
        timeout: float | None = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> tuple[int, dict[str, str], str]:
        text = body.decode("utf-8") if body else ""
        if text.endswith("\n"):  # NDJSON: _bulk and _msearch
            decoded: Any = [json.loads(line) for line in text[:-1].split("\n")]  # not splitlines(): U+2028
        else:
            decoded = json.loads(text) if text else None
        self.cluster.sent.append(
            Sent(method, unquote(url), {k: str(v) for k, v in (params or {}).items()}, decoded, timeout)
        )
        reply = self.cluster.next()
        if isinstance(reply, Exception):
            raise reply
        status, payload = reply
        raw = json.dumps(payload)
        if not 200 <= status < 300 and status not in (ignore or ()):
            self._raise_error(status, raw, "application/json")
        return status, {"content-type": "application/json"}, raw


def store(client: OpenSearch, **kwargs: Any) -> OpenSearchStore:
    """A store whose writes ask for no refresh unless the test says so (the default waits for one)."""
    return OpenSearchStore(client, ALIAS, DIM, MODEL, check=False, **{"refresh": False, **kwargs})


def unit_vector(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def record(
    record_id: str = "mem_aaaaaaaaaaaaaaaa", tenant: str = "t1", agent: str = "a1", **kw: Any
) -> MemoryRecord:
    fields: dict[str, Any] = {
        "id": record_id,
        "tenant_id": tenant,
        "agent_id": agent,
        "content": "Alice moved the launch to March 3.",
        "content_hash": "h",
        "created_at": T0,
        "updated_at": T0,
        "occurred_at": T0,
    }
    return MemoryRecord(**(fields | kw))


def source_of(r: MemoryRecord, vector: np.ndarray | None = None) -> dict[str, Any]:
    """A stored document as OpenSearch returns it in ``_source`` (the adapter's own format)."""
    doc = to_document(r, vector if vector is not None else unit_vector(1.0))
    if vector is None:
        del doc["vector"]
    return doc


def hit(r: MemoryRecord, score: float, sort: list[Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"_index": INDEX, "_id": f"{r.tenant_id}:{r.agent_id}:{r.id}", "_score": score}
    out["_source"] = source_of(r)
    if sort is not None:
        out["sort"] = sort
    return out


def search_response(*hits: dict[str, Any]) -> dict[str, Any]:
    return {
        "took": 2,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": None, "hits": list(hits)},
    }


def bulk_ok(n: int, op: str = "index") -> dict[str, Any]:
    return {
        "took": 11,
        "errors": False,
        "items": [
            {op: {"_index": INDEX, "_id": str(i), "result": "created", "status": 201}} for i in range(n)
        ],
    }


def mapping_response(dim: int = DIM, model: str = MODEL) -> dict[str, Any]:
    return {
        INDEX: {"mappings": records_index_body(dim, model)["mappings"]},
        "mem-events-v1": {"mappings": events_index_body()["mappings"]},
    }


def knowledge_mapping_response(dim: int = DIM, model: str = MODEL, alias: str = ALIAS) -> dict[str, Any]:
    """What ``GET {alias}-knowledge/_mapping`` answers: the knowledge index the bootstrap made."""
    mappings = knowledge_index_body(dim, model)["mappings"]
    return {knowledge_index_name(alias): {"mappings": mappings}}


def index_not_found(index: str = ALIAS) -> dict[str, Any]:
    error = {"type": "index_not_found_exception", "reason": f"no such index [{index}]", "index": index}
    return {"error": {**error, "root_cause": [error]}, "status": 404}


def assert_scoped(filters: list[dict[str, Any]], tenant: str = "t1", agent: str = "a1") -> None:
    assert {"term": {"tenant_id": tenant}} in filters
    assert {"term": {"agent_id": agent}} in filters


# ------------------------------------------------------------------------------------------------
# The index: mapping, bootstrap, check, status
# ------------------------------------------------------------------------------------------------


def test_a_new_index_is_made_on_lucene_and_faiss_is_refused() -> None:
    # WHEN / THEN new indexes are made on lucene, the engine the suite runs on a real node
    for body in (records_index_body(DIM, MODEL), knowledge_index_body(DIM, MODEL)):
        assert body["mappings"]["properties"]["vector"]["method"]["engine"] == "lucene"
    # AND faiss (no native library on the test node, so never tested) is refused, saying why
    for make in (records_index_body, knowledge_index_body):
        with pytest.raises(ConfigurationError, match=r"not offered for new indexes.*keeps working"):
            make(DIM, MODEL, "faiss")  # type: ignore[arg-type]


def test_the_vector_field_is_hnsw_innerproduct_on_lucene() -> None:
    # WHEN
    engine = "lucene"
    body = records_index_body(384, "amazon.titan-embed-text-v2:0")

    # THEN
    assert body["settings"] == {"index": {"knn": True, "analysis": ANALYSIS}}
    vector = body["mappings"]["properties"]["vector"]
    assert vector["type"] == "knn_vector"
    assert vector["dimension"] == 384
    assert vector["method"]["name"] == "hnsw"
    assert vector["method"]["engine"] == engine
    assert vector["method"]["space_type"] == "innerproduct"
    assert body["mappings"]["_meta"] == {
        "kind": "records",
        "schema_version": SCHEMA_VERSION,
        "embedding_model_id": "amazon.titan-embed-text-v2:0",
        "dimension": 384,
        "engine": engine,
        "space_type": "innerproduct",
    }


def test_the_records_index_name_carries_the_schema_version() -> None:
    # the one field BM25 scores is schema 6: a new index behind the same alias
    assert SCHEMA_VERSION == 6
    assert records_index_name("agent-memory") == "agent-memory-v6"


def test_text_is_stemmed_and_folded_alike_and_queries_drop_the_domains_stopwords() -> None:
    # GIVEN the analysis settings of the records index
    index, query = ANALYSIS["analyzer"][TEXT_ANALYZER], ANALYSIS["analyzer"][TEXT_SEARCH_ANALYZER]
    filters = ANALYSIS["filter"]

    # WHEN / THEN both are custom analyzers on the standard tokenizer: possessives off, lower case,
    # diacritics folded (as SQLite's unicode61 does), Porter stems last (FTS5's porter algorithm)
    for analyzer in (index, query):
        assert (analyzer["type"], analyzer["tokenizer"]) == ("custom", "standard")
        chain = analyzer["filter"]
        assert chain[0] == "memory_english_possessive"
        assert chain[-1] == "porter_stem"
        assert chain.index("lowercase") < chain.index("asciifolding")
        assert set(chain) - {"lowercase", "asciifolding", "porter_stem"} <= set(filters)  # all defined
    # AND the index keeps every word, while a query drops the stopwords before stemming
    assert "memory_stopwords" not in index["filter"]
    assert query["filter"] == [*index["filter"][:-1], "memory_stopwords", "porter_stem"]
    # AND the list is the one SQLite drops from query words, so both stores ignore the same words
    assert filters["memory_stopwords"] == {"type": "stop", "stopwords": sorted(STOPWORDS)}
    assert {"what", "did", "the", "about"} <= set(filters["memory_stopwords"]["stopwords"])
    assert filters["memory_english_possessive"] == {"type": "stemmer", "language": "possessive_english"}


def test_nmslib_is_refused_before_any_request() -> None:
    with pytest.raises(ConfigurationError, match="nmslib"):
        records_index_body(DIM, MODEL, "nmslib")  # type: ignore[arg-type]


def test_every_record_field_is_mapped_with_a_filterable_type() -> None:
    # GIVEN
    props = records_index_body(DIM, MODEL)["mappings"]["properties"]
    # WHEN
    mappings = records_index_body(DIM, MODEL)["mappings"]

    # THEN
    # dynamic strict refuses unknown fields, so a record field missing here would fail every write
    assert mappings["dynamic"] == "strict"
    assert set(MemoryRecord.model_fields) <= set(props)
    assert mappings["_routing"] == {"required": True}
    for name in (
        "id",
        "tenant_id",
        "agent_id",
        "user_id",
        "grain",
        "time_key",
        "kind",
        "role",
        "tags",
    ):
        assert props[name] == {"type": "keyword"}, name
    # the speaker is an exact keyword (filters, aggregations) with its words searchable as well
    assert props["speaker"]["type"] == "keyword"
    assert props["speaker"]["fields"]["text"]["type"] == "text"
    for name in ("occurred_at", "span_start", "span_end", "expires_at", "deleted_at", "created_at"):
        assert props[name] == {"type": "date"}, name
    assert props["importance"] == {"type": "float"}
    assert props["access_count"] == {"type": "integer"}
    # every searched text field is analysed alike: stems at index time, stems less stopwords at query time
    for field in (props["content"], props["topic"], props["context"], props["speaker"]["fields"]["text"]):
        assert field["type"] == "text"
        assert field["analyzer"] == TEXT_ANALYZER
        assert field["search_analyzer"] == TEXT_SEARCH_ANALYZER
    assert props["topic"]["fields"]["keyword"]["type"] == "keyword"  # the exact topic, as before
    assert "fields" not in props["content"] and "fields" not in props["context"]
    # the four texts are copied into the one field BM25 scores, analysed as they are
    for name in ("content", "topic", "context", "speaker"):
        assert props[name]["copy_to"] == LEXICAL_FIELD, name
    assert props[LEXICAL_FIELD] == {
        "type": "text",
        "analyzer": TEXT_ANALYZER,
        "search_analyzer": TEXT_SEARCH_ANALYZER,
    }
    assert props["metadata"] == {"type": "object", "enabled": False}  # client JSON is never mapped
    assert set(props["source"]["properties"]) == set(Source.model_fields)


def test_bootstrap_creates_each_versioned_index_with_its_alias_in_one_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a cluster with neither alias nor index
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": INDEX})
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": "mem-events-v1"})
    cluster.reply(mapping_response())
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": KINDEX})
    cluster.reply(knowledge_mapping_response())

    # WHEN bootstrapping
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN: HEAD alias, HEAD index, PUT index with the alias, for both; then the _meta check;
    # then the same for the knowledge index, and its own _meta check
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("HEAD", "/_alias/mem"),
        ("HEAD", f"/{INDEX}"),
        ("PUT", f"/{INDEX}"),
        ("HEAD", "/_alias/mem-events"),
        ("HEAD", "/mem-events-v1"),
        ("PUT", "/mem-events-v1"),
        ("GET", "/mem,mem-events/_mapping"),
        ("HEAD", "/_alias/mem-knowledge"),
        ("HEAD", f"/{KINDEX}"),
        ("PUT", f"/{KINDEX}"),
        ("GET", "/mem-knowledge/_mapping"),
    ]
    create = cluster.sent[2].body
    assert create["aliases"] == {"mem": {"is_write_index": True}}
    assert create["mappings"] == records_index_body(DIM, MODEL)["mappings"]
    assert cluster.sent[5].body["aliases"] == {"mem-events": {"is_write_index": True}}
    assert cluster.sent[9].body["aliases"] == {"mem-knowledge": {"is_write_index": True}}
    assert result.created and result.events_created and result.knowledge_created
    assert (result.index, result.events_index, result.knowledge_index) == (INDEX, "mem-events-v1", KINDEX)


def test_bootstrap_leaves_existing_indexes_alone_and_only_checks_them(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply().reply().reply(mapping_response())  # both aliases exist
    cluster.reply().reply(knowledge_mapping_response())  # and the knowledge alias

    # WHEN
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN
    cluster.done()
    assert [s.method for s in cluster.sent] == ["HEAD", "HEAD", "GET", "HEAD", "GET"]
    assert not result.created and not result.events_created and not result.knowledge_created


def test_bootstrap_that_loses_a_creation_race_carries_on(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    exists = {"type": "resource_already_exists_exception", "reason": f"index [{INDEX}] already exists"}
    cluster.reply(status=404).reply(status=404).reply(
        {"error": {**exists, "root_cause": [exists]}}, status=400
    )
    cluster.reply()  # the winner made the alias too
    cluster.reply()  # events alias exists
    cluster.reply(mapping_response())
    cluster.reply().reply(knowledge_mapping_response())  # knowledge alias exists

    # WHEN
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN
    cluster.done()
    assert not result.created


def test_bootstrap_refuses_an_existing_index_of_another_model(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply().reply().reply(mapping_response(dim=384, model="all-MiniLM-L6-v2"))

    # WHEN / THEN
    with pytest.raises(ConfigurationError) as exc:
        bootstrap(client, ALIAS, 1024, "amazon.titan-embed-text-v2:0")

    message = str(exc.value)
    assert "all-MiniLM-L6-v2" in message and "384" in message
    assert "amazon.titan-embed-text-v2:0" in message and "1024" in message
    assert "bootstrap" in message  # says what to do


@pytest.mark.parametrize(
    ("dim", "model", "needle"),
    [(DIM, "other-model", "other-model"), (16, MODEL, "16")],
)
def test_the_store_checks_the_index_meta_when_it_starts(
    client: OpenSearch, cluster: Cluster, dim: int, model: str, needle: str
) -> None:
    cluster.reply(mapping_response(dim=dim, model=model))

    with pytest.raises(ConfigurationError, match=needle):
        OpenSearchStore(client, ALIAS, DIM, MODEL)

    assert (cluster.sent[0].method, cluster.sent[0].path) == ("GET", "/mem,mem-events/_mapping")


def test_a_matching_index_passes_the_start_check(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(mapping_response())

    OpenSearchStore(client, ALIAS, DIM, MODEL)

    cluster.done()


def test_a_missing_index_is_a_configuration_error_that_names_the_bootstrap(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply(index_not_found(), status=404)

    with pytest.raises(ConfigurationError, match="agent-memory index bootstrap"):
        check_index(client, ALIAS, DIM, MODEL)


def test_an_index_of_an_older_schema_is_refused_naming_the_bootstrap_that_upgrades_it(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the alias over the index of the previous schema version
    old = mapping_response()
    mappings = old.pop(INDEX)
    mappings["mappings"]["_meta"]["schema_version"] = SCHEMA_VERSION - 1
    old[f"mem-v{SCHEMA_VERSION - 1}"] = mappings
    cluster.reply(old)

    # WHEN checking it, THEN it is refused as an older schema, naming the index and what to run
    with pytest.raises(OlderSchemaError, match="schema version") as exc:
        check_index(client, ALIAS, DIM, MODEL)
    assert exc.value.index == f"mem-v{SCHEMA_VERSION - 1}"
    assert "agent-memory index bootstrap" in exc.value.message and INDEX in exc.value.message


@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, "2", None])
def test_an_index_of_a_newer_or_unknown_schema_is_refused_without_upgrade(
    client: OpenSearch, cluster: Cluster, version: Any
) -> None:
    # GIVEN
    newer = mapping_response()
    newer[INDEX]["mappings"]["_meta"]["schema_version"] = version
    cluster.reply(newer)

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="schema version") as exc:
        check_index(client, ALIAS, DIM, MODEL)
    assert not isinstance(exc.value, OlderSchemaError)  # bootstrap must not try to "upgrade" it


def test_an_alias_over_a_foreign_index_is_refused(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    foreign = mapping_response()
    del foreign[INDEX]["mappings"]["_meta"]
    cluster.reply(foreign)

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="'mem'"):
        check_index(client, ALIAS, DIM, MODEL)


def test_status_reports_indexes_counts_and_meta(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply().reply({INDEX: {"aliases": {"mem": {}}}}).reply(mapping_response()).reply({"count": 42})
    cluster.reply(status=404)
    cluster.reply().reply({KINDEX: {"aliases": {"mem-knowledge": {}}}}).reply(knowledge_mapping_response())
    cluster.reply({"count": 7})

    # WHEN
    out = status(client, ALIAS)

    # THEN
    cluster.done()
    assert out["alias"] == ALIAS
    assert out["records"] == {
        "exists": True,
        "indices": [INDEX],
        "documents": 42,
        "meta": records_index_body(DIM, MODEL)["mappings"]["_meta"],
    }
    assert out["events"] == {"exists": False}
    assert out["knowledge"] == {
        "exists": True,
        "indices": [KINDEX],
        "documents": 7,
        "meta": knowledge_index_body(DIM, MODEL)["mappings"]["_meta"],
    }
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("HEAD", "/_alias/mem"),
        ("GET", "/_alias/mem"),
        ("GET", "/mem/_mapping"),
        ("POST", "/mem/_count"),
        ("HEAD", "/_alias/mem-events"),
        ("HEAD", "/_alias/mem-knowledge"),
        ("GET", "/_alias/mem-knowledge"),
        ("GET", "/mem-knowledge/_mapping"),
        ("POST", "/mem-knowledge/_count"),
    ]


# ------------------------------------------------------------------------------------------------
# Writes
# ------------------------------------------------------------------------------------------------


def test_put_is_one_bulk_with_deterministic_ids_routing_and_unit_vectors(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN two records of two agents, one a weekly summary with a half-open period
    working = record(expires_at=NOW + timedelta(days=30), source=Source(platform="slack", message_id="m-9"))
    summary = record(
        "sum_bbbbbbbbbbbbbbbb",
        agent="a2",
        grain=Grain.WEEKLY,
        time_key="2026-W47",
        kind=MemoryKind.SUMMARY,
        period_start=datetime(2026, 11, 16, tzinfo=UTC),
        period_end=datetime(2026, 11, 23, tzinfo=UTC),
    )
    cluster.reply(bulk_ok(2))

    # WHEN putting them with a vector that is not unit length
    store(client).put(
        [StoredRecord(working, np.full(DIM, 3.0, dtype=np.float32)), StoredRecord(summary, unit_vector(1))]
    )

    # THEN one _bulk request, writes only through an alias, NDJSON action + source pairs
    sent = cluster.sent[0]
    assert (sent.method, sent.path) == ("POST", "/_bulk")
    assert sent.params == {"require_alias": "true"}
    action, doc, action2, doc2 = sent.lines
    assert action == {"index": {"_index": "mem", "_id": "t1:a1:mem_aaaaaaaaaaaaaaaa", "routing": "t1:a1"}}
    assert action2 == {"index": {"_index": "mem", "_id": "t1:a2:sum_bbbbbbbbbbbbbbbb", "routing": "t1:a2"}}
    assert doc["id"] == "mem_aaaaaaaaaaaaaaaa" and doc["tenant_id"] == "t1" and doc["agent_id"] == "a1"
    assert doc["occurred_at"] == "2026-11-20T14:03:00.123456Z"  # fixed width, microseconds kept
    assert doc["span_start"] == doc["span_end"] == doc["occurred_at"]
    assert doc["expires_at"] == "2026-12-22T12:00:00.000000Z"
    assert doc["deleted_at"] is None
    assert doc["source"]["platform"] == "slack"
    assert np.allclose(doc["vector"], np.full(DIM, 1 / np.sqrt(DIM)), atol=1e-7)  # normalised
    assert doc2["span_start"] == "2026-11-16T00:00:00.000000Z"
    assert doc2["span_end"] == "2026-11-22T23:59:59.999999Z"  # a closed span: period end - 1µs


def test_speaker_and_context_are_written_in_the_document_and_read_back(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a conversation turn with its speaker and the turns before it
    context = "Alice: When do we launch?\nBob: Not before the audit.\nAlice: (this turn)"
    turn = record(
        role="user", speaker="Alice", conversation_id="c-1", kind=MemoryKind.CONVERSATION, context=context
    )
    cluster.reply(bulk_ok(1))

    # WHEN it is stored
    store(client).put([StoredRecord(turn, unit_vector(1.0))])

    # THEN the document carries both fields verbatim (context is never cut or left out of _source)
    _, doc = cluster.sent[0].lines
    assert doc["speaker"] == "Alice"
    assert doc["context"] == context
    assert doc["content"] == turn.content  # the context is never folded into the content
    # AND every document field is mapped (dynamic: strict would refuse the write otherwise)
    assert set(doc) <= set(records_index_body(DIM, MODEL)["mappings"]["properties"])

    # WHEN it is read back from that _source, THEN it is the same record
    cluster.reply({"docs": [{"found": True, "_source": doc}, {"found": False}]})
    assert store(client).get("t1", "a1", turn.id) == turn


def test_a_document_of_the_previous_schema_reads_as_a_record_without_speaker_or_context(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a document copied from a version 1 index: no speaker, no context keys at all
    old = source_of(record())
    del old["speaker"], old["context"]
    cluster.reply({"docs": [{"found": True, "_source": old}, {"found": False}]})

    # WHEN it is read
    found = store(client).get("t1", "a1", "mem_aaaaaaaaaaaaaaaa")

    # THEN it is a record with neither
    assert found is not None and found.speaker is None and found.context is None


def test_put_passes_the_configured_refresh(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(bulk_ok(1))

    store(client, refresh="wait_for").put([StoredRecord(record(), unit_vector(1))])

    assert cluster.sent[0].params == {"require_alias": "true", "refresh": "wait_for"}


def test_a_write_refreshes_by_default_so_a_stored_memory_is_searchable(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a store built with the defaults (as the container builds it)
    cluster.reply(bulk_ok(1))

    # WHEN a record is stored
    OpenSearchStore(client, ALIAS, DIM, MODEL, check=False).put([StoredRecord(record(), unit_vector(1))])

    # THEN the write refreshes its shard: the writer clears the pending mark only once a search
    # finds the memory, as on SQLite (the real engine otherwise answered nothing for ~1 s)
    assert cluster.sent[0].params == {"require_alias": "true", "refresh": "true"}


def test_put_refuses_a_vector_of_another_dimension_without_a_request(
    client: OpenSearch, cluster: Cluster
) -> None:
    with pytest.raises(ConfigurationError, match="dimension 8"):
        store(client).put([StoredRecord(record(), np.ones(DIM + 1, dtype=np.float32))])

    assert cluster.sent == []


@pytest.mark.parametrize(
    ("status_code", "error_type", "expected"),
    [
        (429, "es_rejected_execution_exception", DependencyError),
        (400, "mapper_parsing_exception", ConfigurationError),
    ],
)
def test_failed_bulk_items_raise_by_their_status(
    client: OpenSearch, cluster: Cluster, status_code: int, error_type: str, expected: type[Exception]
) -> None:
    failed = {
        "_index": INDEX,
        "_id": "x",
        "status": status_code,
        "error": {"type": error_type, "reason": "no"},
    }
    cluster.reply({"took": 3, "errors": True, "items": [{"index": failed}]})

    with pytest.raises(expected, match=str(status_code)):
        store(client).put([StoredRecord(record(), unit_vector(1))])


def test_add_alias_writes_an_alias_document_to_the_events_index(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(bulk_ok(1))

    # WHEN
    store(client).add_alias("t1", "a1", "mem_new", "mem_old")

    # THEN
    action, source = cluster.sent[0].lines
    assert action == {"index": {"_index": "mem-events", "_id": "alias:t1:a1:mem_new", "routing": "t1:a1"}}
    assert source == {
        "doc_type": "alias",
        "tenant_id": "t1",
        "agent_id": "a1",
        "alias_id": "mem_new",
        "record_id": "mem_old",
    }


def audit_event(at: datetime = NOW) -> AuditEvent:
    return AuditEvent("t1", "a1", "mem_aaaaaaaaaaaaaaaa", "forget", "key:dev", at)


def lookup_response(r: MemoryRecord | None) -> dict[str, Any]:
    first = {"_index": INDEX, "_id": "x", "found": r is not None}
    if r is not None:
        first["_source"] = source_of(r)
    return {"docs": [first, {"_index": "mem-events-v1", "_id": "y", "found": False}]}


def test_soft_delete_is_a_routed_scripted_update_then_an_audit_document(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(lookup_response(record()))
    cluster.reply({"_index": INDEX, "_id": "t1:a1:mem_aaaaaaaaaaaaaaaa", "result": "updated"})
    # WHEN
    cluster.reply(bulk_ok(1))

    # THEN
    assert store(client).soft_delete("t1", "a1", "mem_aaaaaaaaaaaaaaaa", audit_event()) is True

    update = cluster.sent[1]
    assert (update.method, update.path) == ("POST", "/mem/_update/t1:a1:mem_aaaaaaaaaaaaaaaa")
    assert update.params == {"routing": "t1:a1", "retry_on_conflict": "3"}
    assert update.body == {
        "script": {
            "source": SOFT_DELETE_SCRIPT,
            "lang": "painless",
            "params": {"tenant_id": "t1", "agent_id": "a1", "at": "2026-11-22T12:00:00.000000Z"},
        }
    }
    action, audit = cluster.sent[2].lines
    assert action["create"]["_index"] == "mem-events"
    assert action["create"]["routing"] == "t1:a1"
    assert action["create"]["_id"] == "audit:t1:a1:mem_aaaaaaaaaaaaaaaa:forget:2026-11-22T12:00:00.000000Z"
    assert isinstance(audit.pop("seq"), int)
    assert audit == {
        "doc_type": "audit",
        "tenant_id": "t1",
        "agent_id": "a1",
        "record_id": "mem_aaaaaaaaaaaaaaaa",
        "action": "forget",
        "actor": "key:dev",
        "at": "2026-11-22T12:00:00.000000Z",
        "detail": {},
    }


def test_the_soft_delete_script_guards_owner_liveness_and_expiry() -> None:
    # the script is the only place the liveness rule runs server side: pin its clauses
    for clause in (
        "s.tenant_id != params.tenant_id",
        "s.agent_id != params.agent_id",
        "s.deleted_at != null",
        "s.expires_at.compareTo(params.at) <= 0",
        "ctx.op = 'noop'",
        "s.deleted_at = params.at",
    ):
        assert clause in SOFT_DELETE_SCRIPT


def test_soft_delete_of_a_record_that_is_not_live_writes_no_audit(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(lookup_response(record()))
    # WHEN
    cluster.reply({"_index": INDEX, "_id": "x", "result": "noop"})

    # THEN
    assert store(client).soft_delete("t1", "a1", "mem_aaaaaaaaaaaaaaaa", audit_event()) is False

    cluster.done()
    assert len(cluster.sent) == 2


def test_soft_delete_of_an_unknown_id_sends_no_update(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(lookup_response(None))

    assert store(client).soft_delete("t1", "a1", "mem_zzzzzzzzzzzzzzzz", audit_event()) is False

    assert len(cluster.sent) == 1


def test_record_access_is_one_bulk_of_routed_scripted_updates(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(bulk_ok(2, "update"))

    # WHEN
    store(client).record_access("t1", "a1", ["mem_a", "mem_b", "mem_a"], NOW)

    # THEN
    sent = cluster.sent[0]
    assert (sent.method, sent.path, sent.params) == ("POST", "/_bulk", {"require_alias": "true"})
    assert len(sent.lines) == 4  # duplicates counted once
    action, script = sent.lines[0], sent.lines[1]
    assert action == {
        "update": {"_index": "mem", "_id": "t1:a1:mem_a", "routing": "t1:a1", "retry_on_conflict": 3}
    }
    assert script == {
        "script": {
            "source": ACCESS_SCRIPT,
            "lang": "painless",
            "params": {"tenant_id": "t1", "agent_id": "a1", "at": "2026-11-22T12:00:00.000000Z"},
        }
    }


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 503, "body": {"error": "unavailable"}},
        {"exception": OpenSearchConnectionError("N/A", "connection refused", None)},
    ],
)
def test_record_access_never_raises(client: OpenSearch, cluster: Cluster, failure: dict[str, Any]) -> None:
    for _ in range(4):  # the first try and three retries
        if "exception" in failure:
            cluster.fail(failure["exception"])
        else:
            cluster.reply(failure["body"], status=failure["status"])

    store(client).record_access("t1", "a1", ["mem_a"], NOW)

    cluster.done()


def test_delete_older_than_is_a_sliced_delete_by_query_over_every_agent_of_the_tenant(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply({"took": 147, "timed_out": False, "total": 3, "deleted": 3, "batches": 1, "failures": []})

    # WHEN
    deleted = store(client).delete_older_than("t1", Grain.DAILY, datetime(2026, 1, 1, tzinfo=UTC))

    # THEN
    sent = cluster.sent[0]
    assert deleted == 3
    assert (sent.method, sent.path) == ("POST", "/mem/_delete_by_query")
    assert sent.params == {"slices": "auto", "conflicts": "proceed", "wait_for_completion": "true"}
    assert "routing" not in sent.params  # every agent of the tenant: all shards
    assert sent.timeout == MAINTENANCE_TIMEOUT_S
    assert sent.body == {
        "query": {
            "bool": {
                "filter": [
                    {"term": {"tenant_id": "t1"}},
                    {"term": {"grain": "daily"}},
                    {"range": {"span_end": {"lt": "2026-01-01T00:00:00.000000Z"}}},
                ]
            }
        }
    }


def test_delete_older_than_with_failures_raises_so_retention_runs_again(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply({"took": 5, "deleted": 1, "failures": [{"index": INDEX, "cause": {"type": "x"}}]})

    with pytest.raises(DependencyError, match="safe to run again"):
        store(client).delete_older_than("t1", Grain.DAILY, NOW)


# ------------------------------------------------------------------------------------------------
# Reads
# ------------------------------------------------------------------------------------------------


def test_get_is_one_routed_mget_of_the_record_and_its_alias(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    r = record()
    # WHEN
    cluster.reply(lookup_response(r))

    # THEN
    assert store(client).get("t1", "a1", r.id) == r  # microseconds and all

    sent = cluster.sent[0]
    assert (sent.method, sent.path) == ("POST", "/_mget")
    assert sent.params == {"_source_excludes": "vector"}
    assert sent.body == {
        "docs": [
            {"_index": "mem", "_id": "t1:a1:mem_aaaaaaaaaaaaaaaa", "routing": "t1:a1"},
            {"_index": "mem-events", "_id": "alias:t1:a1:mem_aaaaaaaaaaaaaaaa", "routing": "t1:a1"},
        ]
    }


def test_get_follows_an_alias_to_its_record(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    target = record("mem_oldoldoldoldoldo")
    alias = {
        "tenant_id": "t1",
        "agent_id": "a1",
        "alias_id": "mem_new",
        "record_id": target.id,
        "doc_type": "alias",
    }
    cluster.reply({"docs": [{"found": False}, {"found": True, "_source": alias}]})
    # WHEN
    cluster.reply({"docs": [{"found": True, "_source": source_of(target)}]})

    # THEN
    assert store(client).get("t1", "a1", "mem_new") == target

    assert cluster.sent[1].body == {
        "docs": [{"_index": "mem", "_id": "t1:a1:mem_oldoldoldoldoldo", "routing": "t1:a1"}]
    }


def test_get_never_returns_another_agents_document(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(lookup_response(record(agent="someone-else")))

    assert store(client).get("t1", "a1", "mem_aaaaaaaaaaaaaaaa") is None


def test_search_puts_every_filter_inside_the_knn_clause_and_runs_bm25_in_the_same_msearch(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a k-NN hit (innerproduct score 1.8 = cosine 0.8), one in both lists, one lexical only
    a, b, c = record("mem_a"), record("mem_b"), record("mem_c")
    knn = search_response(hit(a, 1.8), hit(b, 1.25))
    bm25 = search_response(hit(b, 4.0), hit(c, 2.0))
    cluster.reply({"took": 3, "responses": [{**knn, "status": 200}, {**bm25, "status": 200}]})
    stored_c = unit_vector(1.0, 1.0)  # cosine to the query (1, 0, ...) = 0.7071
    cluster.reply(
        {
            "docs": [
                {"found": True, "_source": {"tenant_id": "t1", "agent_id": "a1", "vector": stored_c.tolist()}}
            ]
        }
    )
    query = StoreQuery(
        tenant_id="t1",
        agent_id="a1",
        now=NOW,
        grains=(Grain.WORKING, Grain.DAILY),
        vector=unit_vector(1.0),
        text="When is the launch?",
        start=datetime(2026, 11, 1, tzinfo=UTC),
        end=NOW,
        kinds=(MemoryKind.DECISION,),
        tags=("launch",),
        user_id="u-7",
        limit=40,
    )

    # WHEN searching
    candidates = store(client).search(query)

    # THEN one routed _msearch: k-NN with the filters inside the knn clause, then BM25
    sent = cluster.sent[0]
    assert (sent.method, sent.path) == ("POST", "/_msearch")
    header, knn_body, header2, bm25_body = sent.lines
    assert header == header2 == {"index": "mem", "routing": "t1:a1"}
    assert set(knn_body) == {"size", "_source", "query"}
    assert knn_body["size"] == 40
    assert knn_body["_source"] == {"excludes": ["vector", "spaces"]}
    assert list(knn_body["query"]) == ["knn"]  # no bool around it: no post-filtering
    clause = knn_body["query"]["knn"]["vector"]
    assert clause["k"] == 40
    assert np.allclose(clause["vector"], unit_vector(1.0))
    filters = clause["filter"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}} in filters
    assert {
        "bool": {
            "should": [
                {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                {"range": {"expires_at": {"gt": "2026-11-22T12:00:00.000000Z"}}},
            ],
            "minimum_should_match": 1,
        }
    } in filters
    assert {"terms": {"grain": ["working", "daily"]}} in filters
    assert {"range": {"span_start": {"lte": "2026-11-22T12:00:00.000000Z"}}} in filters  # span overlap
    assert {"range": {"span_end": {"gte": "2026-11-01T00:00:00.000000Z"}}} in filters
    assert {"terms": {"kind": ["decision"]}} in filters
    assert {"terms": {"tags": ["launch"]}} in filters
    assert {"term": {"user_id": "u-7"}} in filters
    assert bm25_body["query"]["bool"]["filter"] == filters  # the same filters, same order
    assert bm25_body["query"]["bool"]["must"] == [
        {
            "multi_match": {
                "query": "when is the launch",
                "fields": ["lexical"],
                "type": "cross_fields",
            }
        }
    ]
    # and the lexical-only hit's vector is read (routed) to compute its exact cosine
    assert cluster.sent[1].body == {"docs": [{"_index": "mem", "_id": "t1:a1:mem_c", "routing": "t1:a1"}]}
    assert cluster.sent[1].params == {"_source_includes": "vector,tenant_id,agent_id"}

    # AND the candidates: vector hits first, cosine from the score, lexical = score / best score
    assert [x.record.id for x in candidates] == ["mem_a", "mem_b", "mem_c"]
    assert candidates[0].similarity == pytest.approx(0.8)
    assert candidates[1].similarity == pytest.approx(0.25)
    assert candidates[2].similarity == pytest.approx(1 / np.sqrt(2), abs=1e-6)
    assert [x.lexical for x in candidates] == [None, 1.0, 0.5]


def test_search_without_a_query_lists_the_newest_live_records(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(search_response(hit(record("mem_b"), 0.0), hit(record("mem_a"), 0.0)))

    # WHEN
    candidates = store(client).search(
        StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, text="  ?! ", limit=5)
    )

    # THEN
    sent = cluster.sent[0]
    assert (sent.method, sent.path, sent.params) == ("POST", "/mem/_search", {"routing": "t1:a1"})
    assert sent.body["sort"] == [{"occurred_at": {"order": "desc"}}, {"id": {"order": "desc"}}]
    assert sent.body["size"] == 5
    assert_scoped(sent.body["query"]["bool"]["filter"])
    assert [c.record.id for c in candidates] == ["mem_b", "mem_a"]
    assert all(c.similarity is None and c.lexical is None for c in candidates)


def test_nearest_is_a_filtered_knn_query_for_one_grain(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(search_response(hit(record(), 1.95)))

    # WHEN
    found = store(client).nearest(NearestQuery("t1", "a1", Grain.WORKING, unit_vector(1.0), NOW))

    # THEN
    assert found is not None
    assert found[0].id == "mem_aaaaaaaaaaaaaaaa"
    assert found[1] == pytest.approx(0.95)
    sent = cluster.sent[0]
    assert (sent.path, sent.params) == ("/mem/_search", {"routing": "t1:a1"})
    assert sent.body["size"] == 1
    clause = sent.body["query"]["knn"]["vector"]
    assert clause["k"] == NEAREST_K
    filters = clause["filter"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"term": {"grain": "working"}} in filters
    assert {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}} in filters


def test_nearest_filters_on_the_neighbourhood_inside_the_knn_clause(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    from agent_memory.ports import Neighbourhood

    cluster.reply(search_response())
    within = Neighbourhood(
        user_id="u1", match_user=True, match_conversation=True, since=NOW - timedelta(hours=12), until=NOW
    )

    # WHEN
    store(client).nearest(NearestQuery("t1", "a1", Grain.WORKING, unit_vector(1.0), NOW, within=within))

    # THEN
    filters = cluster.sent[0].body["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"term": {"user_id": "u1"}} in filters
    # no conversation on the write: only records without one may merge with it
    assert {"bool": {"must_not": [{"exists": {"field": "conversation_id"}}]}} in filters
    assert {"range": {"occurred_at": {"gte": ts(NOW - timedelta(hours=12)), "lt": ts(NOW)}}} in filters


def test_summaries_of_a_user_are_read_by_user_ids_in_pages(client: OpenSearch, cluster: Cluster) -> None:
    # WHEN
    cluster.reply(search_response())

    # THEN
    assert store(client).summaries_of_user("t1", "a1", "u1", NOW) == []

    sent = cluster.sent[0]
    assert sent.params == {"routing": "t1:a1"}
    filters = sent.body["query"]["bool"]["filter"]
    assert_scoped(filters)
    assert {"term": {"user_ids": "u1"}} in filters
    assert {"bool": {"must_not": [{"term": {"grain": "working"}}]}} in filters


def test_nearest_in_an_empty_agent_is_none(client: OpenSearch, cluster: Cluster) -> None:
    cluster.reply(search_response())

    assert store(client).nearest(NearestQuery("t1", "a1", Grain.WORKING, unit_vector(1.0), NOW)) is None


@pytest.mark.parametrize("cosine", [-1.0, -0.5, -1e-6, 0.0, 0.3, 0.92, 1.0])
def test_cosine_from_score_inverts_the_documented_innerproduct_score(cosine: float) -> None:
    # OpenSearch's innerproduct score, as documented for faiss and lucene
    score = 1 + cosine if cosine >= 0 else 1 / (1 - cosine)

    assert cosine_from_score(score) == pytest.approx(cosine, abs=1e-12)


def test_a_score_rounded_above_the_maximum_is_still_a_cosine() -> None:
    assert cosine_from_score(2.0000002) == 1.0


def test_list_pages_with_search_after_and_a_cursor_bound_to_the_agent(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a first page of 2 with one more record behind it
    ms = 1_795_000_000_000
    hits = [hit(record(f"mem_{i}"), 0.0, sort=[ms - i, f"mem_{i}"]) for i in range(3)]
    cluster.reply(search_response(*hits)).reply(search_response(hits[2]))
    s = store(client)

    # WHEN listing two pages
    first = s.list(ListQuery("t1", "a1", NOW, grain=Grain.WORKING, limit=2))
    second = s.list(ListQuery("t1", "a1", NOW, grain=Grain.WORKING, limit=2, cursor=first.next_cursor))

    # THEN limit+1 newest first, and the second request resumes after the first page's last sort values
    body = cluster.sent[0].body
    assert body["size"] == 3
    assert body["sort"] == [{"occurred_at": {"order": "desc"}}, {"id": {"order": "desc"}}]
    assert {"term": {"grain": "working"}} in body["query"]["bool"]["filter"]
    assert_scoped(body["query"]["bool"]["filter"])
    assert cluster.sent[1].body["search_after"] == [ms - 1, "mem_1"]
    assert [r.id for r in first.records] == ["mem_0", "mem_1"]
    assert [r.id for r in second.records] == ["mem_2"] and second.next_cursor is None


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64 json!",
        encode_cursor({"t": "t2", "a": "a1", "g": "working", "s": [1, "mem_1"]}),  # another tenant's
        encode_cursor({"t": "t1", "a": "a1", "g": "daily", "s": [1, "mem_1"]}),  # another filter
        encode_cursor({"t": "t1", "a": "a1", "g": "working", "s": ["1", "mem_1"]}),  # forged values
    ],
)
def test_a_forged_or_foreign_list_cursor_is_a_validation_error(
    client: OpenSearch, cluster: Cluster, cursor: str
) -> None:
    with pytest.raises(ValidationFailedError) as exc:
        store(client).list(ListQuery("t1", "a1", NOW, grain=Grain.WORKING, cursor=cursor))

    assert cluster.sent == []
    # the details take the API's error-detail shape, so the handler can render the 400
    assert [ErrorDetail.model_validate(d).loc for d in exc.value.details] == [["cursor"]]


def test_stats_counts_live_records_per_grain_with_the_exact_oldest_and_newest(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    old, new = "2026-01-02T03:04:05.678901Z", "2026-11-20T14:03:00.123456Z"
    cluster.reply(
        {
            **search_response(),
            "aggregations": {
                "grains": {
                    "buckets": [{"key": "working", "doc_count": 120}, {"key": "daily", "doc_count": 3}]
                },
                "oldest": {"hits": {"hits": [{"_source": {"occurred_at": old}}]}},
                "newest": {"hits": {"hits": [{"_source": {"occurred_at": new}}]}},
            },
        }
    )

    # WHEN
    stats = store(client).stats("t1", "a1", NOW)

    # THEN
    assert stats.records == {"working": 120, "daily": 3}
    assert stats.oldest == datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert stats.newest == datetime(2026, 11, 20, 14, 3, 0, 123456, tzinfo=UTC)
    body = cluster.sent[0].body
    assert cluster.sent[0].params == {"routing": "t1:a1"}
    assert body["size"] == 0
    assert body["aggs"]["grains"] == {"terms": {"field": "grain", "size": len(Grain)}}
    assert body["aggs"]["oldest"]["top_hits"]["sort"][0] == {"occurred_at": {"order": "asc"}}
    assert body["aggs"]["newest"]["top_hits"]["sort"][0] == {"occurred_at": {"order": "desc"}}
    assert_scoped(body["query"]["bool"]["filter"])


def composite_response(pairs: list[tuple[str, str]], after: tuple[str, str] | None) -> dict[str, Any]:
    agg: dict[str, Any] = {
        "buckets": [{"key": {"tenant_id": t, "agent_id": a}, "doc_count": 1} for t, a in pairs]
    }
    if after:
        agg["after_key"] = {"tenant_id": after[0], "agent_id": after[1]}
    return {**search_response(), "aggregations": {"agents": agg}}


def test_agents_with_records_pages_a_composite_aggregation_with_after_key(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN three agents, two per page
    cluster.reply(composite_response([("t1", "a1"), ("t1", "a2")], after=("t1", "a2")))
    cluster.reply(composite_response([("t2", "a1")], after=("t2", "a1")))
    s = store(client)
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)

    # WHEN paging through
    first = s.agents_with_records(PeriodScan(Grain.DAILY, start, end, page_size=2))
    second = s.agents_with_records(PeriodScan(Grain.DAILY, start, end, cursor=first.next_cursor, page_size=2))

    # THEN a composite over (tenant_id, agent_id) terms, unrouted, filtered by grain, overlap, live
    sent = cluster.sent[0]
    assert (sent.method, sent.path, sent.params) == ("POST", "/mem/_search", {})
    assert sent.body["size"] == 0
    assert sent.body["aggs"] == {
        "agents": {
            "composite": {
                "size": 2,
                "sources": [
                    {"tenant_id": {"terms": {"field": "tenant_id"}}},
                    {"agent_id": {"terms": {"field": "agent_id"}}},
                ],
            }
        }
    }
    assert sent.body["query"]["bool"]["filter"] == [
        {"term": {"grain": "daily"}},
        {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}},
        {"range": {"span_start": {"lt": "2026-11-23T00:00:00.000000Z"}}},  # [start, end): end excluded
        {"range": {"span_end": {"gte": "2026-11-16T00:00:00.000000Z"}}},
    ]
    assert cluster.sent[1].body["aggs"]["agents"]["composite"]["after"] == {
        "tenant_id": "t1",
        "agent_id": "a2",
    }
    assert [(a.tenant_id, a.agent_id) for a in first.agents + second.agents] == [
        ("t1", "a1"),
        ("t1", "a2"),
        ("t2", "a1"),
    ]
    assert first.next_cursor is not None
    assert second.next_cursor is None  # a short page is the last one


def test_agents_with_records_of_one_tenant_filters_on_it(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply(composite_response([("t1", "a1")], after=("t1", "a1")))
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)
    # WHEN one tenant's agents are asked for
    store(client).agents_with_records(PeriodScan(Grain.DAILY, start, end, tenant_id="t1"))
    # THEN the tenant is a term of the filter, beside grain, liveness and overlap
    assert cluster.sent[0].body["query"]["bool"]["filter"][-1] == {"term": {"tenant_id": "t1"}}


def test_an_agents_cursor_of_another_grain_is_a_validation_error(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    cluster.reply(composite_response([("t1", "a1")], after=("t1", "a1")))
    s = store(client)
    start, end = datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)
    page = s.agents_with_records(PeriodScan(Grain.DAILY, start, end, page_size=1))

    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        s.agents_with_records(PeriodScan(Grain.WEEKLY, start, end, cursor=page.next_cursor, page_size=1))


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------


def test_throttling_is_retried_by_the_transport_before_it_succeeds(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    throttled = {"error": {"type": "es_rejected_execution_exception", "reason": "queue full"}, "status": 429}
    # WHEN
    cluster.reply(throttled, status=429).reply(throttled, status=429).reply(lookup_response(None))

    # THEN
    assert store(client).get("t1", "a1", "mem_x") is None

    cluster.done()
    assert len(cluster.sent) == 3


@pytest.mark.parametrize("status_code", [429, 502, 503, 504])
def test_persistent_throttling_or_unavailability_is_a_dependency_error(
    client: OpenSearch, cluster: Cluster, status_code: int
) -> None:
    for _ in range(4):
        cluster.reply({"error": "unavailable"}, status=status_code)

    with pytest.raises(DependencyError, match=str(status_code)):
        store(client).get("t1", "a1", "mem_x")


def test_an_unreachable_cluster_is_a_dependency_error(client: OpenSearch, cluster: Cluster) -> None:
    for _ in range(4):
        cluster.fail(OpenSearchConnectionError("N/A", "connection refused", None))

    with pytest.raises(DependencyError, match="unreachable"):
        store(client).search(StoreQuery(tenant_id="t1", agent_id="a1", now=NOW))


def test_access_denied_is_a_configuration_error_pointing_at_the_policies(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply({"message": "no permissions for [indices:data/read/search]"}, status=403)

    with pytest.raises(ConfigurationError, match="access policy"):
        store(client).stats("t1", "a1", NOW)


def test_an_msearch_entry_on_a_missing_index_is_a_configuration_error(
    client: OpenSearch, cluster: Cluster
) -> None:
    cluster.reply({"took": 1, "responses": [index_not_found()]})

    with pytest.raises(ConfigurationError, match="bootstrap"):
        store(client).search(StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, vector=unit_vector(1.0)))
