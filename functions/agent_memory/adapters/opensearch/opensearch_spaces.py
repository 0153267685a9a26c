"""`ports.EmbeddingSpaces` on the records index: records' vectors in tenants' own models' spaces.

**A ``knn_vector`` field per space, in the same document.** The deployment's space is the
``vector`` field; a tenant's model writes ``spaces.<space id>``, a field added to the mapping
(``dynamic: strict`` refuses any other) the first time a process writes that space, with the
model's dimension and the ``vector`` field's engine and method. A k-NN query names one field, so
vectors of two models never meet in one query; a tenant's filters (tenant, agent, window, kinds)
go inside the k-NN clause as for the deployment's space. One index, not one per space: a record
stays one document (its forget, retention and audit are unchanged), and a tenant that changes
models adds a field, not an index and a copy of everything.

Writes are whole documents (`opensearch_records.put` indexes every space the writer embedded, so
a rewritten record never keeps a vector of its old content). The re-embedding job adds a space to
a stored record by a scripted update that checks the record is still live and unchanged (its
``updated_at``); dropping a space is an ``_update_by_query`` over the tenant's documents. Both
are painless scripts.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_documents import doc_id, to_record, ts, unit, vector_json
from agent_memory.adapters.opensearch.opensearch_filters import absent, not_deleted, term
from agent_memory.adapters.opensearch.opensearch_index import VECTOR_FIELD
from agent_memory.adapters.opensearch.opensearch_queries import records_page_body
from agent_memory.adapters.opensearch.opensearch_responses import hits_of, item_failures
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import Vector

SPACES_FIELD = "spaces"
#: Oldest first, so a killed job's next run starts where it stopped.
_STORED_ORDER = [{"created_at": {"order": "asc"}}, {"id": {"order": "asc"}}]
#: Set a space's vector on a record still live and as the job read it (else nothing).
SET_SPACE_SCRIPT = (
    "if (ctx._source.tenant_id != params.tenant || ctx._source.updated_at != params.updated "
    "|| ctx._source.deleted_at != null) { ctx.op = 'noop'; return; } "
    "if (params.space == '') { ctx._source.vector = params.v; return; } "
    "if (ctx._source.spaces == null) { ctx._source.spaces = new HashMap(); } "
    "ctx._source.spaces[params.space] = params.v;"
)
DROP_SPACE_SCRIPT = (
    "if (params.space == '') { ctx._source.remove('vector'); } "
    "else if (ctx._source.spaces != null) { ctx._source.spaces.remove(params.space); }"
)


def space_field(space: str) -> str:
    """The ``knn_vector`` field of a space."""
    return VECTOR_FIELD if not space else f"{SPACES_FIELD}.{space}"


def space_vector(vector: Vector) -> list[float]:
    """A tenant-space vector as the index stores it: finite, unit length (any dimension)."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or not array.size or not np.all(np.isfinite(array)):
        raise ValidationFailedError("a vector must be one non-empty row of finite values")
    norm = float(np.linalg.norm(array))
    return vector_json(array / np.float32(norm) if norm > 0 else array)


def missing_filters(tenant_id: str, space: str) -> list[dict[str, Any]]:
    """The tenant's live records without a vector in ``space``."""
    return [term("tenant_id", tenant_id), not_deleted(), absent(space_field(space))]


class OpenSearchSpaces(OpenSearchBase):
    """`ports.EmbeddingSpaces` (see the module docstring)."""

    def ensure_space(self, space: str, dimension: int) -> None:
        """Map ``spaces.<space>`` (once per process): the ``vector`` field's definition at the
        model's dimension. A space already mapped at another dimension is refused by OpenSearch."""
        mapped = self.__dict__.setdefault("_mapped_spaces", set())
        if not space or space in mapped:
            return
        with os_errors("mapping an embedding space", self.alias):
            mapping = self._client.indices.get_mapping(index=self.alias)
            properties = [m.get("mappings", {}).get("properties", {}) for m in mapping.values()]
            vectors = [p[VECTOR_FIELD] for p in properties if VECTOR_FIELD in p]
            field = copy.deepcopy(vectors[-1])  # the newest index behind the alias during an upgrade
            field["dimension"] = dimension
            # POST, which the API takes as PUT: the functions' IAM grant has no ESHttpPut.
            self._client.transport.perform_request(
                "POST",
                f"/{self.alias}/_mapping",
                body={"properties": {SPACES_FIELD: {"properties": {space: field}}}},
            )
        mapped.add(space)

    def missing_in_space(self, tenant_id: str, space: str, limit: int) -> list[MemoryRecord]:
        body = records_page_body(missing_filters(tenant_id, space), max(0, limit), _STORED_ORDER)
        body["_source"] = {"excludes": [VECTOR_FIELD, SPACES_FIELD]}
        return [to_record(h["_source"]) for h in hits_of(self._search(body, "finding records to re-embed"))]

    def count_missing(self, tenant_id: str, space: str) -> int:
        with os_errors("counting records to re-embed", self.alias):
            response = self._client.count(
                index=self.alias, body={"query": {"bool": {"filter": missing_filters(tenant_id, space)}}}
            )
        return int(response.get("count", 0))

    def put_space_vectors(
        self, tenant_id: str, space: str, items: Sequence[tuple[MemoryRecord, Vector]]
    ) -> int:
        own = [(r, v) for r, v in items if r.tenant_id == tenant_id]  # never across tenants
        if not own:
            return 0
        if space:
            self.ensure_space(space, int(np.asarray(own[0][1]).shape[-1]))
        lines: list[dict[str, Any]] = []
        for record, vector in own:
            v = space_vector(vector) if space else vector_json(unit(vector, self.dimension, self.model_id))
            agent = record.agent_id
            action = self._action("update", self.alias, doc_id(tenant_id, agent, record.id), tenant_id, agent)
            params = {"tenant": tenant_id, "updated": ts(record.updated_at), "space": space, "v": v}
            lines += [
                action,
                {
                    "script": {
                        "source": SET_SPACE_SCRIPT,
                        "lang": "painless",
                        "params": params,
                    }
                },
            ]
        # Searchable before the job asks what is still missing: otherwise its next page would be
        # the same memories again until the index refreshes.
        with os_errors("storing re-embedded vectors", self.alias):
            response = self._client.bulk(body=lines, params={**self._write_params(), "refresh": "wait_for"})
        failures = [f for f in item_failures(response) if f[0] != 404]
        if failures:
            raise ConfigurationError(f"storing re-embedded vectors failed: {failures[0]}")
        return sum(
            1 for item in response.get("items", []) if next(iter(item.values())).get("result") == "updated"
        )

    def drop_space(self, tenant_id: str, space: str) -> int:
        has_space = [term("tenant_id", tenant_id), {"exists": {"field": space_field(space)}}]
        body = {
            "query": {"bool": {"filter": has_space}},
            "script": {"source": DROP_SPACE_SCRIPT, "lang": "painless", "params": {"space": space}},
        }
        params: dict[str, Any] = {"conflicts": "proceed", "refresh": "true"}
        with os_errors("dropping an embedding space", self.alias):
            response = self._client.update_by_query(index=self.alias, body=body, params=params)
        return int(response.get("updated", 0))
