"""Rows of the ``records`` table and the `MemoryRecord` each stands for, both ways (pure: no I/O).

Why rows look the way they do:

* **Times are integer microseconds since the epoch (UTC).** Exact (no float rounding, so every
  datetime round-trips), and range tests on them are plain integer comparisons an index can use.
* **Spans are closed intervals.** ``span_start``/``span_end`` hold the record's `span`, with a
  summary's half-open ``[period_start, period_end)`` stored as ``[start, end - 1µs]``, so "overlaps
  the window ``[start, end]``" is one test for working records and summaries alike:
  ``span_start <= end AND span_end >= start``. A daily summary of the 21st does not overlap a
  window that starts at midnight on the 22nd.
* **Lists and objects are JSON text** (tags, links, metadata, ...), read back as they were written.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.model.records import MemoryRecord

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)

#: Every `MemoryRecord` field, in the order rows are read back.
# fmt: off
RECORD_COLUMNS = (
    "id", "tenant_id", "agent_id", "user_id", "grain", "time_key", "period_start", "period_end",
    "kind", "role", "conversation_id", "content", "topic", "topic_raw", "importance", "tags", "source",
    "links", "metadata", "source_ids", "content_hash", "access_count", "last_accessed_at", "created_at",
    "updated_at", "occurred_at", "expires_at", "deleted_at", "speaker", "context", "merged_from",
    "last_seen_at", "user_ids", "experience", "valid_from", "valid_to", "supersedes", "superseded_by",
)
_DATETIME_COLUMNS = frozenset({
    "period_start", "period_end", "last_accessed_at", "created_at", "updated_at", "occurred_at",
    "expires_at", "deleted_at", "last_seen_at", "valid_from", "valid_to",
})
# fmt: on
_JSON_COLUMNS = frozenset(
    {"tags", "source", "links", "metadata", "source_ids", "merged_from", "user_ids", "experience"}
    | {"supersedes"}
)
#: ``confidence`` is an experience's, copied out of its JSON so a filter on it is a column test.
_WRITE_COLUMNS = (*RECORD_COLUMNS, "span_start", "span_end", "confidence", "vector", "vgen")
RECORD_FIELDS = ", ".join(f"r.{c}" for c in RECORD_COLUMNS)
NEWEST_FIRST = "ORDER BY r.occurred_at DESC, r.id DESC"
UPSERT = (
    f"INSERT INTO records ({', '.join(_WRITE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _WRITE_COLUMNS[:-1])}, "
    # vgen: the generation this write moves the agent to (its insert or update trigger bumps it)
    "(SELECT coalesce(max(gen), 0) + 1 FROM generations WHERE tenant_id = ? AND agent_id = ?)) "
    "ON CONFLICT (tenant_id, agent_id, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _WRITE_COLUMNS if c not in {"id", "tenant_id", "agent_id"})
)


def to_us(value: datetime) -> int:
    """Microseconds since the epoch; a naive datetime is read as UTC (as the domain does)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _ONE_US


def opt_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def row_to_record(row: sqlite3.Row | tuple[Any, ...]) -> MemoryRecord:
    data: dict[str, Any] = {}
    for name, value in zip(RECORD_COLUMNS, row, strict=True):
        if value is None:
            data[name] = None
        elif name in _DATETIME_COLUMNS:
            data[name] = from_us(value)
        elif name in _JSON_COLUMNS:
            # Most of these columns hold an empty list or object: skip the parser for them (a
            # search reads some fifty records, six such columns each).
            data[name] = [] if value == "[]" else {} if value == "{}" else json.loads(value)
        else:
            data[name] = value
    return MemoryRecord.model_validate(data)


def json_text(value: Any) -> str:
    """Compact JSON for a TEXT column (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def span_us(record: MemoryRecord) -> tuple[int, int]:
    """The record's span as a closed interval of µs (a period's exclusive end minus 1µs)."""
    start, end = record.span
    start_us, end_us = to_us(start), to_us(end)
    if record.period_start is not None and record.period_end is not None and end_us > start_us:
        end_us -= 1
    return start_us, end_us


def record_row(record: MemoryRecord, vector: npt.NDArray[np.float32]) -> tuple[Any, ...]:
    """The parameters of `UPSERT` for ``record`` and its (checked) ``vector``."""
    span_start, span_end = span_us(record)
    return (
        record.id,
        record.tenant_id,
        record.agent_id,
        record.user_id,
        record.grain.value,
        record.time_key,
        opt_us(record.period_start),
        opt_us(record.period_end),
        record.kind.value,
        record.role,
        record.conversation_id,
        record.content,
        record.topic,
        record.topic_raw,
        float(record.importance),
        json_text(record.tags),
        None if record.source is None else json_text(record.source.model_dump(mode="json")),
        json_text([link.model_dump(mode="json") for link in record.links]),
        json_text(record.metadata),
        json_text(record.source_ids),
        record.content_hash,
        record.access_count,
        opt_us(record.last_accessed_at),
        to_us(record.created_at),
        to_us(record.updated_at),
        to_us(record.occurred_at),
        opt_us(record.expires_at),
        opt_us(record.deleted_at),
        record.speaker,
        record.context,
        json_text([m.model_dump(mode="json") for m in record.merged_from]),
        opt_us(record.last_seen_at),
        json_text(record.user_ids),
        None if record.experience is None else json_text(record.experience.model_dump(mode="json")),
        opt_us(record.valid_from),
        opt_us(record.valid_to),
        json_text(record.supersedes),
        record.superseded_by,
        span_start,
        span_end,
        None if record.experience is None else record.experience.confidence,
        vector.tobytes(),
        # the tenant and agent of UPSERT's vgen subquery
        record.tenant_id,
        record.agent_id,
    )
