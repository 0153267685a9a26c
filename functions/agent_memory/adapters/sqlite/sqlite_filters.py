"""The SQL a read is made of, built without touching the database (pure: no I/O).

Which records a read may see is one ``WHERE`` over ``records r`` and its parameters: the live
records of one tenant and agent (`live_filter`), narrowed by a query's filters (`query_filter`) or
by a write's merge neighbourhood (`neighbourhood_filter`). Keyset cursors are built and checked
here too, bound to what they were issued for.

User text never reaches the FTS5 query language: it is cut into words, each word quoted, and the
words OR-ed (`query_terms`, `fts_match`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_memory.adapters.sqlite.sqlite_rows import to_us
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.model.words import STOPWORDS
from agent_memory.ports import Neighbourhood, StoreQuery

#: Distinct words of a lexical query that are searched (the rest are ignored): a bound on the
#: work one request can ask for, far above what a natural-language question needs.
MAX_QUERY_TOKENS = 64
#: Eligibility scans read the covering index only (the planner, left alone, may pick an index
#: that makes it visit every wide table row, several times slower).
ELIGIBLE = "records r INDEXED BY records_live"
CHUNK = 500  # ids bound per IN (...) list, well under SQLite's variable limit
_MAX_CURSOR_CHARS = 2048

_WORD = re.compile(r"\w+")


def query_terms(text: str | None) -> list[str]:
    """The distinct words of ``text`` to search for, lower-cased, at most `MAX_QUERY_TOKENS`.

    Words are Unicode ``\\w+`` runs, so every FTS5 operator character (``" * : ( ) ^ + -``,
    column filters, ``NEAR(``) is gone with the punctuation. The bare words FTS5 reads as operators
    (``AND OR NOT NEAR``) stay ordinary words: `fts_match` quotes every term, and a quoted string
    is never an operator. English function words (`STOPWORDS`: "what", "did", "the") are left out,
    unless nothing else is left: they match half the store and say nothing about the memory.
    """
    if not text:
        return []
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        seen.setdefault(word.lower(), None)
        if len(seen) >= MAX_QUERY_TOKENS:
            break
    words = list(seen)
    return [w for w in words if w not in STOPWORDS] or words


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``: each one a quoted string, OR-ed together.

    Inside double quotes FTS5 reads nothing but a phrase; a ``"`` would end it and is doubled
    (a word from `query_terms` never has one: defence in depth).
    """
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def encode_cursor(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, bound: dict[str, Any]) -> dict[str, Any]:
    """The payload of a cursor issued for ``bound`` (the scope and filter it belongs to).

    A cursor is bound to the tenant, agent and filter it was issued for, so one agent's cursor
    can never walk another's records and a changed filter starts over instead of skipping.
    Anything else, garbled or forged, is an invalid cursor.
    """
    invalid = ValidationFailedError("invalid cursor", [{"field": "cursor", "message": "invalid cursor"}])
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_CHARS:
        raise invalid
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError) as exc:
        raise invalid from exc
    if not isinstance(payload, dict) or any(payload.get(k) != v for k, v in bound.items()):
        raise invalid
    return payload


def keyset(payload: dict[str, Any], *fields: tuple[str, type]) -> tuple[Any, ...]:
    """The position fields of a decoded cursor, each of its exact type (bool is not an int)."""
    values = tuple(payload.get(name) for name, _ in fields)
    for value, (_, kind) in zip(values, fields, strict=True):
        if type(value) is not kind or (isinstance(value, int) and not -(2**63) <= value < 2**63):
            raise ValidationFailedError("invalid cursor", [{"field": "cursor", "message": "invalid cursor"}])
    return values


def live_filter(
    tenant_id: str, agent_id: str, now: datetime, grains: Sequence[Grain] | None
) -> tuple[str, list[Any]]:
    where = (
        "r.tenant_id = ? AND r.agent_id = ? AND r.deleted_at IS NULL "
        "AND (r.expires_at IS NULL OR r.expires_at > ?)"
    )
    params: list[Any] = [tenant_id, agent_id, to_us(now)]
    if grains:
        where += f" AND r.grain IN ({', '.join('?' * len(grains))})"
        params += [Grain(g).value for g in grains]
    return where, params


def _time_bounds(where: str, params: list[Any], *bounds: tuple[str, datetime | None]) -> str:
    """``where`` and ``AND r.<column> <op> ?`` for each bound that is set, its time appended to
    ``params`` as the store keeps times (`to_us`): an open end of a window adds nothing."""
    for condition, at in bounds:
        if at is not None:
            where += f" AND r.{condition} ?"
            params.append(to_us(at))
    return where


def neighbourhood_filter(where: str, params: list[Any], within: Neighbourhood) -> tuple[str, list[Any]]:
    params = list(params)
    for wanted, column, value in (
        (within.match_user, "user_id", within.user_id),
        (within.match_conversation, "conversation_id", within.conversation_id),
    ):
        if not wanted:
            continue
        if value is None:
            where += f" AND r.{column} IS NULL"
        else:
            where += f" AND r.{column} = ?"
            params.append(value)
    where = _time_bounds(where, params, ("occurred_at >=", within.since), ("occurred_at <", within.until))
    return where, params


def query_filter(query: StoreQuery) -> tuple[str, list[Any]]:
    """Which records may match a query, as SQL over ``records r`` (empty tuples: no filter)."""
    # A window without grains names every grain: `records_live` leads with the grain, so the
    # window becomes one range per grain instead of a walk of the agent's whole index (at a
    # million memories of one agent, a 30-day window cost 84 ms that way).
    windowed = query.start is not None or query.end is not None
    grains = query.grains or (tuple(Grain) if windowed else None)
    where, params = live_filter(query.tenant_id, query.agent_id, query.now, grains)
    where = _time_bounds(where, params, ("span_start <=", query.end), ("span_end >=", query.start))
    if query.kinds:
        where += f" AND r.kind IN ({', '.join('?' * len(query.kinds))})"
        params += [MemoryKind(k).value for k in query.kinds]
    if query.min_confidence is not None:  # only experiences have one: the rest never pass
        where += " AND r.confidence >= ?"
        params.append(float(query.min_confidence))
    if query.tags:
        marks = ", ".join("?" * len(query.tags))
        where += f" AND EXISTS (SELECT 1 FROM json_each(r.tags) WHERE value IN ({marks}))"
        params += list(query.tags)
    if query.user_id is not None:
        where += " AND r.user_id = ?"
        params.append(query.user_id)
    return where, params
