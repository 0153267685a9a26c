"""The painless scripts of the store's ``_update`` requests, and the bodies that carry them.

A scripted update checks and changes a document atomically on its shard: the ownership check,
the liveness check and the change cannot be split by a concurrent write. The scripts compare
times as strings, which is exact because the store writes fixed-width UTC strings
(`opensearch_documents.ts`). Kept apart so a script can be read (and tested) as one piece of text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.model.records import RecordValidity

#: Forget a record only if it is the caller's and live at ``params.at`` (times are fixed-width
#: strings, so ``compareTo`` orders them in time); otherwise change nothing (``noop``).
#: What a forget or a stale mark removes at once, as the SQLite store does: the words and the
#: vectors (the tombstone keeps the id, the times and the sources).
_HIDE = "s.content = ''; s.context = null; s.merged_from = []; s.remove('vector'); s.remove('spaces'); "
SOFT_DELETE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id || s.deleted_at != null "
    "|| (s.expires_at != null && s.expires_at.compareTo(params.at) <= 0)) { ctx.op = 'noop'; } "
    "else { s.deleted_at = params.at; s.updated_at = params.at; " + _HIDE + "}"
)
#: Mark a summary stale: ``deleted_at`` moves to ``params.at`` unless it is already that late.
STALE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id) { ctx.op = 'noop'; } "
    "else if (s.deleted_at == null || s.deleted_at.compareTo(params.at) < 0) { s.deleted_at = params.at; "
    + _HIDE
    + "} else { ctx.op = 'noop'; }"
)
#: Replace a live record's experience (feedback); a forgotten or expired record is left as it is.
EXPERIENCE_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id || s.deleted_at != null "
    "|| (s.expires_at != null && s.expires_at.compareTo(params.at) <= 0)) { ctx.op = 'noop'; } "
    "else { s.experience = params.experience; "
    "if (s.updated_at == null || s.updated_at.compareTo(params.at) < 0) { s.updated_at = params.at; } }"
)
#: Replace a live record's supersession fields (null and an empty list clear them) and move
#: ``updated_at`` (an upgrade's catch-up copies what moved); its content and vectors stay. A
#: forgotten or expired record is left as it is.
VALIDITY_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id || s.deleted_at != null "
    "|| (s.expires_at != null && s.expires_at.compareTo(params.at) <= 0)) { ctx.op = 'noop'; } "
    "else { s.valid_from = params.valid_from; s.valid_to = params.valid_to; "
    "s.supersedes = params.supersedes; s.superseded_by = params.superseded_by; "
    "if (s.updated_at == null || s.updated_at.compareTo(params.at) < 0) { s.updated_at = params.at; } }"
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
#: Count an access and keep the latest access time; only on the caller's own records.
ACCESS_SCRIPT = (
    "def s = ctx._source; "
    "if (s.tenant_id != params.tenant_id || s.agent_id != params.agent_id) { ctx.op = 'noop'; } "
    "else { s.access_count = (s.access_count == null ? 0 : s.access_count) + 1; "
    "if (s.last_accessed_at == null || s.last_accessed_at.compareTo(params.at) < 0) "
    "{ s.last_accessed_at = params.at; } }"
)


def painless(source: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"source": source, "lang": "painless", "params": params}


def record_script_body(script: str, tenant_id: str, agent_id: str, at: datetime) -> dict[str, Any]:
    """An ``_update`` body running ``script`` on one of the caller's records as of ``at``
    (`SOFT_DELETE_SCRIPT`, `STALE_SCRIPT`, and per document of a bulk, `ACCESS_SCRIPT`)."""
    return {"script": painless(script, {"tenant_id": tenant_id, "agent_id": agent_id, "at": ts(at)})}


def validity_params(validity: RecordValidity) -> dict[str, Any]:
    """The four supersession fields as a document holds them (`VALIDITY_SCRIPT`'s params):
    fixed-width times, null and ``[]`` when cleared."""
    return {
        "valid_from": None if validity.valid_from is None else ts(validity.valid_from),
        "valid_to": None if validity.valid_to is None else ts(validity.valid_to),
        "supersedes": list(validity.supersedes),
        "superseded_by": validity.superseded_by,
    }


def search_count_body(tenant_id: str, agent_id: str, day: datetime, hits: int) -> dict[str, Any]:
    """A scripted upsert counting one search on the day document of ``day`` (UTC midnight)."""
    return {
        "scripted_upsert": True,
        "script": painless(
            SEARCH_COUNT_SCRIPT,
            {
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "day": ts(day),
                "zero_hits": 1 if hits == 0 else 0,
            },
        ),
        "upsert": {},
    }
