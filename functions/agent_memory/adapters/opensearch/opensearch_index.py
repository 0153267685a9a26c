"""The OpenSearch indexes behind the memory store: their design, and the check that a deployed
index matches it.

Two indexes, each a versioned index behind an alias so it can be re-indexed without touching
configuration (``agent-memory`` → ``agent-memory-v5``):

- **records** (``{alias}``): one document per memory record, ``_id`` = record id, with its
  embedding in a ``knn_vector`` field and every filterable field mapped explicitly;
- **events** (``{alias}-events``): small side documents — record aliases (a write merged into an
  existing record) and the audit trail of forgets. Kept out of the records index so a record's
  overwrite (``put``) can never drop its aliases, and so no record query needs a doc-type filter.

A third, **knowledge** (``{alias}-knowledge``), holds a tenant's shared knowledge
(`opensearch_knowledge`): documents whole, their passages with vectors, and tombstones. A sibling
rather than documents among the records, so no record query (the cascade's scans, retention's
deletes, an agent's listing) can ever see a passage, and none of them had to learn to skip one.

Vector design (see docs/opensearch.md for the sources):

- HNSW on **lucene**, the one engine new indexes are made with: the only one the test node can
  run (Maven Central's k-NN has no native faiss library), so the only one every request is
  proven on (docs/decisions.md, "New indexes are made on lucene"). An index made on faiss by an
  earlier version keeps working: every request is the same on both engines, and its next schema
  upgrade copies it onto lucene. nmslib is deprecated, refused by OpenSearch 3.x. lucene supports
  *efficient filtering*: the filter runs inside the graph search, so a filtered query still
  returns ``k`` hits.
- Space type **innerproduct**. Embeddings are L2-normalised (the store re-normalises defensively),
  so the inner product *is* the cosine. faiss supports ``cosinesimil`` only from 2.19, while
  ``innerproduct`` works on faiss from 2.9 (efficient filtering) and on lucene from 2.13, so one
  formula holds everywhere. OpenSearch turns the inner product ``d`` into a
  positive score (faiss and lucene alike): ``score = 1 + d`` if ``d >= 0`` else ``1 / (1 - d)``.
  `cosine_from_score` inverts it exactly: ``d = score - 1`` if ``score >= 1`` else
  ``1 - 1 / score`` (float32 rounding, < 1e-6).

Text (``content``, ``topic``, ``context``, the speaker's name) is analysed by `TEXT_ANALYZER`:
Porter stems, diacritics folded, and the domain's English stopwords dropped from queries — the
matching of the SQLite store's FTS5 index, so a word finds the same records on both stores.

Schema versions: a mapping change bumps `SCHEMA_VERSION` and with it the index name.
`opensearch_bootstrap.bootstrap` finding the alias over an index of an older version copies it
into the new one (``_reindex``) and moves the alias in one atomic ``_aliases`` request
(`opensearch_upgrade.upgrade_records_index`); `check_index` refuses to run against an older or
newer version than the code's. Creating, upgrading and securing the indexes live in those
modules and `opensearch_roles`: this one is what every running function needs.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from opensearchpy import OpenSearch

from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.errors import ConfigurationError
from agent_memory.model.words import STOPWORDS

#: The k-NN engine of every index the bootstrap creates (and of an older index's upgrade copy).
Engine = Literal["lucene"]

#: Bump when the mapping changes; the index name carries it (``{alias}-v{N}``). 2: ``speaker``
#: and ``context`` fields, and the English analyzer on every text field. 3: ``last_seen_at`` and
#: ``merged_from`` (what a merged record absorbed), ``user_ids`` (a summary's end users). 4:
#: ``experience`` (an outcome's context, result, run and confidence). 5: supersession fields
#: ``valid_from``, ``valid_to``, ``supersedes``, ``superseded_by``. 6: `LEXICAL_FIELD`, the one
#: text BM25 scores (content, topic, speaker and context copied into it).
SCHEMA_VERSION = 6
#: The events index grows only by new fields, which an existing index takes in place (`bootstrap`
#: puts the mapping again), so its name keeps the first version (``{alias}-events-v1``) and its
#: ``_meta`` says which fields it has. 2: ``seq``, the append order of audit events of one instant.
EVENTS_SCHEMA_VERSION = 2
EVENTS_INDEX_GENERATION = 1
#: The knowledge index's own version (``{alias}-knowledge-v{N}``): it changes apart from records.
KNOWLEDGE_SCHEMA_VERSION = 1
SPACE_TYPE = "innerproduct"
VECTOR_FIELD = "vector"
ENGINE: Engine = "lucene"
#: HNSW graph parameters: the documented defaults for m, a larger build beam for better recall.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128

_KEYWORD: dict[str, Any] = {"type": "keyword"}
_DATE: dict[str, Any] = {"type": "date"}
_INTEGER: dict[str, Any] = {"type": "integer"}

#: The analyzers of every searched text field (``content``, ``topic``, ``context`` and
#: ``speaker.text``), built to match exactly what the SQLite store's FTS5 index matches:
#:
#: - custom, not the built-in ``english`` analyzer, for ``asciifolding``: "café" finds "cafe",
#:   as FTS5's ``unicode61 remove_diacritics 2`` tokenizer does;
#: - ``porter_stem``, the very algorithm of FTS5's ``porter`` tokenizer, so both stores reduce a
#:   word to the same stem ("camping", "camped" → "camp"); ``light_english`` is another stemmer
#:   (KStem) and would disagree with SQLite on some words;
#: - stopwords at *query* time only (`TEXT_SEARCH_ANALYZER`), and the list is the domain's
#:   (`agent_memory.model.words.STOPWORDS`, the one SQLite drops from query words), not
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
#: What a record's word search scores: its content, topic, speaker and context as one text, as the
#: SQLite store's FTS5 ``bm25()`` scores its four columns (a term's frequency summed over them,
#: the length of the row). Each field is copied in (``copy_to``) when the document is indexed;
#: the field is in no ``_source``. Scoring the fields apart (a ``cross_fields`` query: per term,
#: the best field, with that field's own length) ranked differently: on LoCoMo's first
#: conversation 35 % of the lexical candidates differed from SQLite's and recall@10 was 1.7
#: points lower; over this field 5 % differ and recall@10 is SQLite's (docs/opensearch.md).
LEXICAL_FIELD = "lexical"
_COPIED = {"copy_to": LEXICAL_FIELD}


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
    return f"{events_alias_name(alias)}-v{EVENTS_INDEX_GENERATION}"


def knowledge_alias_name(alias: str) -> str:
    return f"{alias}-knowledge"


def knowledge_index_name(alias: str) -> str:
    return f"{knowledge_alias_name(alias)}-v{KNOWLEDGE_SCHEMA_VERSION}"


def _vector_meta(kind: str, version: int, dimension: int, model_id: str, engine: Engine) -> dict[str, Any]:
    """The ``_meta`` of an index of vectors: what it holds, and the model its vectors are of
    (vectors of another model are not comparable)."""
    return {
        "kind": kind,
        "schema_version": version,
        "embedding_model_id": model_id,
        "dimension": dimension,
        "engine": engine,
        "space_type": SPACE_TYPE,
    }


def records_meta(dimension: int, model_id: str, engine: Engine) -> dict[str, Any]:
    """What a running deployment checks at start: vectors of another model are not comparable."""
    return _vector_meta("records", SCHEMA_VERSION, dimension, model_id, engine)


def records_index_body(dimension: int, model_id: str, engine: Engine = ENGINE) -> dict[str, Any]:
    """The create-index body of the records index (settings + mappings).

    Every field a query filters on is a ``keyword``, ``date``, ``float`` or ``integer``;
    ``content``, ``topic``, ``context`` and ``speaker.text`` are ``text`` for BM25 (`ANALYSIS`);
    ``metadata`` is stored but not indexed (``enabled: false``), so free-form client JSON can
    never explode the mapping; ``dynamic: strict`` refuses any field not listed.
    ``span_start``/``span_end`` are derived at write time (a summary's period, or ``occurred_at``
    twice) so a time window is two range filters. ``context`` (the turns before a conversation
    turn) is searched and stored in ``_source`` like any field, so records round-trip.
    """
    return _vector_index_body(
        records_meta(dimension, model_id, engine),
        {
            **dict.fromkeys(("id", "tenant_id", "agent_id", "user_id", "grain", "time_key"), _KEYWORD),
            **dict.fromkeys(("period_start", "period_end", "span_start", "span_end"), _DATE),
            "kind": _KEYWORD,
            "role": _KEYWORD,
            "speaker": {**_KEYWORD, **_COPIED, "fields": {"text": _TEXT}},
            "conversation_id": _KEYWORD,
            "content": {**_TEXT, **_COPIED},
            "context": {**_TEXT, **_COPIED},
            "topic": {**_TEXT, **_COPIED, "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
            LEXICAL_FIELD: _TEXT,
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
            "access_count": _INTEGER,
            **dict.fromkeys(("created_at", "updated_at", "expires_at", "deleted_at"), _DATE),
            **dict.fromkeys(("occurred_at", "last_accessed_at", "last_seen_at"), _DATE),
            "user_ids": _KEYWORD,
            # What a merged record absorbed: read back with the record, never searched.
            "merged_from": {"type": "object", "enabled": False},
            # An experience: its confidence and run are filtered on; its texts are read back.
            "experience": {
                "properties": {
                    "confidence": {"type": "float"},
                    "run_id": _KEYWORD,
                    "context": _TEXT,
                    "outcome": _TEXT,
                    "prior": {"type": "float", "index": False},
                    "prior_weight": {"type": "float", "index": False},
                    "confirmations": {"type": "integer"},
                    "refutations": {"type": "integer"},
                    "applications": {"type": "integer"},
                    "members": {"type": "integer"},
                    "runs": {"type": "integer"},
                    "member_runs": {"type": "keyword", "index": False, "doc_values": False},
                }
            },
            # Supersession: when what a record says held, and which records replaced each other.
            "valid_from": _DATE,
            "valid_to": _DATE,
            "supersedes": _KEYWORD,
            "superseded_by": _KEYWORD,
        },
        dimension,
        engine,
    )


def _vector_index_body(
    meta: dict[str, Any], properties: dict[str, Any], dimension: int, engine: Engine
) -> dict[str, Any]:
    """The create-index body shared by the two indexes of vectors (records and knowledge), so
    they cannot drift apart in what makes them searchable alike: k-NN on, the same `ANALYSIS`,
    ``dynamic: strict``, the ``vector`` field last, and routing required.

    Every document is routed (records by ``tenant:agent``, knowledge by tenant): one agent's
    memory or one tenant's knowledge lives on one shard, so its queries touch one shard, and a
    write without routing is refused.
    """
    mappings: dict[str, Any] = {
        "dynamic": "strict",
        "_meta": meta,
        "properties": {**properties, VECTOR_FIELD: vector_field(dimension, engine)},
        "_routing": {"required": True},
    }
    # A copy: the field definitions are shared module constants, and callers may edit the body.
    return copy.deepcopy({"settings": {"index": {"knn": True, "analysis": ANALYSIS}}, "mappings": mappings})


def _check_engine(engine: str) -> None:
    """New indexes are made on lucene only: faiss cannot run on the node the suite tests on."""
    if engine != ENGINE:
        raise ConfigurationError(
            f"k-NN engine {engine!r} is not offered for new indexes: they are made on {ENGINE!r}, the "
            "engine every store request is tested on (an index made on faiss earlier keeps working "
            "and moves to lucene at its next schema upgrade; docs/decisions.md)"
        )


def vector_field(dimension: int, engine: Engine) -> dict[str, Any]:
    """The ``knn_vector`` mapping both vector indexes share: one engine choice, one space type,
    so one score conversion (`cosine_from_score`) holds for records and passages alike."""
    _check_engine(engine)
    return {
        "type": "knn_vector",
        "dimension": dimension,
        "method": {
            "name": "hnsw",
            "engine": engine,
            "space_type": SPACE_TYPE,
            "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
        },
    }


def knowledge_meta(dimension: int, model_id: str, engine: Engine) -> dict[str, Any]:
    """What `check_knowledge_mapping` reads: passage vectors of another model are not comparable."""
    return _vector_meta("knowledge", KNOWLEDGE_SCHEMA_VERSION, dimension, model_id, engine)


def knowledge_index_body(dimension: int, model_id: str, engine: Engine = ENGINE) -> dict[str, Any]:
    """The create-index body of the knowledge index: four kinds of document in one mapping.

    ``kind`` says which: ``document`` (a `KnowledgeDocument` whole, its text in
    ``document_text``, stored but not indexed: only passages are searched), ``passage`` (a
    `Passage` and its ``vector``, the same ``knn_vector`` as the records'), ``tombstone`` (when a
    document was deleted), ``put`` (a put of a document under way, `opensearch_knowledge`). The
    searched text fields (``text``, ``title``, ``heading_path``) are analysed as the records' are
    (`ANALYSIS`), so a word finds the same passages on both stores; ``dynamic: strict`` refuses
    any field not listed. Routed by tenant: a tenant's knowledge lives on one shard and its
    searches touch one shard.
    """
    return _vector_index_body(
        knowledge_meta(dimension, model_id, engine),
        {
            **dict.fromkeys(("kind", "id", "tenant_id", "doc_id", "version"), _KEYWORD),
            **dict.fromkeys(("title", "heading_path", "text"), _TEXT),
            # A document's whole text: read back by id, never searched (its passages are).
            "document_text": {"type": "text", "index": False},
            "format": _KEYWORD,
            "source_uri": {"type": "keyword", "index": False, "doc_values": False},
            "tags": _KEYWORD,
            "valid_from": _DATE,
            "valid_until": _DATE,
            "content_hash": _KEYWORD,
            **dict.fromkeys(("passages", "start", "end", "ordinal", "hits"), _INTEGER),
            **dict.fromkeys(("last_hit_at", "created_at", "updated_at", "deleted_at"), _DATE),
        },
        dimension,
        engine,
    )


def events_index_body() -> dict[str, Any]:
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
            "seq": {"type": "long"},
            "detail": {"type": "object", "enabled": False},
        },
        "_routing": {"required": True},
    }
    return {"mappings": mappings}


class OlderSchemaError(ConfigurationError):
    """The alias points at a records index (``kind="records"``) or an events index (``"events"``)
    of an older schema: `bootstrap` upgrades it."""

    def __init__(self, message: str, index: str, kind: str = "records") -> None:
        super().__init__(message)
        self.index = index
        self.kind = kind


def check_index(client: OpenSearch, alias: str, dimension: int, model_id: str) -> None:
    """Refuse to run against an index built for another embedding model, dimension or schema.

    One request: the mappings behind both aliases. Raises `ConfigurationError` saying what the
    index holds, what the settings ask for, and what to do — `OlderSchemaError` for a records
    index of an older schema version, which `bootstrap` knows how to upgrade.
    """
    events_alias = events_alias_name(alias)
    with os_errors(f"checking the index behind {alias}", alias):
        mappings: dict[str, Any] = client.indices.get_mapping(index=f"{alias},{events_alias}")
    records = {n: m.get("mappings", {}) for n, m in mappings.items() if meta_of(m).get("kind") == "records"}
    events = {n: meta_of(m) for n, m in mappings.items() if meta_of(m).get("kind") == "events"}
    if not records or not events:
        missing = alias if not records else events_alias
        raise ConfigurationError(
            f"the OpenSearch alias {missing!r} does not point at an index made by `agent-memory index "
            "bootstrap` (no agent-memory _meta in its mapping); point the alias setting elsewhere or "
            "run the bootstrap on a fresh alias"
        )
    for name, meta in sorted(events.items()):
        version = meta.get("schema_version")
        if isinstance(version, int) and version < EVENTS_SCHEMA_VERSION:
            raise OlderSchemaError(
                f"OpenSearch index {name} (alias {events_alias}) has events schema version {version}, "
                f"this code writes {EVENTS_SCHEMA_VERSION}: run `agent-memory index bootstrap` (every "
                "deployment runs it), which adds the new fields in place",
                index=name,
                kind="events",
            )
    for name, mapping in sorted(records.items()):
        check_records_mapping(name, mapping, alias, dimension, model_id)


def check_records_mapping(
    name: str, mapping: dict[str, Any], alias: str, dimension: int, model_id: str
) -> None:
    """One records index against the deployment: model and dimension first (an older index of
    another model is not upgraded: its vectors must be re-embedded), then the schema version."""
    meta = mapping.get("_meta", {})
    _check_model(
        mapping,
        meta,
        dimension,
        model_id,
        f"OpenSearch index {name} (alias {alias}) holds vectors",
        ". Vectors of different models cannot be compared: restore the previous embedding settings, or "
        "set AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS to a new alias, run `agent-memory index bootstrap` and "
        "re-embed the memories into it.",
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
        )
    raise ConfigurationError(
        f"OpenSearch index {name} (alias {alias}) has schema version {version!r}, not the "
        f"{SCHEMA_VERSION} this code reads: it was made by another version of agent-memory; deploy "
        "that version, or move the alias back to the index this version made"
    )


def check_knowledge_mapping(
    name: str, mapping: dict[str, Any], alias: str, dimension: int, model_id: str
) -> None:
    """The knowledge index against the deployment: made by the bootstrap, for this model and
    dimension, of this schema version (there is no older one to upgrade yet)."""
    meta = mapping.get("_meta", {}) if isinstance(mapping.get("_meta"), dict) else {}
    if meta.get("kind") != "knowledge":
        raise ConfigurationError(
            f"OpenSearch index {name} (alias {knowledge_alias_name(alias)}) was not made by "
            "`agent-memory index bootstrap` (no agent-memory knowledge _meta in its mapping)"
        )
    _check_model(
        mapping,
        meta,
        dimension,
        model_id,
        f"OpenSearch index {name} (alias {knowledge_alias_name(alias)}) holds passage vectors",
        ": restore the previous embedding settings, or bootstrap a new alias and put the documents again",
    )
    if meta.get("schema_version") != KNOWLEDGE_SCHEMA_VERSION:
        raise ConfigurationError(
            f"OpenSearch index {name} has knowledge schema version {meta.get('schema_version')!r}, "
            f"not the {KNOWLEDGE_SCHEMA_VERSION} this code reads: it was made by another version of "
            "agent-memory"
        )


def _check_model(
    mapping: dict[str, Any],
    meta: dict[str, Any],
    dimension: int,
    model_id: str,
    holds: str,
    remedy: str,
) -> None:
    """Raise a `ConfigurationError` when an index of vectors was made for another embedding model
    or dimension than the deployment's: ``holds`` names the index and its vectors, the stored and
    the deployment's model and dimension follow, then ``remedy`` (what to do about it).

    The dimension is read from the vector field (else ``_meta``), and ``_meta``'s must agree too.
    One reading for both indexes of vectors (records, knowledge), since vectors of different
    models cannot be compared whichever index holds them."""
    stored_dim = mapping.get("properties", {}).get(VECTOR_FIELD, {}).get("dimension", meta.get("dimension"))
    stored_model = meta.get("embedding_model_id")
    if stored_dim != dimension or meta.get("dimension") != dimension or stored_model != model_id:
        raise ConfigurationError(
            f"{holds} of model {stored_model!r} with dimension {stored_dim}, but this deployment embeds "
            f"with {model_id!r} (dimension {dimension}){remedy}"
        )


def meta_of(index_mapping: dict[str, Any]) -> dict[str, Any]:
    meta = index_mapping.get("mappings", {}).get("_meta", {})
    return meta if isinstance(meta, dict) else {}
