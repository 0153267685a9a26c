"""The production `MemoryStore`: OpenSearch k-NN, through an alias made by `opensearch_index`.

Every decision below is a documented request shape (docs/opensearch.md), pinned by
tests/unit/adapters/test_opensearch_requests.py and checked against a real cluster by the
contract suite (tests/contract):

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
  `cosine_from_score`. Lexical-only hits get their cosine computed here from the stored vector.
* **Lexical** is a BM25 ``multi_match`` (``cross_fields``) over `LEXICAL_FIELDS` (content,
  topic, speaker, context; Porter stems, stopwords dropped from the query:
  `opensearch_index.ANALYSIS`) with the same filters, sent with the k-NN query in one
  ``_msearch``; scores are divided by the best one (best hit = 1.0). The query is the text's
  distinct lower-cased words, never query syntax.
* **Times** are written as fixed-width UTC strings (``2026-11-22T12:00:00.000000Z``): they round-trip
  to the microsecond, and painless scripts can compare them as strings. OpenSearch ``date`` fields
  index milliseconds, so filters and sorts compare at millisecond precision.
* **Aliases and audit events** live in the events index (`opensearch_index`), never on records.

OpenSearch Serverless (``serverless=True``) differs deliberately: no routing (placement is the
service's), no ``refresh`` or ``require_alias`` parameters, no ``_update`` (vector collections do
not support it: `soft_delete` re-indexes the document read by ``_mget``, and `record_access` is a
no-op), and no ``_delete_by_query`` (`delete_older_than` pages with ``search_after`` and deletes
with ``_bulk``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
from opensearchpy import NotFoundError, OpenSearch

from agent_memory.adapters.opensearch_client import build_client, error_type, os_errors
from agent_memory.adapters.opensearch_index import (
    VECTOR_FIELD,
    check_index,
    cosine_from_score,
    events_alias_name,
)
from agent_memory.domain.fusion import fused_order, lacking_cosine, scaled_to_best
from agent_memory.domain.grains import Grain
from agent_memory.domain.records import MemoryKind, MemoryRecord
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.ports import (
    AgentPage,
    AgentRef,
    AuditAction,
    AuditEvent,
    AuditPage,
    Candidate,
    Neighbourhood,
    Page,
    SearchDay,
    StoredRecord,
    StoreQuery,
    StoreStats,
    Vector,
)
from agent_memory.settings import Settings

logger = logging.getLogger(__name__)

#: Documents per ``_bulk`` request (a few hundred KB of vectors at 384 dimensions).
BULK_CHUNK = 200
#: Candidates the graph search keeps for the dedup neighbour: the lucene engine sets its search
#: beam to ``k``, so ``k=1`` would make the nearest neighbour a poor guess.
NEAREST_K = 10
#: Words of a lexical query that are searched (as in the SQLite store).
MAX_QUERY_WORDS = 64
#: Serverless retention: documents read per page before they are deleted with ``_bulk``.
DELETE_PAGE = 1000
#: Records read per page by `records_in_span` (a day of a busy agent in a few pages).
SPAN_PAGE = 1000
#: The text fields of a lexical search, as SQLite's FTS5 table has them: a record's words, its
#: topic, who said it (the analysed sub-field of the ``speaker`` keyword), and the
#: speaker-labelled turns around it. All share one analyzer, so ``cross_fields`` scores them as
#: one text: "alice launch" ranks Alice's turn about the launch above a turn holding one word.
LEXICAL_FIELDS = ("content", "topic", "speaker.text", "context")
#: Seconds a maintenance call (retention) may wait for the cluster, beyond the client timeout.
MAINTENANCE_TIMEOUT_S = 300
_MAX_CURSOR_CHARS = 2048
_MAX_ID_BYTES = 512
_WORD = re.compile(r"\w+")
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
)
_RECORD_FIELDS = frozenset(MemoryRecord.model_fields)
_NO_VECTOR = {"excludes": [VECTOR_FIELD]}
_NEWEST_FIRST = [{"occurred_at": {"order": "desc"}}, {"id": {"order": "desc"}}]
_OLDEST_FIRST = [{"occurred_at": {"order": "asc"}}, {"id": {"order": "asc"}}]

#: Forget a record only if it is the caller's and live at ``params.at`` (times are fixed-width
#: strings, so ``compareTo`` orders them in time); otherwise change nothing (``noop``).
SOFT_DELETE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id || s.deleted_at != null "
    "|| (s.expires_at != null && s.expires_at.compareTo(params.at) <= 0)) { ctx.op = 'noop'; } "
    "else { s.deleted_at = params.at; s.updated_at = params.at; }"
)
#: Mark a summary stale: ``deleted_at`` moves to ``params.at`` unless it is already that late.
STALE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id) { ctx.op = 'noop'; } "
    "else if (s.deleted_at == null || s.deleted_at.compareTo(params.at) < 0) { s.deleted_at = params.at; } "
    "else { ctx.op = 'noop'; }"
)
#: Count one search on the agent's day document (made by the first search of the day): the
#: events index holds counts only, in ``detail`` (stored, not indexed), never the query.
SEARCH_COUNT_SCRIPT = (
    "def s = ctx._source; "
    "if (s.doc_type == null) { s.doc_type = 'searches'; s.tenant_id = params.tenant_id; "
    "s.agent_id = params.agent_id; s.at = params.day; s.detail = ['searches': 0, 'zero_hits': 0]; } "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id) { ctx.op = 'noop'; } "
    "else { s.detail.searches += 1; s.detail.zero_hits += params.zero_hits; }"
)
#: Day documents read by `search_days` (the service asks for at most a few hundred days).
SEARCH_DAYS_PAGE = 1000
#: Count an access and keep the latest access time; only on the caller's own records.
ACCESS_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id) { ctx.op = 'noop'; } "
    "else { s.access_count = (s.access_count == null ? 0 : s.access_count) + 1; "
    "if (s.last_accessed_at == null || s.last_accessed_at.compareTo(params.at) < 0) "
    "{ s.last_accessed_at = params.at; } }"
)


# ------------------------------------------------------------------------------------------------
# Pure helpers: ids, times, documents, filters, cursors
# ------------------------------------------------------------------------------------------------


def routing_key(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}:{agent_id}"


def _scoped(*parts: str) -> str:
    """``a:b:c`` — unambiguous because tenant and agent ids cannot contain ``:``.

    An id too long for OpenSearch (512 bytes) keeps its scope and replaces the rest by a digest.
    """
    raw = ":".join(parts)
    if len(raw.encode("utf-8")) <= _MAX_ID_BYTES:
        return raw
    head = ":".join(parts[:-1])
    return f"{head}:#{hashlib.sha256(parts[-1].encode('utf-8')).hexdigest()}"


def doc_id(tenant_id: str, agent_id: str, record_id: str) -> str:
    return _scoped(tenant_id, agent_id, record_id)


def alias_doc_id(tenant_id: str, agent_id: str, alias_id: str) -> str:
    return _scoped("alias", tenant_id, agent_id, alias_id)


def audit_doc_id(event: AuditEvent) -> str:
    """Deterministic, so a retried forget does not write its audit event twice."""
    return _scoped(
        "audit", event.tenant_id, event.agent_id, f"{event.record_id}:{event.action}:{ts(event.at)}"
    )


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


def vector_json(array: npt.NDArray[np.float32]) -> list[float]:
    """The shortest decimal of each float32 that parses back to it (~40% smaller than repr)."""
    return [float(s) for s in map(str, array)]


def to_document(record: MemoryRecord, vector: npt.NDArray[np.float32]) -> dict[str, Any]:
    doc: dict[str, Any] = record.model_dump(mode="json")
    for name in _DATETIME_FIELDS:
        value = getattr(record, name)
        doc[name] = None if value is None else ts(value)
    span_start, span_end = span_bounds(record)
    doc["span_start"], doc["span_end"] = ts(span_start), ts(span_end)
    doc[VECTOR_FIELD] = vector_json(vector)
    return doc


def to_record(source: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord.model_validate({k: v for k, v in source.items() if k in _RECORD_FIELDS})


def _owned(source: dict[str, Any], tenant_id: str, agent_id: str) -> bool:
    return source.get("tenant_id") == tenant_id and source.get("agent_id") == agent_id


def _term(field: str, value: str) -> dict[str, Any]:
    return {"term": {field: value}}


def _not_deleted() -> dict[str, Any]:
    return {"bool": {"must_not": [{"exists": {"field": "deleted_at"}}]}}


def neighbourhood_filters(within: Neighbourhood) -> list[dict[str, Any]]:
    """`Neighbourhood` as filters: a field equal to a value, or absent when the value is None."""
    filters: list[dict[str, Any]] = []
    for wanted, name, value in (
        (within.match_user, "user_id", within.user_id),
        (within.match_conversation, "conversation_id", within.conversation_id),
    ):
        if wanted and value is not None:
            filters.append(_term(name, value))
        elif wanted:
            filters.append({"bool": {"must_not": [{"exists": {"field": name}}]}})
    bounds: dict[str, Any] = {}
    if within.since is not None:
        bounds["gte"] = ts(within.since)
    if within.until is not None:
        bounds["lt"] = ts(within.until)
    if bounds:
        filters.append({"range": {"occurred_at": bounds}})
    return filters


def live_filters(tenant_id: str, agent_id: str, now: datetime) -> list[dict[str, Any]]:
    """The caller's records that are neither forgotten nor expired at ``now``."""
    tenant, *rest = tenant_live_filters(tenant_id, now)
    return [tenant, _term("agent_id", agent_id), *rest]


def tenant_live_filters(tenant_id: str, now: datetime) -> list[dict[str, Any]]:
    """The tenant's records, of every agent, that are neither forgotten nor expired at ``now``."""
    return [
        _term("tenant_id", tenant_id),
        _not_deleted(),
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                    {"range": {"expires_at": {"gt": ts(now)}}},
                ],
                "minimum_should_match": 1,
            }
        },
    ]


def query_filters(query: StoreQuery) -> list[dict[str, Any]]:
    """Every filter of a `StoreQuery`; the same list goes into the k-NN and the BM25 request."""
    filters = live_filters(query.tenant_id, query.agent_id, query.now)
    if query.grains:
        filters.append({"terms": {"grain": [Grain(g).value for g in query.grains]}})
    if query.end is not None:
        filters.append({"range": {"span_start": {"lte": ts(query.end)}}})
    if query.start is not None:
        filters.append({"range": {"span_end": {"gte": ts(query.start)}}})
    if query.kinds:
        filters.append({"terms": {"kind": [MemoryKind(k).value for k in query.kinds]}})
    if query.tags:
        filters.append({"terms": {"tags": list(query.tags)}})  # any of the tags
    if query.user_id is not None:
        filters.append(_term("user_id", query.user_id))
    return filters


def query_words(text: str | None) -> str | None:
    """The distinct words of ``text`` (at most `MAX_QUERY_WORDS`), or None when it has none."""
    if not text:
        return None
    words: dict[str, None] = {}
    for word in _WORD.findall(text):
        words.setdefault(word.lower(), None)
        if len(words) >= MAX_QUERY_WORDS:
            break
    return " ".join(words) or None


def _invalid_cursor() -> ValidationFailedError:
    """400, with a detail in the shape of the API's error details (``loc``/``msg``/``type``)."""
    return ValidationFailedError(
        "invalid cursor",
        [{"loc": ["cursor"], "msg": "not a cursor this listing issued", "type": "value_error"}],
    )


def encode_cursor(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The payload of a cursor issued for ``expected`` (tenant, agent, filter), or 400."""
    invalid = _invalid_cursor()
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_CHARS:
        raise invalid
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid from exc
    if not isinstance(payload, dict) or any(payload.get(k) != v for k, v in expected.items()):
        raise invalid
    return payload


def _hits(response: dict[str, Any]) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = response.get("hits", {}).get("hits", [])
    return hits


def _item_failures(response: dict[str, Any]) -> list[tuple[int, str]]:
    """(status, reason) of every failed ``_bulk`` item."""
    failures: list[tuple[int, str]] = []
    if not response.get("errors"):
        return failures
    for item in response.get("items", []):
        for result in item.values():
            error = result.get("error")
            if error:
                reason = (error.get("reason") or error.get("type")) if isinstance(error, dict) else str(error)
                failures.append((int(result.get("status", 0)), str(reason)))
    return failures


def _raise_for_items(response: dict[str, Any], what: str) -> None:
    failures = _item_failures(response)
    if not failures:
        return
    status, reason = failures[0]
    total = len(response.get("items", []))
    message = f"{len(failures)} of {total} documents failed while {what}: {status} {reason}"
    if any(s == 429 or s >= 500 for s, _ in failures):
        raise DependencyError(message)
    raise ConfigurationError(message)


def _raise_for_response(response: dict[str, Any], what: str) -> None:
    """An ``_msearch``/``_mget`` entry that carries an error instead of a result."""
    error = response.get("error")
    if not error:
        return
    status = int(response.get("status", 0))
    kind = error.get("type", "") if isinstance(error, dict) else str(error)
    reason = error.get("reason", kind) if isinstance(error, dict) else str(error)
    if status == 429 or status >= 500:
        raise DependencyError(f"OpenSearch failed while {what}: {status} {reason}")
    if kind == "index_not_found_exception":
        raise ConfigurationError(
            f"OpenSearch index missing while {what}: create it with `agent-memory index bootstrap`"
        )
    raise ConfigurationError(f"OpenSearch rejected a request while {what}: {status} {kind} {reason}")


def _bulk_lines(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """NDJSON lines for ``_bulk``: each action line followed by its document."""
    return [line for pair in pairs for line in pair]


# ------------------------------------------------------------------------------------------------
# The store
# ------------------------------------------------------------------------------------------------


class OpenSearchStore:
    """`agent_memory.ports.MemoryStore` on OpenSearch k-NN (see the module docstring).

    ``refresh``: False (production: writes become searchable within the index refresh interval,
    ~1 s; reads by id are real-time regardless), True or ``"wait_for"`` (tests, and callers that
    must search what they just wrote). ``check``: verify the index ``_meta`` (model, dimension,
    schema) once, now. ``serverless``: OpenSearch Serverless request shapes (module docstring).
    """

    def __init__(
        self,
        client: OpenSearch,
        alias: str,
        dimension: int,
        model_id: str,
        *,
        refresh: bool | str = False,
        check: bool = True,
        serverless: bool = False,
    ) -> None:
        if refresh not in (False, True, "wait_for", "true", "false"):
            raise ConfigurationError(f"refresh must be False, True or 'wait_for', not {refresh!r}")
        self._client = client
        self.alias = alias
        self.events_alias = events_alias_name(alias)
        self.dimension = dimension
        self.model_id = model_id
        self.serverless = serverless
        self._refresh: str | None = None
        if not serverless and refresh not in (False, "false"):
            self._refresh = "wait_for" if refresh == "wait_for" else "true"
        if check:
            check_index(client, alias, dimension, model_id)

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
            serverless=settings.opensearch_service == "aoss",
        )

    # -- request plumbing ---------------------------------------------------------------------

    def _route(self, tenant_id: str, agent_id: str) -> dict[str, str]:
        return {} if self.serverless else {"routing": routing_key(tenant_id, agent_id)}

    def _write_params(self) -> dict[str, str]:
        params: dict[str, str] = {}
        if not self.serverless:
            params["require_alias"] = "true"  # never let a write auto-create an unmapped index
        if self._refresh:
            params["refresh"] = self._refresh
        return params

    def _bulk(self, lines: list[dict[str, Any]], what: str) -> dict[str, Any]:
        with os_errors(what, self.alias):
            response: dict[str, Any] = self._client.bulk(body=lines, params=self._write_params())
        return response

    def _action(self, op: str, index: str, _id: str, tenant_id: str, agent_id: str) -> dict[str, Any]:
        return {op: {"_index": index, "_id": _id, **self._route(tenant_id, agent_id)}}

    def _msearch(
        self, searches: list[tuple[dict[str, Any], dict[str, Any]]], what: str
    ) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for header, body in searches:
            lines += [header, body]
        with os_errors(what, self.alias):
            response = self._client.msearch(body=lines)
        results: list[dict[str, Any]] = response.get("responses", [])
        for result in results:
            _raise_for_response(result, what)
        return results

    def _search(self, body: dict[str, Any], what: str, **params: Any) -> dict[str, Any]:
        with os_errors(what, self.alias):
            response: dict[str, Any] = self._client.search(index=self.alias, body=body, params=params)
        return response

    def _mget(self, docs: list[dict[str, Any]], what: str, **params: Any) -> list[dict[str, Any]]:
        with os_errors(what, self.alias):
            response = self._client.mget(body={"docs": docs}, params=params)
        found: list[dict[str, Any]] = response.get("docs", [])
        for doc in found:
            _raise_for_response(doc, what)
        return found

    def _doc_ref(self, index: str, _id: str, tenant_id: str, agent_id: str) -> dict[str, Any]:
        return {"_index": index, "_id": _id, **self._route(tenant_id, agent_id)}

    # -- writes -------------------------------------------------------------------------------

    def put(self, items: Sequence[StoredRecord]) -> None:
        """Index each record under its deterministic id (insert or overwrite), via ``_bulk``."""
        docs = []
        for item in items:
            record = item.record
            vector = unit(item.vector, self.dimension, self.model_id)
            action = self._action(
                "index",
                self.alias,
                doc_id(record.tenant_id, record.agent_id, record.id),
                record.tenant_id,
                record.agent_id,
            )
            docs.append((action, to_document(record, vector)))
        for start in range(0, len(docs), BULK_CHUNK):
            chunk = docs[start : start + BULK_CHUNK]
            _raise_for_items(self._bulk(_bulk_lines(chunk), "storing records"), "storing records")

    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        """An alias document in the events index: ``alias_id`` → ``record_id``, for this agent."""
        action = self._action(
            "index", self.events_alias, alias_doc_id(tenant_id, agent_id, alias_id), tenant_id, agent_id
        )
        source = {
            "doc_type": "alias",
            "tenant_id": tenant_id,
            "agent_id": agent_id,
            "alias_id": alias_id,
            "record_id": record_id,
        }
        _raise_for_items(self._bulk([action, source], "storing a record alias"), "storing a record alias")

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Forget the live record with that id (or alias) as of ``event.at``, then audit it.

        A record that is already forgotten, expired at ``event.at``, unknown, or another
        agent's is not live: nothing changes, no audit event, False.
        """
        target = self._resolve(tenant_id, agent_id, record_id)
        if target is None:
            return False
        forgotten = (
            self._forget_by_reindex(tenant_id, agent_id, target, event.at)
            if self.serverless
            else self._forget_by_script(tenant_id, agent_id, target, event.at)
        )
        if not forgotten:
            return False
        self.append_audit([event])
        return True

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """A scripted ``_update`` (a re-index on Serverless), then the audit event.

        A summary already marked at this instant or later is left as it is (a retry); the audit
        event has a deterministic id, so a retried mark adds nothing to the trail.
        """
        if self.serverless:
            marked = self._stale_by_reindex(tenant_id, agent_id, record_id, event.at)
        else:
            marked = self._forget_by_script(tenant_id, agent_id, record_id, event.at, STALE_SCRIPT, True)
        if not marked:
            return False
        self.append_audit([event])
        return True

    def _stale_by_reindex(self, tenant_id: str, agent_id: str, record_id: str, at: datetime) -> bool:
        _id = doc_id(tenant_id, agent_id, record_id)
        (doc,) = self._mget([self._doc_ref(self.alias, _id, tenant_id, agent_id)], "marking a summary stale")
        source = doc.get("_source") if doc.get("found") else None
        if not source or not _owned(source, tenant_id, agent_id):
            return False
        if source.get("deleted_at") is None or str(source["deleted_at"]) < ts(at):
            source = {**source, "deleted_at": ts(at)}
            action = self._action("index", self.alias, _id, tenant_id, agent_id)
            what = "marking a summary stale"
            _raise_for_items(self._bulk([action, source], what), what)
        return True

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        lines: list[dict[str, Any]] = []
        for event in events:
            lines.append(
                self._action("index", self.events_alias, audit_doc_id(event), event.tenant_id, event.agent_id)
            )
            lines.append(
                {
                    "doc_type": "audit",
                    "tenant_id": event.tenant_id,
                    "agent_id": event.agent_id,
                    "record_id": event.record_id,
                    "action": event.action,
                    "actor": event.actor,
                    "at": ts(event.at),
                    "detail": event.detail,
                }
            )
        if lines:
            _raise_for_items(self._bulk(lines, "writing audit events"), "writing audit events")

    def audit_events(
        self,
        tenant_id: str,
        agent_id: str,
        record_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> AuditPage:
        """Newest first by ``at``, ties by record id and action, paged with ``search_after``."""
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding: dict[str, Any] = {"t": tenant_id, "a": agent_id, "r": record_id, "k": "audit"}
        filters = [_term("doc_type", "audit"), _term("tenant_id", tenant_id), _term("agent_id", agent_id)]
        if record_id is not None:
            filters.append(_term("record_id", record_id))
        body: dict[str, Any] = {
            "size": limit + 1,
            "query": {"bool": {"filter": filters}},
            "sort": [{"at": "desc"}, {"record_id": "desc"}, {"action": "desc"}],
        }
        if cursor is not None:
            after = decode_cursor(cursor, binding).get("s")
            if not isinstance(after, list) or len(after) != 3:
                raise _invalid_cursor()
            body["search_after"] = after
        with os_errors("reading the audit trail", self.events_alias):
            response: dict[str, Any] = self._client.search(
                index=self.events_alias, body=body, params=self._route(tenant_id, agent_id)
            )
        hits = _hits(response)
        page = hits[:limit]
        events = [
            AuditEvent(
                tenant_id=h["_source"]["tenant_id"],
                agent_id=h["_source"]["agent_id"],
                record_id=h["_source"]["record_id"],
                action=h["_source"]["action"],
                actor=h["_source"]["actor"],
                at=datetime.fromisoformat(h["_source"]["at"]),
                detail=h["_source"].get("detail") or {},
            )
            for h in page
            if _owned(h["_source"], tenant_id, agent_id)
        ]
        next_cursor = encode_cursor({**binding, "s": page[-1]["sort"]}) if len(hits) > limit else None
        return AuditPage(events=events, next_cursor=next_cursor)

    def _forget_by_script(
        self,
        tenant_id: str,
        agent_id: str,
        record_id: str,
        at: datetime,
        script: str = SOFT_DELETE_SCRIPT,
        noop_counts: bool = False,
    ) -> bool:
        """One scripted ``_update``: the check and the change are atomic on the shard.

        ``noop_counts``: a ``noop`` answer (nothing to change) still counts as done.
        """
        body = {
            "script": {
                "source": script,
                "lang": "painless",
                "params": {"tenant_id": tenant_id, "agent_id": agent_id, "at": ts(at)},
            }
        }
        params: dict[str, Any] = {**self._route(tenant_id, agent_id), "retry_on_conflict": 3}
        if self._refresh:
            params["refresh"] = self._refresh
        with os_errors("forgetting a record", self.alias):
            try:
                response = self._client.update(
                    index=self.alias, id=doc_id(tenant_id, agent_id, record_id), body=body, params=params
                )
            except NotFoundError as exc:
                if error_type(exc) == "index_not_found_exception":
                    raise
                return False  # document_missing_exception: no such record
        done = {"updated", "noop"} if noop_counts else {"updated"}
        return response.get("result") in done

    def _forget_by_reindex(self, tenant_id: str, agent_id: str, record_id: str, at: datetime) -> bool:
        """Serverless: read the whole document (vector included) and index it back forgotten."""
        _id = doc_id(tenant_id, agent_id, record_id)
        (doc,) = self._mget([self._doc_ref(self.alias, _id, tenant_id, agent_id)], "forgetting a record")
        source = doc.get("_source") if doc.get("found") else None
        if not source or not _owned(source, tenant_id, agent_id):
            return False
        record = to_record(source)
        if not record.is_live(at):
            return False
        source = {**source, "deleted_at": ts(at), "updated_at": ts(at)}
        action = self._action("index", self.alias, _id, tenant_id, agent_id)
        _raise_for_items(self._bulk([action, source], "forgetting a record"), "forgetting a record")
        return True

    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort, never raises: one ``_bulk`` of scripted updates (none on Serverless).

        Each update re-indexes its document (and its vector) in a new segment: access counting
        costs write capacity proportional to search traffic, which is why it is one bulk request
        per search and why failures are only logged.
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids or self.serverless:
            return
        params = {"tenant_id": tenant_id, "agent_id": agent_id, "at": ts(at)}
        script = {"script": {"source": ACCESS_SCRIPT, "lang": "painless", "params": params}}
        lines: list[dict[str, Any]] = []
        for record_id in ids:
            action = self._action(
                "update", self.alias, doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id
            )
            action["update"]["retry_on_conflict"] = 3
            lines += [action, script]
        try:
            with os_errors("counting record accesses", self.alias):
                response = self._client.bulk(body=lines, params={"require_alias": "true"})
            failures = [f for f in _item_failures(response) if f[0] != 404]
            if failures:
                logger.warning("record_access: %d updates failed, first: %s", len(failures), failures[0])
        except Exception as exc:  # best effort by contract: a search must not fail on its bookkeeping
            logger.warning(
                "record_access skipped for %d records of %s/%s: %s", len(ids), tenant_id, agent_id, exc
            )

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """Hard-delete the tenant's records of ``grain`` whose span ended before ``cutoff``.

        ``_delete_by_query`` over every agent of the tenant (no routing: all shards), in
        parallel slices (``slices=auto``: one per shard), waiting for the result, skipping
        documents that changed meanwhile (``conflicts=proceed``: the next run takes them).
        """
        query = {
            "bool": {
                "filter": [
                    _term("tenant_id", tenant_id),
                    _term("grain", Grain(grain).value),
                    {"range": {"span_end": {"lt": ts(cutoff)}}},
                ]
            }
        }
        if self.serverless:
            return self._delete_by_pages(query)
        params: dict[str, Any] = {
            "slices": "auto",
            "conflicts": "proceed",
            "wait_for_completion": "true",
            "request_timeout": MAINTENANCE_TIMEOUT_S,
        }
        if self._refresh:
            params["refresh"] = "true"  # delete-by-query takes true/false only
        with os_errors("deleting old records", self.alias):
            response = self._client.delete_by_query(index=self.alias, body={"query": query}, params=params)
        failures = response.get("failures") or []
        if failures:
            raise DependencyError(
                f"retention deleted {response.get('deleted', 0)} records of {tenant_id}/{grain} but "
                f"{len(failures)} deletions failed (first: {failures[0]}); it is safe to run again"
            )
        return int(response.get("deleted", 0))

    def _delete_by_pages(self, query: dict[str, Any]) -> int:
        """Serverless has no ``_delete_by_query``: read ids page by page, delete them in bulk."""
        deleted = 0
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": DELETE_PAGE,
                "_source": False,
                "query": query,
                "sort": [
                    {"id": {"order": "asc"}},
                    {"tenant_id": {"order": "asc"}},
                    {"agent_id": {"order": "asc"}},
                ],
            }
            if after is not None:
                body["search_after"] = after
            hits = _hits(self._search(body, "finding old records", request_timeout=MAINTENANCE_TIMEOUT_S))
            if not hits:
                return deleted
            lines = [{"delete": {"_index": self.alias, "_id": hit["_id"]}} for hit in hits]
            response = self._bulk(lines, "deleting old records")
            _raise_for_items(response, "deleting old records")
            deleted += sum(
                1 for item in response.get("items", []) if item.get("delete", {}).get("result") == "deleted"
            )
            after = hits[-1]["sort"]

    def retention_candidates(
        self, tenant_id: str, grain: Grain, cutoff: datetime, cursor: str | None = None, limit: int = 1000
    ) -> Page:
        """The tenant's ``grain`` records ending before ``cutoff``, sorted by (span end, id),
        paged with ``search_after`` (the cursor is the last hit's sort values, as JSON). No
        routing: every agent of the tenant, all shards."""
        body: dict[str, Any] = {
            "size": limit,
            "_source": _NO_VECTOR,
            "query": {
                "bool": {
                    "filter": [
                        _term("tenant_id", tenant_id),
                        _term("grain", Grain(grain).value),
                        {"range": {"span_end": {"lt": ts(cutoff)}}},
                    ]
                }
            },
            "sort": [
                {"span_end": {"order": "asc"}},
                {"id": {"order": "asc"}},
                {"agent_id": {"order": "asc"}},
            ],
        }
        if cursor is not None:
            try:
                after = json.loads(base64.urlsafe_b64decode(cursor.encode()))
            except (ValueError, binascii.Error) as exc:
                raise ValidationFailedError("invalid cursor") from exc
            body["search_after"] = after
        hits = _hits(
            self._search(body, "finding records past retention", request_timeout=MAINTENANCE_TIMEOUT_S)
        )
        records = [to_record(h["_source"]) for h in hits if h["_source"].get("tenant_id") == tenant_id]
        next_cursor = None
        if len(hits) == limit:
            next_cursor = base64.urlsafe_b64encode(json.dumps(hits[-1]["sort"]).encode()).decode()
        return Page(records=records, next_cursor=next_cursor)

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """One bulk request of deletes by document id per `DELETE_PAGE` ids (routed to the
        agent's shard); a missing document is not an error (idempotent)."""
        ids = list(dict.fromkeys(record_ids))
        deleted = 0
        for i in range(0, len(ids), DELETE_PAGE):
            lines = [
                {
                    "delete": {
                        "_index": self.alias,
                        "_id": doc_id(tenant_id, agent_id, rid),
                        **self._route(tenant_id, agent_id),
                    }
                }
                for rid in ids[i : i + DELETE_PAGE]
            ]
            response = self._bulk(lines, "deleting records past retention")
            for item in response.get("items", []):
                result = item.get("delete", {})
                if result.get("result") == "deleted":
                    deleted += 1
                elif result.get("status") not in (200, 404):
                    raise DependencyError(f"deleting records past retention failed: {result}")
        return deleted

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Expired or long-forgotten records of the tenant, by ``_delete_by_query`` with slices
        (pages of ids on Serverless), like `delete_older_than`. The expired live records are read
        first (ids only, in pages) and audited, so an audit event exists for every record the
        delete takes; a run that dies in between audits them again on its next run."""
        self._audit_expired(tenant_id, now)
        query = {
            "bool": {
                "filter": [_term("tenant_id", tenant_id)],
                "should": [
                    {"range": {"expires_at": {"lte": ts(now)}}},
                    {"range": {"deleted_at": {"lt": ts(forgotten_before)}}},
                ],
                "minimum_should_match": 1,
            }
        }
        if self.serverless:
            return self._delete_by_pages(query)
        params: dict[str, Any] = {
            "slices": "auto",
            "conflicts": "proceed",
            "wait_for_completion": "true",
            "request_timeout": MAINTENANCE_TIMEOUT_S,
        }
        if self._refresh:
            params["refresh"] = "true"
        with os_errors("purging expired and forgotten records", self.alias):
            response = self._client.delete_by_query(index=self.alias, body={"query": query}, params=params)
        failures = response.get("failures") or []
        if failures:
            raise DependencyError(
                f"purge of {tenant_id} had {len(failures)} failures; it is safe to run again"
            )
        return int(response.get("deleted", 0))

    def _audit_expired(self, tenant_id: str, now: datetime) -> None:
        query = {
            "bool": {
                "filter": [_term("tenant_id", tenant_id), {"range": {"expires_at": {"lte": ts(now)}}}],
                "must_not": [{"exists": {"field": "deleted_at"}}],
            }
        }
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": DELETE_PAGE,
                "_source": ["id", "agent_id"],
                "query": query,
                "sort": [{"id": {"order": "asc"}}, {"agent_id": {"order": "asc"}}],
            }
            if after is not None:
                body["search_after"] = after
            hits = _hits(self._search(body, "finding expired records", request_timeout=MAINTENANCE_TIMEOUT_S))
            if not hits:
                return
            self.append_audit(
                [
                    AuditEvent(
                        tenant_id=tenant_id,
                        agent_id=hit["_source"]["agent_id"],
                        record_id=hit["_source"]["id"],
                        action=AuditAction.RETENTION,
                        actor="retention",
                        at=now,
                        detail={"rule": "expired"},
                    )
                    for hit in hits
                ]
            )
            after = hits[-1]["sort"]

    # -- reads --------------------------------------------------------------------------------

    def _resolve(self, tenant_id: str, agent_id: str, record_id: str) -> str | None:
        """``record_id`` if the agent has such a record, else what it is an alias of, else None."""
        record, target = self._lookup(tenant_id, agent_id, record_id)
        if record is not None:
            return record.id
        return target

    def _lookup(
        self, tenant_id: str, agent_id: str, record_id: str
    ) -> tuple[MemoryRecord | None, str | None]:
        """One ``_mget``: the record with that id, and the alias document with that id."""
        docs = [
            self._doc_ref(self.alias, doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id),
            self._doc_ref(
                self.events_alias, alias_doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id
            ),
        ]
        found = self._mget(docs, "reading a record", _source_excludes=VECTOR_FIELD)
        record_doc, alias_doc = [*found, {}, {}][:2]
        source = record_doc.get("_source") if record_doc.get("found") else None
        if source and _owned(source, tenant_id, agent_id):
            return to_record(source), None
        link = alias_doc.get("_source") if alias_doc.get("found") else None
        if link and _owned(link, tenant_id, agent_id) and isinstance(link.get("record_id"), str):
            return None, str(link["record_id"])
        return None, None

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        record, target = self._lookup(tenant_id, agent_id, record_id)
        if record is not None or target is None:
            return record
        (doc,) = self._mget(
            [self._doc_ref(self.alias, doc_id(tenant_id, agent_id, target), tenant_id, agent_id)],
            "reading a record",
            _source_excludes=VECTOR_FIELD,
        )
        source = doc.get("_source") if doc.get("found") else None
        return to_record(source) if source and _owned(source, tenant_id, agent_id) else None

    def _knn_body(
        self, vector: npt.NDArray[np.float32], k: int, filters: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Efficient filtering: the filter is *inside* the ``knn`` clause (see module doc)."""
        return {
            "size": k,
            "_source": _NO_VECTOR,
            "query": {
                "knn": {
                    VECTOR_FIELD: {
                        "vector": vector_json(vector),
                        "k": k,
                        "filter": {"bool": {"filter": filters}},
                    }
                }
            },
        }

    def nearest(
        self,
        tenant_id: str,
        agent_id: str,
        grain: Grain,
        vector: Vector,
        now: datetime,
        within: Neighbourhood | None = None,
    ) -> tuple[MemoryRecord, float] | None:
        """The live record of ``grain`` (``within`` the neighbourhood) closest to ``vector``,
        and its cosine. The neighbourhood is part of the k-NN clause's filter."""
        query_vector = unit(vector, self.dimension, self.model_id)
        filters = [*live_filters(tenant_id, agent_id, now), _term("grain", Grain(grain).value)]
        if within is not None:
            filters += neighbourhood_filters(within)
        body = self._knn_body(query_vector, NEAREST_K, filters)
        body["size"] = 1
        hits = _hits(self._search(body, "finding the nearest record", **self._route(tenant_id, agent_id)))
        if not hits:
            return None
        return to_record(hits[0]["_source"]), cosine_from_score(float(hits[0]["_score"]))

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` k-NN hits and up to ``limit`` BM25 hits (one ``_msearch``), merged.

        Vector hits first in vector-rank order, then lexical-only hits in lexical-rank order.
        With a query vector every candidate carries its cosine. Without a vector and without a
        word in ``text``: the newest live records in the window.
        """
        limit = max(0, query.limit)
        if limit == 0:
            return []
        filters = query_filters(query)
        route = self._route(query.tenant_id, query.agent_id)
        words = query_words(query.text)
        query_vector = None if query.vector is None else unit(query.vector, self.dimension, self.model_id)
        if query_vector is None and words is None:
            body = {
                "size": limit,
                "_source": _NO_VECTOR,
                "query": {"bool": {"filter": filters}},
                "sort": _NEWEST_FIRST,
            }
            return [
                Candidate(record=to_record(h["_source"]))
                for h in _hits(self._search(body, "listing records", **route))
            ]

        header = {"index": self.alias, **route}
        searches: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if query_vector is not None:
            searches.append((header, self._knn_body(query_vector, limit, filters)))
        if words is not None:
            lexical_body = {
                "size": limit,
                "_source": _NO_VECTOR,
                "query": {
                    "bool": {
                        "must": [
                            {
                                "multi_match": {
                                    "query": words,
                                    "fields": list(LEXICAL_FIELDS),
                                    "type": "cross_fields",
                                }
                            }
                        ],
                        "filter": filters,
                    }
                },
            }
            searches.append((header, lexical_body))
        responses = self._msearch(searches, "searching records")
        vector_hits = _hits(responses[0]) if query_vector is not None else []
        lexical_hits = _hits(responses[-1]) if words is not None else []

        records: dict[str, MemoryRecord] = {}
        similarity: dict[str, float] = {}
        raw_lexical: dict[str, float] = {}
        for hit in vector_hits:
            record = to_record(hit["_source"])
            records.setdefault(record.id, record)
            similarity[record.id] = cosine_from_score(float(hit["_score"]))
        for hit in lexical_hits:
            record = to_record(hit["_source"])
            records.setdefault(record.id, record)
            raw_lexical[record.id] = float(hit["_score"])
        lexical = scaled_to_best(raw_lexical)
        order = fused_order(list(similarity), list(raw_lexical))
        if query_vector is not None:
            missing = lacking_cosine(order, similarity)
            similarity.update(self._cosines(query.tenant_id, query.agent_id, missing, query_vector))
            order = [rid for rid in order if rid in similarity]  # a record deleted in between
        return [
            Candidate(record=records[rid], similarity=similarity.get(rid), lexical=lexical.get(rid))
            for rid in order
        ]

    def _cosines(
        self, tenant_id: str, agent_id: str, record_ids: list[str], query_vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """Exact cosines of records the k-NN query did not return (lexical-only hits)."""
        if not record_ids:
            return {}
        docs = [
            self._doc_ref(self.alias, doc_id(tenant_id, agent_id, rid), tenant_id, agent_id)
            for rid in record_ids
        ]
        found = self._mget(docs, "reading vectors", _source_includes=f"{VECTOR_FIELD},tenant_id,agent_id")
        out: dict[str, float] = {}
        q = query_vector.astype(np.float64)
        for rid, doc in zip(record_ids, found, strict=True):
            source = doc.get("_source") if doc.get("found") else None
            if not source or not _owned(source, tenant_id, agent_id) or VECTOR_FIELD not in source:
                continue
            v = np.asarray(source[VECTOR_FIELD], dtype=np.float64)
            norm = float(np.linalg.norm(v))
            out[rid] = min(1.0, max(-1.0, float(v @ q / norm))) if norm > 0 else 0.0
        return out

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> list[MemoryRecord]:
        """The last ``limit`` live working records of a conversation that occurred before
        ``before``, oldest first: the turns a new turn is embedded and indexed with.

        "Live" is "not forgotten" (``deleted_at`` absent): the port passes no clock, and an
        expired turn still says what the new one answers. One routed search, newest first
        (``occurred_at`` desc, id desc), ``size = limit + 1``. OpenSearch compares dates to the
        millisecond, so the range takes the whole millisecond of ``before``, the records are
        compared to ``before`` here to the microsecond, and the extra hit tells whether the
        millisecond of the oldest kept record goes on past the page (then the next page is
        read, with ``search_after``): the result is exact to the microsecond, like SQLite's.
        Near-real-time: turns written less than a refresh interval (~1 s) ago are not seen.
        """
        if limit < 1:
            return []
        before = before if before.tzinfo is not None else before.replace(tzinfo=UTC)
        whole_ms = before.replace(microsecond=before.microsecond // 1000 * 1000) + timedelta(milliseconds=1)
        filters = [
            _term("tenant_id", tenant_id),
            _term("agent_id", agent_id),
            _not_deleted(),
            _term("grain", Grain.WORKING.value),
            _term("conversation_id", conversation_id),
            {"range": {"occurred_at": {"lt": ts(whole_ms)}}},
        ]
        route = self._route(tenant_id, agent_id)
        kept: list[tuple[MemoryRecord, int]] = []  # (record, its millisecond as OpenSearch sorts it)
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": limit + 1,
                "_source": _NO_VECTOR,
                "query": {"bool": {"filter": filters}},
                "sort": _NEWEST_FIRST,
            }
            if after is not None:
                body["search_after"] = after
            hits = _hits(self._search(body, "reading the last turns of a conversation", **route))
            for h in hits:
                if not _owned(h["_source"], tenant_id, agent_id):
                    continue
                turn = to_record(h["_source"])
                if turn.occurred_at < before:
                    kept.append((turn, int(h["sort"][0])))
            if len(hits) <= limit:
                break  # the conversation has nothing older
            if len(kept) >= limit and int(hits[-1]["sort"][0]) < kept[limit - 1][1]:
                break  # every record of the oldest kept millisecond is in
            after = hits[-1]["sort"]
        turns = sorted((turn for turn, _ in kept), key=lambda r: (r.occurred_at, r.id))
        return turns[-limit:]

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> list[MemoryRecord]:
        """Every live ``grain`` record overlapping ``[start, end)``, oldest first, read in pages.

        Routed to the agent's shard, sorted by (``occurred_at``, ``id``) and paged with
        ``search_after`` on those sort values: no point-in-time context to open and close, and
        no page repeats or skips a record that existed when the read began. The sort compares
        milliseconds, so the result is sorted once more here to the microsecond.
        """
        filters = [
            *live_filters(tenant_id, agent_id, now),
            _term("grain", Grain(grain).value),
            {"range": {"span_start": {"lt": ts(end)}}},
            {"range": {"span_end": {"gte": ts(start)}}},
        ]
        return self._read_all(tenant_id, agent_id, filters, "reading the records of a period")

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> list[MemoryRecord]:
        """Live summaries whose ``user_ids`` name ``user_id``, oldest first, read in pages."""
        filters = [
            *live_filters(tenant_id, agent_id, now),
            {"bool": {"must_not": [_term("grain", Grain.WORKING.value)]}},
            _term("user_ids", user_id),
        ]
        return self._read_all(tenant_id, agent_id, filters, "finding the summaries of an end user")

    def _read_all(
        self, tenant_id: str, agent_id: str, filters: list[dict[str, Any]], what: str
    ) -> list[MemoryRecord]:
        """Every record of the agent matching ``filters``, in pages of `SPAN_PAGE`."""
        route = self._route(tenant_id, agent_id)
        records: list[MemoryRecord] = []
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": SPAN_PAGE,
                "_source": _NO_VECTOR,
                "query": {"bool": {"filter": filters}},
                "sort": _OLDEST_FIRST,
            }
            if after is not None:
                body["search_after"] = after
            hits = _hits(self._search(body, what, **route))
            records += [to_record(h["_source"]) for h in hits if _owned(h["_source"], tenant_id, agent_id)]
            if len(hits) < SPAN_PAGE:
                return sorted(records, key=lambda r: (r.occurred_at, r.id))
            after = hits[-1]["sort"]

    # -- what an operator reads ------------------------------------------------------------------

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents with live records: a ``composite`` aggregation over ``agent_id``
        terms, filtered by tenant, paged with ``after_key``. Not routed: agents live on
        different shards."""
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = {"t": tenant_id, "k": "agents"}
        composite: dict[str, Any] = {
            "size": limit,
            "sources": [{"agent_id": {"terms": {"field": "agent_id"}}}],
        }
        if cursor is not None:
            after = decode_cursor(cursor, binding).get("a")
            if not isinstance(after, str):
                raise _invalid_cursor()
            composite["after"] = {"agent_id": after}
        body = {
            "size": 0,
            "query": {"bool": {"filter": tenant_live_filters(tenant_id, now)}},
            "aggs": {"agents": {"composite": composite}},
        }
        agg = self._search(body, "listing a tenant's agents").get("aggregations", {}).get("agents", {})
        buckets = agg.get("buckets", [])
        agents = [AgentRef(tenant_id=tenant_id, agent_id=str(b["key"]["agent_id"])) for b in buckets]
        after_key = agg.get("after_key")
        next_cursor = (
            encode_cursor({**binding, "a": after_key["agent_id"]})
            if after_key and len(buckets) == limit
            else None
        )
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> list[int]:
        """One routed request: a ``range`` aggregation on ``occurred_at`` with one range per
        period (``from`` inclusive, ``to`` exclusive), buckets in the order asked."""
        if len(edges) < 2:
            return []
        if any(b <= a for a, b in pairwise(edges)):
            raise ValidationFailedError("histogram edges must be strictly ascending")
        filters = [
            *live_filters(tenant_id, agent_id, now),
            _term("grain", Grain(grain).value),
            {"range": {"occurred_at": {"gte": ts(edges[0]), "lt": ts(edges[-1])}}},
        ]
        body = {
            "size": 0,
            "query": {"bool": {"filter": filters}},
            "aggs": {
                "periods": {
                    "range": {
                        "field": "occurred_at",
                        "ranges": [{"from": ts(a), "to": ts(b)} for a, b in pairwise(edges)],
                    }
                }
            },
        }
        response = self._search(body, "counting records per period", **self._route(tenant_id, agent_id))
        buckets = response.get("aggregations", {}).get("periods", {}).get("buckets", [])
        counts = [int(b.get("doc_count", 0)) for b in buckets]
        if len(counts) != len(edges) - 1:
            raise DependencyError(f"OpenSearch answered {len(counts)} periods for {len(edges) - 1} asked")
        return counts

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort, never raises: a scripted upsert of the agent's day document in the
        events index (none on Serverless, which has no ``_update``, as for `record_access`)."""
        if self.serverless:
            return
        day = datetime.combine(at.astimezone(UTC).date(), time(), UTC)
        body = {
            "scripted_upsert": True,
            "script": {
                "source": SEARCH_COUNT_SCRIPT,
                "lang": "painless",
                "params": {
                    "tenant_id": tenant_id,
                    "agent_id": agent_id,
                    "day": ts(day),
                    "zero_hits": 1 if hits == 0 else 0,
                },
            },
            "upsert": {},
        }
        _id = _scoped("searches", tenant_id, agent_id, day.date().isoformat())
        try:
            with os_errors("counting a search", self.events_alias):
                self._client.update(
                    index=self.events_alias,
                    id=_id,
                    body=body,
                    params={**self._route(tenant_id, agent_id), "retry_on_conflict": 3},
                )
        except Exception as exc:  # best effort by contract: a search must not fail on its bookkeeping
            logger.warning("record_search skipped for %s/%s: %s", tenant_id, agent_id, exc)

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> list[SearchDay]:
        """The agent's day documents from ``since`` on, oldest first, in one routed search."""
        body = {
            "size": SEARCH_DAYS_PAGE,
            "query": {
                "bool": {
                    "filter": [
                        _term("doc_type", "searches"),
                        _term("tenant_id", tenant_id),
                        _term("agent_id", agent_id),
                        {"range": {"at": {"gte": ts(datetime.combine(since, time(), UTC))}}},
                    ]
                }
            },
            "sort": [{"at": "asc"}],
        }
        with os_errors("reading search counts", self.events_alias):
            response: dict[str, Any] = self._client.search(
                index=self.events_alias, body=body, params=self._route(tenant_id, agent_id)
            )
        days: list[SearchDay] = []
        for h in _hits(response):
            source = h["_source"]
            if not _owned(source, tenant_id, agent_id):
                continue
            detail = source.get("detail") or {}
            days.append(
                SearchDay(
                    day=datetime.fromisoformat(source["at"]).date(),
                    searches=int(detail.get("searches", 0)),
                    zero_hits=int(detail.get("zero_hits", 0)),
                )
            )
        return days

    def list(
        self,
        tenant_id: str,
        agent_id: str,
        now: datetime,
        grain: Grain | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        """Live records, newest ``occurred_at`` first (ties: id descending), with ``search_after``.

        The cursor is urlsafe base64 of JSON: the sort values of the page's last record and the
        tenant, agent and grain it was issued for; any other cursor is a `ValidationFailedError`.
        """
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = {"t": tenant_id, "a": agent_id, "g": grain.value if grain else None}
        filters = live_filters(tenant_id, agent_id, now)
        if grain is not None:
            filters.append(_term("grain", Grain(grain).value))
        body: dict[str, Any] = {
            "size": limit + 1,
            "_source": _NO_VECTOR,
            "query": {"bool": {"filter": filters}},
            "sort": _NEWEST_FIRST,
        }
        if cursor is not None:
            after = decode_cursor(cursor, binding).get("s")
            if (
                not isinstance(after, list)
                or len(after) != 2
                or not isinstance(after[0], int)
                or isinstance(after[0], bool)
                or not isinstance(after[1], str)
            ):
                raise _invalid_cursor()
            body["search_after"] = after
        hits = _hits(self._search(body, "listing records", **self._route(tenant_id, agent_id)))
        page = hits[:limit]
        next_cursor = encode_cursor({**binding, "s": page[-1]["sort"]}) if len(hits) > limit else None
        return Page(records=[to_record(h["_source"]) for h in page], next_cursor=next_cursor)

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain (a ``terms`` aggregation) and the oldest and newest record.

        Oldest/newest come from ``top_hits`` (the stored value, exact to the µs) rather than
        ``min``/``max`` aggregations (epoch milliseconds).
        """

        def edge(order: str) -> dict[str, Any]:
            return {
                "top_hits": {
                    "size": 1,
                    "sort": [{"occurred_at": {"order": order}}, {"id": {"order": order}}],
                    "_source": {"includes": ["occurred_at"]},
                }
            }

        body = {
            "size": 0,
            "track_total_hits": True,
            "query": {"bool": {"filter": live_filters(tenant_id, agent_id, now)}},
            "aggs": {
                "grains": {"terms": {"field": "grain", "size": len(Grain)}},
                "oldest": edge("asc"),
                "newest": edge("desc"),
            },
        }
        aggs = self._search(body, "counting records", **self._route(tenant_id, agent_id)).get(
            "aggregations", {}
        )
        buckets = aggs.get("grains", {}).get("buckets", [])
        if not buckets:
            return StoreStats()

        def first(name: str) -> datetime | None:
            hits = aggs.get(name, {}).get("hits", {}).get("hits", [])
            value = hits[0].get("_source", {}).get("occurred_at") if hits else None
            return datetime.fromisoformat(value) if isinstance(value, str) else None

        return StoreStats(
            records={str(b["key"]): int(b["doc_count"]) for b in buckets},
            oldest=first("oldest"),
            newest=first("newest"),
        )

    def agents_with_records(
        self,
        grain: Grain,
        start: datetime,
        end: datetime,
        cursor: str | None = None,
        page_size: int = 500,
    ) -> AgentPage:
        """Every (tenant, agent) with records of ``grain`` overlapping ``[start, end)``, not forgotten.

        A ``composite`` aggregation over (tenant_id, agent_id) terms: pages in key order with
        ``after_key``, never loading every agent at once. No routing: it reads every shard.
        Expiry is not applied (the port passes no clock); an expired record at most schedules a
        summary that finds nothing to fold.
        """
        if page_size < 1:
            raise ValidationFailedError("page_size must be at least 1")
        binding = {"g": Grain(grain).value, "from": ts(start), "to": ts(end)}
        composite: dict[str, Any] = {
            "size": page_size,
            "sources": [
                {"tenant_id": {"terms": {"field": "tenant_id"}}},
                {"agent_id": {"terms": {"field": "agent_id"}}},
            ],
        }
        if cursor is not None:
            after = decode_cursor(cursor, binding).get("k")
            if not (
                isinstance(after, dict)
                and set(after) == {"tenant_id", "agent_id"}
                and all(isinstance(v, str) for v in after.values())
            ):
                raise _invalid_cursor()
            composite["after"] = after
        body = {
            "size": 0,
            "query": {
                "bool": {
                    "filter": [
                        _term("grain", Grain(grain).value),
                        _not_deleted(),
                        {"range": {"span_start": {"lt": ts(end)}}},
                        {"range": {"span_end": {"gte": ts(start)}}},
                    ]
                }
            },
            "aggs": {"agents": {"composite": composite}},
        }
        agg = self._search(body, "listing agents with records").get("aggregations", {}).get("agents", {})
        buckets = agg.get("buckets", [])
        agents = [AgentRef(tenant_id=b["key"]["tenant_id"], agent_id=b["key"]["agent_id"]) for b in buckets]
        after_key = agg.get("after_key")
        next_cursor = (
            encode_cursor({**binding, "k": after_key}) if after_key and len(buckets) == page_size else None
        )
        return AgentPage(agents=agents, next_cursor=next_cursor)
