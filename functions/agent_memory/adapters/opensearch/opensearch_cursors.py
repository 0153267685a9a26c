"""The store's opaque cursors: a position (``search_after`` sort values or a composite
aggregation's ``after_key``) bound to the listing it was issued for.

Apart from the I/O because a cursor is client input: decoding and checking one never needs the
cluster, and a cursor of another tenant, agent or filter is refused before any request is sent.
A page cursor is urlsafe base64 of JSON (padding stripped): the position and the binding
(tenant, agent, filter); anything else is a `ValidationFailedError` (400). Retention's cursor
(the retention job's own paging) is bound the same way, to the tenant, grain and cutoff it was
issued for, as the SQLite store's is.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from agent_memory.errors import ValidationFailedError

_MAX_CURSOR_CHARS = 2048


def invalid_cursor() -> ValidationFailedError:
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
    invalid = invalid_cursor()
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_CHARS:
        raise invalid
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid from exc
    if not isinstance(payload, dict) or any(payload.get(k) != v for k, v in expected.items()):
        raise invalid
    return payload


def list_after(cursor: str, binding: dict[str, Any]) -> list[Any]:
    """The ``search_after`` of a `list` cursor: (``occurred_at`` epoch ms, record id)."""
    after = decode_cursor(cursor, binding).get("s")
    if (
        not isinstance(after, list)
        or len(after) != 2
        or not isinstance(after[0], int)
        or isinstance(after[0], bool)
        or not isinstance(after[1], str)
    ):
        raise invalid_cursor()
    return after


def audit_after(cursor: str, binding: dict[str, Any]) -> list[Any]:
    """The ``search_after`` of an audit cursor: (``at``, ``seq``, record id, action)."""
    after = decode_cursor(cursor, binding).get("s")
    if not isinstance(after, list) or len(after) != 4:
        raise invalid_cursor()
    return after


def agent_after(cursor: str, binding: dict[str, Any]) -> str:
    """The last agent id of a `list_agents` page."""
    after = decode_cursor(cursor, binding).get("a")
    if not isinstance(after, str):
        raise invalid_cursor()
    return after


def agents_after_key(cursor: str, binding: dict[str, Any]) -> dict[str, str]:
    """The ``after_key`` (tenant id, agent id) of an `agents_with_records` page."""
    after = decode_cursor(cursor, binding).get("k")
    if not (
        isinstance(after, dict)
        and set(after) == {"tenant_id", "agent_id"}
        and all(isinstance(v, str) for v in after.values())
    ):
        raise invalid_cursor()
    return after


def next_page_cursor(binding: dict[str, Any], hits: list[dict[str, Any]], limit: int) -> str | None:
    """The cursor after a page read with ``size = limit + 1``: None when the extra hit is absent."""
    return encode_cursor({**binding, "s": hits[limit - 1]["sort"]}) if len(hits) > limit else None


def retention_binding(tenant_id: str, grain: str, cutoff: str) -> dict[str, Any]:
    """What a retention candidates cursor is bound to: a page of another listing is refused."""
    return {"t": tenant_id, "g": grain, "c": cutoff, "w": "retention"}


def retention_after(cursor: str, binding: dict[str, Any]) -> list[Any]:
    """The ``search_after`` of a retention candidates cursor: (span end, record id, agent id)."""
    after = decode_cursor(cursor, binding).get("s")
    if not isinstance(after, list) or len(after) != 3:
        raise invalid_cursor()
    return after
