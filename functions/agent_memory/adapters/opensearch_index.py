"""The OpenSearch indexes behind the memory store: their design, bootstrap, check and status.

Two indexes, each a versioned index behind an alias so it can be re-indexed without touching
configuration (``agent-memory`` → ``agent-memory-v3``):

- **records** (``{alias}``): one document per memory record, ``_id`` = record id, with its
  embedding in a ``knn_vector`` field and every filterable field mapped explicitly;
- **events** (``{alias}-events``): small side documents — record aliases (a write merged into an
  existing record) and the audit trail of forgets. Kept out of the records index so a record's
  overwrite (``put``) can never drop its aliases, and so no record query needs a doc-type filter.

Vector design (see docs/opensearch.md for the sources):

- HNSW on **faiss** (default) or **lucene**; nmslib is deprecated, refused by OpenSearch 3.x and by
  Serverless. Both support *efficient filtering*: the filter runs inside the graph search, so a
  filtered query still returns ``k`` hits.
- Space type **innerproduct**. Embeddings are L2-normalised (the store re-normalises defensively),
  so the inner product *is* the cosine. faiss supports ``cosinesimil`` only from 2.19, while
  ``innerproduct`` works on faiss from 2.9 (efficient filtering) and on lucene from 2.13, and on
  Serverless, so one formula holds everywhere. OpenSearch turns the inner product ``d`` into a
  positive score (faiss and lucene alike): ``score = 1 + d`` if ``d >= 0`` else ``1 / (1 - d)``.
  `cosine_from_score` inverts it exactly: ``d = score - 1`` if ``score >= 1`` else
  ``1 - 1 / score`` (float32 rounding, < 1e-6).

Text (``content``, ``topic``, ``context``, the speaker's name) is analysed by `TEXT_ANALYZER`:
Porter stems, diacritics folded, and the domain's English stopwords dropped from queries — the
matching of the SQLite store's FTS5 index, so a word finds the same records on both stores.

Schema versions: a mapping change bumps `SCHEMA_VERSION` and with it the index name. `bootstrap`
finding the alias over an index of an older version copies it into the new one (``_reindex``) and
moves the alias in one atomic ``_aliases`` request (`upgrade_records_index`); `check_index`
refuses to run against an older or newer version than the code's.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from opensearchpy import OpenSearch, RequestError

from agent_memory.adapters.opensearch_client import error_type, os_errors
from agent_memory.domain.words import STOPWORDS
from agent_memory.errors import ConfigurationError, DependencyError

Engine = Literal["faiss", "lucene"]

#: Bump when the mapping changes; the index name carries it (``{alias}-v{N}``). 2: ``speaker``
#: and ``context`` fields, and the English analyzer on every text field. 3: ``last_seen_at`` and
#: ``merged_from`` (what a merged record absorbed), ``user_ids`` (a summary's end users).
SCHEMA_VERSION = 3
EVENTS_SCHEMA_VERSION = 1
SPACE_TYPE = "innerproduct"
VECTOR_FIELD = "vector"
ENGINES: tuple[str, ...] = ("faiss", "lucene")
#: HNSW graph parameters: the documented defaults for m, a larger build beam for better recall.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128

_ALIAS = re.compile(r"^[a-z0-9][a-z0-9._-]{0,200}$")

_KEYWORD: dict[str, Any] = {"type": "keyword"}
_DATE: dict[str, Any] = {"type": "date"}

#: The analyzers of every searched text field (``content``, ``topic``, ``context`` and
#: ``speaker.text``), built to match exactly what the SQLite store's FTS5 index matches:
#:
#: - custom, not the built-in ``english`` analyzer, for ``asciifolding``: "café" finds "cafe",
#:   as FTS5's ``unicode61 remove_diacritics 2`` tokenizer does;
#: - ``porter_stem``, the very algorithm of FTS5's ``porter`` tokenizer, so both stores reduce a
#:   word to the same stem ("camping", "camped" → "camp"); ``light_english`` is another stemmer
#:   (KStem) and would disagree with SQLite on some words;
#: - stopwords at *query* time only (`TEXT_SEARCH_ANALYZER`), and the list is the domain's
#:   (`agent_memory.domain.words.STOPWORDS`, the one SQLite drops from query words), not
#:   Lucene's ``_english_`` (33 words, which keeps "what", "did", "about"...). The index keeps
#:   every word, as SQLite's does, so a change of the list needs no reindex: it is an analysis
#:   setting (close the index, update it, open it).
#:
#: The possessive filter drops "'s" (SQLite splits "Alice's" into "alice" and the stopword "s").
TEXT_ANALYZER = "memory_english"
TEXT_SEARCH_ANALYZER = "memory_english_query"
_POSSESSIVE = "memory_english_possessive"
_STOPWORDS = "memory_stopwords"
ANALYSIS: dict[str, Any] = {
    "filter": {
        _POSSESSIVE: {"type": "stemmer", "language": "possessive_english"},
        _STOPWORDS: {"type": "stop", "stopwords": sorted(STOPWORDS)},
    },
    "analyzer": {
        TEXT_ANALYZER: {
            "type": "custom",
            "tokenizer": "standard",
            "filter": [_POSSESSIVE, "lowercase", "asciifolding", "porter_stem"],
        },
        TEXT_SEARCH_ANALYZER: {
            "type": "custom",
            "tokenizer": "standard",
            "filter": [_POSSESSIVE, "lowercase", "asciifolding", _STOPWORDS, "porter_stem"],
        },
    },
}
_TEXT: dict[str, Any] = {"type": "text", "analyzer": TEXT_ANALYZER, "search_analyzer": TEXT_SEARCH_ANALYZER}

#: Seconds `bootstrap` waits for each copy of an older index: the stack's bootstrap function
#: runs for 5 minutes. A copy still running then goes on in the cluster; run bootstrap again.
UPGRADE_WAIT_S = 240.0
#: Seconds between two looks at a running copy.
UPGRADE_POLL_S = 2.0
#: A change stamped up to this long before the new index was created may have been missed by
#: the first copy (the writers' clocks are not the cluster's), so the catch-up copies it again.
CATCH_UP_MARGIN = timedelta(minutes=5)
#: The times a write or an update of a record stamps: a record changed since the first copy
#: began has one of them at or after that instant.
_CHANGE_FIELDS = ("created_at", "updated_at", "deleted_at", "last_accessed_at")


def cosine_from_score(score: float) -> float:
    """The inner product (= cosine of unit vectors) behind an ``innerproduct`` k-NN score.

    Clamped to [-1, 1]: float32 rounding can put the product of two equal unit vectors a hair
    above 1.
    """
    cosine = score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score
    return min(1.0, max(-1.0, cosine))


def records_index_name(alias: str) -> str:
    return f"{alias}-v{SCHEMA_VERSION}"


def events_alias_name(alias: str) -> str:
    return f"{alias}-events"


def events_index_name(alias: str) -> str:
    return f"{events_alias_name(alias)}-v{EVENTS_SCHEMA_VERSION}"


def records_meta(dimension: int, model_id: str, engine: Engine) -> dict[str, Any]:
    """What a running deployment checks at start: vectors of another model are not comparable."""
    return {
        "kind": "records",
        "schema_version": SCHEMA_VERSION,
        "embedding_model_id": model_id,
        "dimension": dimension,
        "engine": engine,
        "space_type": SPACE_TYPE,
    }


def records_index_body(
    dimension: int, model_id: str, engine: Engine = "faiss", serverless: bool = False
) -> dict[str, Any]:
    """The create-index body of the records index (settings + mappings).

    Every field a query filters on is a ``keyword``, ``date``, ``float`` or ``integer``;
    ``content``, ``topic``, ``context`` and ``speaker.text`` are ``text`` for BM25 (`ANALYSIS`);
    ``metadata`` is stored but not indexed (``enabled: false``), so free-form client JSON can
    never explode the mapping; ``dynamic: strict`` refuses any field not listed.
    ``span_start``/``span_end`` are derived at write time (a summary's period, or ``occurred_at``
    twice) so a time window is two range filters. ``context`` (the turns before a conversation
    turn) is searched and stored in ``_source`` like any field, so records round-trip.
    """
    if engine not in ENGINES:
        raise ConfigurationError(f"k-NN engine {engine!r} is not supported: use one of {', '.join(ENGINES)}")
    mappings: dict[str, Any] = {
        "dynamic": "strict",
        "_meta": records_meta(dimension, model_id, engine),
        "properties": {
            "id": _KEYWORD,
            "tenant_id": _KEYWORD,
            "agent_id": _KEYWORD,
            "user_id": _KEYWORD,
            "grain": _KEYWORD,
            "time_key": _KEYWORD,
            "period_start": _DATE,
            "period_end": _DATE,
            "span_start": _DATE,
            "span_end": _DATE,
            "kind": _KEYWORD,
            "role": _KEYWORD,
            "speaker": {**_KEYWORD, "fields": {"text": _TEXT}},
            "conversation_id": _KEYWORD,
            "content": _TEXT,
            "context": _TEXT,
            "topic": {**_TEXT, "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
            "topic_raw": {"type": "keyword", "index": False, "doc_values": False},
            "importance": {"type": "float"},
            "tags": _KEYWORD,
            "source": {
                "properties": {
                    "platform": _KEYWORD,
                    "channel_id": _KEYWORD,
                    "thread_id": _KEYWORD,
                    "message_id": _KEYWORD,
                    "url": {"type": "keyword", "index": False, "doc_values": False},
                }
            },
            "links": {
                "properties": {
                    "entity_type": _KEYWORD,
                    "entity_id": _KEYWORD,
                    "weight": {"type": "float"},
                }
            },
            "metadata": {"type": "object", "enabled": False},
            "source_ids": _KEYWORD,
            "content_hash": _KEYWORD,
            "access_count": {"type": "integer"},
            "last_accessed_at": _DATE,
            "created_at": _DATE,
            "updated_at": _DATE,
            "occurred_at": _DATE,
            "expires_at": _DATE,
            "deleted_at": _DATE,
            "last_seen_at": _DATE,
            "user_ids": _KEYWORD,
            # What a merged record absorbed: read back with the record, never searched.
            "merged_from": {"type": "object", "enabled": False},
            VECTOR_FIELD: {
                "type": "knn_vector",
                "dimension": dimension,
                "method": {
                    "name": "hnsw",
                    "engine": engine,
                    "space_type": SPACE_TYPE,
                    "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
                },
            },
        },
    }
    if not serverless:
        # Every document is routed by ``tenant:agent``: one agent's memory lives on one shard,
        # so its queries touch one shard, and a write without routing is refused.
        mappings["_routing"] = {"required": True}
    # A copy: the field definitions are shared module constants, and callers may edit the body.
    return copy.deepcopy({"settings": {"index": {"knn": True, "analysis": ANALYSIS}}, "mappings": mappings})


def events_index_body(serverless: bool = False) -> dict[str, Any]:
    """The events index: record aliases (``doc_type: alias``) and audit events (``audit``)."""
    mappings: dict[str, Any] = {
        "dynamic": "strict",
        "_meta": {"kind": "events", "schema_version": EVENTS_SCHEMA_VERSION},
        "properties": {
            "doc_type": _KEYWORD,
            "tenant_id": _KEYWORD,
            "agent_id": _KEYWORD,
            "record_id": _KEYWORD,
            "alias_id": _KEYWORD,
            "action": _KEYWORD,
            "actor": _KEYWORD,
            "at": _DATE,
            "detail": {"type": "object", "enabled": False},
        },
    }
    if not serverless:
        mappings["_routing"] = {"required": True}
    return {"mappings": mappings}


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    alias: str
    index: str
    created: bool
    events_alias: str
    events_index: str
    events_created: bool
    engine: str
    #: The index of an older schema that was copied into ``index`` (the alias moved off it).
    upgraded_from: str | None = None


class OlderSchemaError(ConfigurationError):
    """The alias points at a records index of an older schema: `bootstrap` upgrades it."""

    def __init__(self, message: str, index: str, engine: str | None) -> None:
        super().__init__(message)
        self.index = index
        self.engine = engine


def _check_alias_name(alias: str) -> None:
    if not _ALIAS.match(alias) or alias.endswith("-events"):
        raise ConfigurationError(
            f"invalid OpenSearch index alias {alias!r}: lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit, and not ending in '-events'"
        )


def _ensure(client: OpenSearch, alias: str, index: str, body: dict[str, Any], serverless: bool) -> bool:
    """Create ``index`` with ``alias`` over it unless the alias exists. True if created here.

    The index and its alias are created in one request, so there is no window in which the
    index exists without its alias. A concurrent bootstrap that loses the race sees
    ``resource_already_exists_exception`` and carries on.
    """
    alias_body: dict[str, Any] = {} if serverless else {"is_write_index": True}
    with os_errors(f"bootstrapping {alias}"):
        if client.indices.exists_alias(name=alias):
            return False
        if client.indices.exists(index=index):
            client.indices.put_alias(index=index, name=alias, body=alias_body)
            return False
        try:
            client.indices.create(index=index, body={**body, "aliases": {alias: alias_body}})
        except RequestError as exc:
            if error_type(exc) != "resource_already_exists_exception":
                raise
            if not client.indices.exists_alias(name=alias):
                client.indices.put_alias(index=index, name=alias, body=alias_body)
            return False
    return True


def bootstrap(
    client: OpenSearch,
    alias: str,
    dimension: int,
    model_id: str,
    *,
    engine: Engine = "faiss",
    serverless: bool = False,
    wait_s: float = UPGRADE_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
) -> BootstrapResult:
    """Create the records and events indexes with their aliases, then check them. Idempotent.

    Safe to run on every deployment (CDK custom resource) and by hand (CLI): an existing index is
    left as it is and only checked — a dimension or model mismatch raises `ConfigurationError`.
    An existing records index of an older schema version is upgraded (`upgrade_records_index`):
    copied into the index of this version, keeping its k-NN engine, and the alias moved to it.
    """
    _check_alias_name(alias)
    index = records_index_name(alias)
    created = _ensure(
        client, alias, index, records_index_body(dimension, model_id, engine, serverless), serverless
    )
    events_alias, events_index = events_alias_name(alias), events_index_name(alias)
    events_created = _ensure(client, events_alias, events_index, events_index_body(serverless), serverless)
    try:
        check_index(client, alias, dimension, model_id)
    except OlderSchemaError as older:
        kept: Engine = "lucene" if older.engine == "lucene" else "faiss"
        upgrade_records_index(
            client,
            alias,
            older.index,
            dimension,
            model_id,
            engine=kept,
            serverless=serverless,
            wait_s=wait_s,
            sleep=sleep,
        )
        check_index(client, alias, dimension, model_id)
        return BootstrapResult(
            alias, index, True, events_alias, events_index, events_created, kept, upgraded_from=older.index
        )
    return BootstrapResult(alias, index, created, events_alias, events_index, events_created, engine)


def check_index(client: OpenSearch, alias: str, dimension: int, model_id: str) -> None:
    """Refuse to run against an index built for another embedding model, dimension or schema.

    One request: the mappings behind both aliases. Raises `ConfigurationError` saying what the
    index holds, what the settings ask for, and what to do — `OlderSchemaError` for a records
    index of an older schema version, which `bootstrap` knows how to upgrade.
    """
    events_alias = events_alias_name(alias)
    with os_errors(f"checking the index behind {alias}", alias):
        mappings: dict[str, Any] = client.indices.get_mapping(index=f"{alias},{events_alias}")
    records = {n: m.get("mappings", {}) for n, m in mappings.items() if _meta_of(m).get("kind") == "records"}
    events = [n for n, m in mappings.items() if _meta_of(m).get("kind") == "events"]
    if not records or not events:
        missing = alias if not records else events_alias
        raise ConfigurationError(
            f"the OpenSearch alias {missing!r} does not point at an index made by `agent-memory index "
            "bootstrap` (no agent-memory _meta in its mapping); point the alias setting elsewhere or "
            "run the bootstrap on a fresh alias"
        )
    for name, mapping in sorted(records.items()):
        _check_records_mapping(name, mapping, alias, dimension, model_id)


def _check_records_mapping(
    name: str, mapping: dict[str, Any], alias: str, dimension: int, model_id: str
) -> None:
    """One records index against the deployment: model and dimension first (an older index of
    another model is not upgraded: its vectors must be re-embedded), then the schema version."""
    meta = mapping.get("_meta", {})
    stored_dim = mapping.get("properties", {}).get(VECTOR_FIELD, {}).get("dimension", meta.get("dimension"))
    stored_model = meta.get("embedding_model_id")
    if stored_dim != dimension or meta.get("dimension") != dimension or stored_model != model_id:
        raise ConfigurationError(
            f"OpenSearch index {name} (alias {alias}) holds vectors of model {stored_model!r} with "
            f"dimension {stored_dim}, but this deployment embeds with {model_id!r} (dimension "
            f"{dimension}). Vectors of different models cannot be compared: restore the previous "
            "embedding settings, or set AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS to a new alias, run "
            "`agent-memory index bootstrap` and re-embed the memories into it."
        )
    version = meta.get("schema_version")
    if version == SCHEMA_VERSION:
        return
    if isinstance(version, int) and not isinstance(version, bool) and version < SCHEMA_VERSION:
        raise OlderSchemaError(
            f"OpenSearch index {name} (alias {alias}) has schema version {version}, this code needs "
            f"{SCHEMA_VERSION}: run `agent-memory index bootstrap` (every deployment runs it), which "
            f"copies {name} into {records_index_name(alias)} and moves the alias",
            index=name,
            engine=meta.get("engine") if isinstance(meta.get("engine"), str) else None,
        )
    raise ConfigurationError(
        f"OpenSearch index {name} (alias {alias}) has schema version {version!r}, not the "
        f"{SCHEMA_VERSION} this code reads: it was made by another version of agent-memory; deploy "
        "that version, or move the alias back to the index this version made"
    )


def upgrade_records_index(
    client: OpenSearch,
    alias: str,
    old: str,
    dimension: int,
    model_id: str,
    *,
    engine: Engine = "faiss",
    serverless: bool = False,
    wait_s: float = UPGRADE_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Copy the records index ``old`` into this schema's index and move ``alias`` onto it.

    Writes go on through the alias while the bulk of the data is copied, so the copy runs twice:

    1. create ``{alias}-v{SCHEMA_VERSION}`` (no alias yet) and check its ``_meta``;
    2. ``_reindex`` everything with ``op_type: create``, ``conflicts: proceed``: a re-run (after
       a copy that outlived `wait_s`) skips what is already there instead of copying it again;
    3. block writes on ``old`` (writers get an error and retry: their queue redelivers);
    4. ``_reindex`` again, overwriting, every record stamped (created, updated, forgotten or
       accessed) since the new index was created, less `CATCH_UP_MARGIN`: what changed while
       step 2 ran;
    5. move the alias in one ``_aliases`` request (remove from ``old``, add to the new index as
       write index): readers and writers switch at once, never see neither or both.

    ``old`` is kept, write-blocked, for the operator to delete once satisfied. A failure in steps
    3-5 lifts the block again before it raises, so the deployment that failed leaves the service
    as it was. Serverless has no ``_reindex`` nor index blocks: refused with what to do.
    """
    new = records_index_name(alias)
    if serverless:
        raise ConfigurationError(
            f"OpenSearch index {old} (alias {alias}) has an older schema, and OpenSearch Serverless "
            f"cannot copy it in the cluster (no _reindex): create {new} with `records_index_body`, copy "
            "the documents into it (search_after pages, _bulk index with the same _id), then move the "
            "alias (docs/opensearch.md, schema versions)"
        )
    with os_errors(f"creating {new} to upgrade {old}"):
        try:
            client.indices.create(index=new, body=records_index_body(dimension, model_id, engine))
        except RequestError as exc:
            # Already there: an earlier run made it and stopped (its mapping is checked below).
            if error_type(exc) != "resource_already_exists_exception":
                raise
        mapping: dict[str, Any] = client.indices.get_mapping(index=new)
        settings: dict[str, Any] = client.indices.get_settings(index=new, name="index.creation_date")
    new_mapping = mapping.get(new, {}).get("mappings", {})
    if _meta_of({"mappings": new_mapping}).get("kind") != "records":
        raise ConfigurationError(f"{new} exists but was not made by `agent-memory index bootstrap`")
    _check_records_mapping(new, new_mapping, alias, dimension, model_id)
    since = _created_at(settings, new) - CATCH_UP_MARGIN

    _reindex(
        client,
        {"conflicts": "proceed", "source": {"index": old}, "dest": {"index": new, "op_type": "create"}},
        f"copying {old} into {new}",
        wait_s,
        sleep,
    )
    with os_errors(f"blocking writes on {old} to switch to {new}"):
        client.indices.add_block(index=old, block="write")
    try:
        changed = {
            "bool": {
                "should": [{"range": {field: {"gte": _stamp(since)}}} for field in _CHANGE_FIELDS],
                "minimum_should_match": 1,
            }
        }
        _reindex(
            client,
            {"source": {"index": old, "query": changed}, "dest": {"index": new}},
            f"copying the records of {old} changed since the copy began",
            wait_s,
            sleep,
        )
        with os_errors(f"moving the alias {alias} from {old} to {new}"):
            client.indices.update_aliases(
                body={
                    "actions": [
                        {"remove": {"index": old, "alias": alias}},
                        {"add": {"index": new, "alias": alias, "is_write_index": True}},
                    ]
                }
            )
    except BaseException as exc:
        try:
            with os_errors(f"lifting the write block on {old}"):
                client.indices.put_settings(index=old, body={"index": {"blocks": {"write": False}}})
        except Exception as unblock:
            raise DependencyError(
                f"the upgrade of {old} failed ({exc}) and its write block could not be lifted "
                f"({unblock}): writes to {alias} fail until `PUT {old}/_settings "
                '{"index.blocks.write": false}`'
            ) from exc
        raise


def _reindex(
    client: OpenSearch, body: dict[str, Any], what: str, wait_s: float, sleep: Callable[[float], None]
) -> dict[str, Any]:
    """One ``_reindex`` as a task (``wait_for_completion=false``), polled until done or `wait_s`.

    A task, not a request held open: the copy of a large index outlives any HTTP timeout, and
    goes on in the cluster when this process gives up waiting.
    """
    with os_errors(what):
        started: dict[str, Any] = client.reindex(
            body=body, params={"wait_for_completion": "false", "slices": "auto", "refresh": "true"}
        )
    task = started.get("task")
    if not isinstance(task, str):
        raise DependencyError(f"OpenSearch started no task while {what}: {started}")
    deadline = time.monotonic() + wait_s
    while True:
        with os_errors(what):
            state: dict[str, Any] = client.tasks.get(task_id=task)
        if state.get("completed"):
            break
        if time.monotonic() >= deadline:
            raise DependencyError(
                f"{what} is still running after {wait_s:.0f} s as task {task}, and goes on in the cluster: "
                f"run `agent-memory index bootstrap` again once `GET _tasks/{task}` says completed"
            )
        sleep(UPGRADE_POLL_S)
    response: dict[str, Any] = state.get("response") or {}
    failures = response.get("failures") or []
    if state.get("error") or failures:
        raise DependencyError(
            f"{what} failed: {state.get('error') or failures[0]}; the alias did not move, it is safe to "
            "run the bootstrap again"
        )
    return response


def _created_at(settings: dict[str, Any], index: str) -> datetime:
    """``index.creation_date`` (epoch milliseconds, the cluster's clock) of ``index``."""
    found = settings.get(index, {}).get("settings", {})
    raw = found.get("index", {}).get("creation_date", found.get("index.creation_date"))
    try:
        return datetime.fromtimestamp(int(raw) / 1000, UTC)
    except (TypeError, ValueError) as exc:
        raise DependencyError(f"OpenSearch did not say when {index} was created: {settings}") from exc


def _stamp(value: datetime) -> str:
    """The store's time format (fixed-width UTC with microseconds), for a range bound."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _meta_of(index_mapping: dict[str, Any]) -> dict[str, Any]:
    meta = index_mapping.get("mappings", {}).get("_meta", {})
    return meta if isinstance(meta, dict) else {}


def status(client: OpenSearch, alias: str) -> dict[str, Any]:
    """What is deployed: the indexes behind both aliases, their document counts and ``_meta``."""
    out: dict[str, Any] = {}
    for name in (alias, events_alias_name(alias)):
        with os_errors(f"reading the status of {name}", name):
            if not client.indices.exists_alias(name=name):
                out[name] = {"exists": False}
                continue
            indices = sorted(client.indices.get_alias(name=name))
            mapping = client.indices.get_mapping(index=name)
            count = client.count(index=name)["count"]
        out[name] = {
            "exists": True,
            "indices": indices,
            "documents": count,
            "meta": _meta_of(mapping[indices[0]]) if indices and indices[0] in mapping else {},
        }
    return {"alias": alias, "records": out[alias], "events": out[events_alias_name(alias)]}


# ------------------------------------------------------------------------------------------------
# Fine-grained access control: the functions' IAM roles mapped to an OpenSearch role
# ------------------------------------------------------------------------------------------------

#: Cluster-level actions of the store's multi-index requests (``_bulk``, ``_msearch``, ``_mget``),
#: which the security plugin authorises at cluster level before each item is checked per index.
#: ``cluster_composite_ops`` already holds them; they are named as well so the role keeps working
#: if that action group is ever narrowed.
DATA_CLUSTER_PERMISSIONS: tuple[str, ...] = (
    "cluster_composite_ops",
    "indices:data/write/bulk",
    "indices:data/read/msearch",
    "indices:data/read/mget",
)
#: Index-level actions on the aliases and their versioned indexes: ``crud`` (search with its
#: composite and terms aggregations, get, index, ``_update``, delete, ``_delete_by_query``), the
#: mapping read of the start-up check (`check_index`), and alias reads. No create, delete or
#: mapping change: that stays with the bootstrap, the master user.
DATA_INDEX_ACTIONS: tuple[str, ...] = (
    "crud",
    "indices:data/read/*",
    "indices:data/write/*",
    "indices:admin/mappings/get",
    "indices:admin/aliases/get",
)

_ROLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def data_role_name(alias: str) -> str:
    """The OpenSearch role of the functions that read and write memory behind ``alias``."""
    return f"{alias}-data"


def data_role_body(index_patterns: list[str]) -> dict[str, Any]:
    """The ``PUT _plugins/_security/api/roles/<name>`` body: the store's actions, nothing more."""
    return {
        "description": "agent-memory functions: read and write memory (mapped by the index bootstrap)",
        "cluster_permissions": list(DATA_CLUSTER_PERMISSIONS),
        "index_permissions": [
            {"index_patterns": list(index_patterns), "allowed_actions": list(DATA_INDEX_ACTIONS)}
        ],
    }


def map_backend_roles(
    client: OpenSearch,
    role_name: str,
    backend_roles: list[str],
    index_patterns: list[str],
    *,
    serverless: bool = False,
) -> bool:
    """Give IAM roles the store's permissions under fine-grained access control. Idempotent.

    On a managed domain with FGAC, IAM only lets a request reach the cluster; the security
    plugin then refuses (403) every principal that is not mapped to an OpenSearch role — every
    function but the bootstrap, whose role is the master user. Two PUTs, each replacing the
    whole document, so a re-run converges on exactly ``backend_roles``: a function removed from
    the stack loses its access, and an empty list unmaps everyone.

    Serverless has no security plugin (data access policies grant access instead): nothing is
    sent and False is returned. True once the role and its mapping are in place.
    """
    if serverless:
        return False
    if not _ROLE_NAME.match(role_name):
        raise ConfigurationError(f"invalid OpenSearch security role name {role_name!r}")
    if not index_patterns or any(not p or p.strip("*") == "" for p in index_patterns):
        raise ConfigurationError(f"refusing to grant the data role on index patterns {index_patterns!r}")
    roles = sorted(set(backend_roles))
    with os_errors(f"mapping IAM roles to the OpenSearch role {role_name}"):
        client.security.create_role(role=role_name, body=data_role_body(index_patterns))
        client.security.create_role_mapping(
            role=role_name, body={"backend_roles": roles, "hosts": [], "users": []}
        )
    return True
