"""A memory record as the records index stores it, and back; the ids and times documents carry.

Apart from the store's I/O so that what goes into a document (and what a document id is) can be
read and tested on its own. The decisions (docs/opensearch.md, `opensearch_store`):

* **Document ids** are ``tenant:agent:record_id`` (deterministic, so a re-made summary overwrites
  itself); scoping the ``_id`` means no write of one tenant can ever overwrite a document of
  another. Events-index documents (aliases, audit events, search counts) are scoped the same way.
* **Times** are fixed-width UTC strings (``2026-11-22T12:00:00.000000Z``): they round-trip to the
  microsecond, and painless scripts can compare them as strings.
* **Vectors** are written of unit length (the index scores ``innerproduct``), as the shortest
  decimals that parse back to the same float32.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.adapters.opensearch.opensearch_index import VECTOR_FIELD
from agent_memory.errors import ConfigurationError, ValidationFailedError
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import AuditEvent, Vector

_MAX_ID_BYTES = 512
_ONE_US = timedelta(microseconds=1)
_DATETIME_FIELDS = (
    "period_start",
    "period_end",
    "last_accessed_at",
    "created_at",
    "updated_at",
    "occurred_at",
    "expires_at",
    "deleted_at",
    "last_seen_at",
    "valid_from",
    "valid_to",
)
_RECORD_FIELDS = frozenset(MemoryRecord.model_fields)


def routing_key(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}:{agent_id}"


def scoped_id(*parts: str) -> str:
    """``a:b:c`` — unambiguous because tenant and agent ids cannot contain ``:``.

    An id too long for OpenSearch (512 bytes) keeps its scope and replaces the rest by a digest.
    """
    raw = ":".join(parts)
    if len(raw.encode("utf-8")) <= _MAX_ID_BYTES:
        return raw
    head = ":".join(parts[:-1])
    return f"{head}:#{hashlib.sha256(parts[-1].encode('utf-8')).hexdigest()}"


def doc_id(tenant_id: str, agent_id: str, record_id: str) -> str:
    return scoped_id(tenant_id, agent_id, record_id)


def alias_doc_id(tenant_id: str, agent_id: str, alias_id: str) -> str:
    return scoped_id("alias", tenant_id, agent_id, alias_id)


def audit_doc_id(event: AuditEvent) -> str:
    """Deterministic, so a retried forget does not write its audit event twice."""
    return scoped_id(
        "audit", event.tenant_id, event.agent_id, f"{event.record_id}:{event.action}:{ts(event.at)}"
    )


def search_day_doc_id(tenant_id: str, agent_id: str, day: date) -> str:
    """The agent's search-count document of one UTC day (`opensearch_scripts.SEARCH_COUNT_SCRIPT`)."""
    return scoped_id("searches", tenant_id, agent_id, day.isoformat())


def ts(value: datetime) -> str:
    """A fixed-width UTC timestamp with microseconds: exact, and ordered as a string."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def span_bounds(record: MemoryRecord) -> tuple[datetime, datetime]:
    """The record's span as a closed interval: a summary's exclusive period end minus 1µs.

    Then "overlaps the window [start, end]" is ``span_start <= end AND span_end >= start`` for
    working records and summaries alike (the SQLite store stores the same span).
    """
    start, end = record.span
    if record.period_start is not None and record.period_end is not None and end > start:
        end -= _ONE_US
    return start, end


def unit(vector: Vector, dimension: int, model_id: str) -> npt.NDArray[np.float32]:
    """``vector`` as float32 of unit length (zero stays zero), after checking its shape."""
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimension,):
        raise ConfigurationError(
            f"vector of shape {array.shape} given to a store of dimension {dimension} "
            f"(model {model_id!r}); the embedder and the store must use the same model"
        )
    if not np.all(np.isfinite(array)):
        raise ValidationFailedError("a vector holds NaN or infinite values")
    norm = float(np.linalg.norm(array))
    return array / np.float32(norm) if norm > 0 else array


def cosine_of(stored: Sequence[float], query: npt.NDArray[np.float32]) -> float:
    """The cosine of a stored vector to a unit ``query``, clipped to [-1, 1] (a zero vector: 0):
    what a hit the k-NN query did not return is given from its stored vector."""
    v = np.asarray(stored, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return min(1.0, max(-1.0, float(v @ query / norm))) if norm > 0 else 0.0  # float64: v's type


def vector_json(array: npt.NDArray[np.float32]) -> list[float]:
    """The shortest decimal of each float32 that parses back to it (~40% smaller than repr)."""
    return [float(s) for s in map(str, array)]


def to_document(
    record: MemoryRecord, vector: npt.NDArray[np.float32] | None, spaces: dict[str, list[float]] | None = None
) -> dict[str, Any]:
    """The record's document: its fields, its vector in the deployment's space (none: its tenant's
    records are embedded by its own model only) and in its tenant's own spaces."""
    doc: dict[str, Any] = record.model_dump(mode="json")
    for name in _DATETIME_FIELDS:
        value = getattr(record, name)
        doc[name] = None if value is None else ts(value)
    span_start, span_end = span_bounds(record)
    doc["span_start"], doc["span_end"] = ts(span_start), ts(span_end)
    if vector is not None:
        doc[VECTOR_FIELD] = vector_json(vector)
    if spaces:
        doc["spaces"] = spaces
    return doc


def to_record(source: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord.model_validate({k: v for k, v in source.items() if k in _RECORD_FIELDS})


def bulk_lines(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """NDJSON lines for ``_bulk``: each action line followed by its document."""
    return [line for pair in pairs for line in pair]


def owned(source: dict[str, Any], tenant_id: str, agent_id: str) -> bool:
    """The document is the caller's: documents read by id are checked, routing is no security."""
    return source.get("tenant_id") == tenant_id and source.get("agent_id") == agent_id


def found_source(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The ``_source`` of an ``_mget`` entry, or None when the document was not found."""
    source: dict[str, Any] | None = doc.get("_source") if doc.get("found") else None
    return source
