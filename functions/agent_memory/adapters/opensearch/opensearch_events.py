"""The events index's documents and queries: record aliases, the audit trail, search counts.

Aliases and audit events live in the events index (`opensearch_index`), never on records, so a
record's overwrite (``put``) can never drop them and no record query needs a doc-type filter.
Each document names its ``doc_type`` (``alias``, ``audit``, ``searches``) and its owner; every
query filters both, and what it reads back is checked to be the caller's. Pure functions, apart
from the store's I/O, so the shapes can be tested without a cluster.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from datetime import time as day_time
from typing import Any

from agent_memory.adapters.opensearch.opensearch_documents import ts
from agent_memory.adapters.opensearch.opensearch_filters import paged_body, term
from agent_memory.ports import AuditEvent, SearchDay

#: Day documents read by `search_days` (the service asks for at most a few hundred days).
SEARCH_DAYS_PAGE = 1000


def alias_document(tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> dict[str, Any]:
    """``alias_id`` → ``record_id``, for this agent (a write merged into an existing record)."""
    return {
        "doc_type": "alias",
        "tenant_id": tenant_id,
        "agent_id": agent_id,
        "alias_id": alias_id,
        "record_id": record_id,
    }


class AppendOrder:
    """Numbers that grow in the order audit events are appended, for the order of one instant.

    Events of one instant (a forget and the stale mark it makes) must be listed in the order they
    happened, as SQLite's ``seq`` lists them; OpenSearch has no sequence, so each document carries
    ``seq``: the appending process's clock in nanoseconds, moved past the last number it gave so
    two events of one batch (or of one nanosecond) never tie. Processes' clocks agree to well
    under the time between two steps of one operation, which is all the order of one instant needs.
    """

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._last = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> list[int]:
        """``count`` numbers, each above every number given before."""
        with self._lock:
            first = max(self._clock(), self._last + 1)
            self._last = first + count - 1
        return list(range(first, first + count))


#: The fields an audit document holds as the event has them (``at`` is written as `ts`).
_AUDIT_FIELDS = ("tenant_id", "agent_id", "record_id", "action", "actor")


def audit_document(event: AuditEvent, seq: int) -> dict[str, Any]:
    return {
        "doc_type": "audit",
        **{name: getattr(event, name) for name in _AUDIT_FIELDS},
        "at": ts(event.at),
        "seq": seq,
        "detail": event.detail,
    }


def audit_event(source: dict[str, Any]) -> AuditEvent:
    """The event `audit_document` wrote (``seq`` and ``doc_type`` are the index's, not the event's)."""
    return AuditEvent(
        **{name: source[name] for name in _AUDIT_FIELDS},
        at=datetime.fromisoformat(source["at"]),
        detail=source.get("detail") or {},
    )


#: The audit trail's order: ``at``, then append order (`AppendOrder`; events written before
#: ``seq`` existed have none and come after the others of their instant), then record id and
#: action so that the order is total for ``search_after``.
AUDIT_NEWEST_FIRST: list[dict[str, Any]] = [
    {"at": "desc"},
    {"seq": {"order": "desc", "missing": "_last"}},
    {"record_id": "desc"},
    {"action": "desc"},
]
#: An export's order: the same, oldest first.
AUDIT_OLDEST_FIRST: list[dict[str, Any]] = [
    {"at": "asc"},
    {"seq": {"order": "asc", "missing": "_first"}},
    {"record_id": "asc"},
    {"action": "asc"},
]


def audit_events_body(
    tenant_id: str, agent_id: str, record_id: str | None, limit: int, after: list[Any] | None
) -> dict[str, Any]:
    """The agent's audit events (of one record, if given), newest first by ``at``, events of one
    instant newest appended first (`AUDIT_NEWEST_FIRST`), ``limit + 1`` of them (the extra one
    says a next page exists)."""
    filters = [term("doc_type", "audit"), term("tenant_id", tenant_id), term("agent_id", agent_id)]
    if record_id is not None:
        filters.append(term("record_id", record_id))
    return paged_body(limit + 1, {"bool": {"filter": filters}}, AUDIT_NEWEST_FIRST, after)


def utc_day(at: datetime) -> datetime:
    """The UTC midnight that starts ``at``'s UTC day (the day a search is counted on)."""
    return datetime.combine(at.astimezone(UTC).date(), day_time(), UTC)


def search_days_body(tenant_id: str, agent_id: str, since: date) -> dict[str, Any]:
    """The agent's day documents from ``since`` on, oldest first."""
    return {
        "size": SEARCH_DAYS_PAGE,
        "query": {
            "bool": {
                "filter": [
                    term("doc_type", "searches"),
                    term("tenant_id", tenant_id),
                    term("agent_id", agent_id),
                    {"range": {"at": {"gte": ts(datetime.combine(since, day_time(), UTC))}}},
                ]
            }
        },
        "sort": [{"at": "asc"}],
    }


def search_day(source: dict[str, Any]) -> SearchDay:
    detail = source.get("detail") or {}
    return SearchDay(
        day=datetime.fromisoformat(source["at"]).date(),
        searches=int(detail.get("searches", 0)),
        zero_hits=int(detail.get("zero_hits", 0)),
    )
