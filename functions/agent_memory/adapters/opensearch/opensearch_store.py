"""The production `MemoryStore`: OpenSearch k-NN, through an alias made by `opensearch_bootstrap`.

One class per port, each in its own module, over the state they share (`opensearch_base`); this
module puts them together. Every decision below is a documented request shape
(docs/opensearch.md), built by the pure functions of `opensearch_queries` and its siblings,
pinned by tests/unit/adapters/opensearch/test_opensearch_requests.py and checked against a real
cluster by the contract suite (tests/contract):

* **Routing and isolation.** Every document request is routed by ``tenant:agent`` (the mapping
  requires it), so an agent's memory lives on one shard and its queries touch one shard. Routing
  is placement, not security: every query *also* filters ``tenant_id`` and ``agent_id`` terms,
  and documents read by id are checked to belong to the caller.
* **Document ids** are ``tenant:agent:record_id`` (deterministic, so a re-made summary overwrites
  itself). Record ids are unique per (tenant, agent), as in the SQLite store; scoping the ``_id``
  means no write of one tenant can ever overwrite a document of another.
* **k-NN with efficient filtering.** The filters go *inside* the ``knn`` clause, so the engine
  applies them during the graph search and a filtered query still returns ``k`` hits (a
  ``bool`` post-filter around ``knn`` could return fewer, or none).
* **Similarity = cosine.** The index uses ``innerproduct`` on unit vectors (this store normalises
  every vector it writes and every query vector), and the engine score is converted back with
  `cosine_from_score`. Lexical-only hits get their cosine computed from the stored vector.
* **Lexical** is BM25 over one field, `opensearch_index.LEXICAL_FIELD` (content, topic, speaker
  and context copied into it, scored as one text as FTS5 scores its columns; Porter stems,
  stopwords dropped from the query: `opensearch_index.ANALYSIS`) with the same filters, sent
  with the k-NN query in one ``_msearch``; scores are divided by the best one (best hit = 1.0).
  The query is the text's distinct lower-cased words, never query syntax.
* **Times** are written as fixed-width UTC strings (``2026-11-22T12:00:00.000000Z``): they round-trip
  to the microsecond, and painless scripts can compare them as strings. OpenSearch ``date`` fields
  index milliseconds, so filters and sorts compare at millisecond precision.
* **Aliases and audit events** live in the events index (`opensearch_index`), never on records.

OpenSearch Serverless is not a target (docs/decisions.md, "No OpenSearch Serverless"): its
vector collections refuse the caller-chosen ``_id`` every write above sets.

Shared knowledge (`opensearch_knowledge`) lives in a sibling index, ``{alias}-knowledge``, routed
by tenant alone; its requests follow the same rules (docs/opensearch.md, *Shared knowledge*).
"""

from __future__ import annotations

from opensearchpy import OpenSearch

from agent_memory.adapters.opensearch.opensearch_audit import OpenSearchAuditLog
from agent_memory.adapters.opensearch.opensearch_client import build_client
from agent_memory.adapters.opensearch.opensearch_directory import OpenSearchDirectory
from agent_memory.adapters.opensearch.opensearch_export import OpenSearchExport
from agent_memory.adapters.opensearch.opensearch_knowledge import OpenSearchKnowledge
from agent_memory.adapters.opensearch.opensearch_records import OpenSearchRecords
from agent_memory.adapters.opensearch.opensearch_retention import OpenSearchRetention
from agent_memory.adapters.opensearch.opensearch_retrieval import OpenSearchRetrieval
from agent_memory.adapters.opensearch.opensearch_search_log import OpenSearchSearchLog
from agent_memory.settings import Settings


class OpenSearchStore(
    OpenSearchRecords,
    OpenSearchRetrieval,
    OpenSearchAuditLog,
    OpenSearchSearchLog,
    OpenSearchDirectory,
    OpenSearchRetention,
    OpenSearchKnowledge,
    OpenSearchExport,
):
    """`agent_memory.ports.MemoryStore` on OpenSearch k-NN (see the module docstring): every
    port's class, over one `OpenSearchBase`, whose constructor says what ``refresh`` and
    ``check`` do. Also the `agent_memory.ports.KnowledgeStore`, in its sibling index
    (`opensearch_knowledge`)."""

    @classmethod
    def from_settings(
        cls, settings: Settings, model_id: str, client: OpenSearch | None = None, check: bool = True
    ) -> OpenSearchStore:
        """The store a Lambda uses: the cached client, the alias and dimension from settings."""
        return cls(
            client if client is not None else build_client(settings),
            settings.opensearch_index_alias,
            settings.embedding_dimension,
            model_id,
            check=check,
        )
