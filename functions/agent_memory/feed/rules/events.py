"""The change feed's events: what changed in a tenant's memory, as one JSON envelope each, and
the signature a webhook delivery carries.

An event is made where the change is made (the writer, a forget, feedback, a restore, the writer
storing a summary), at the moment the audit trail records it. Its ``id`` comes from what changed
(the record, the action and what makes that change one: the write it absorbed, the memory that
superseded it, the feedback id, the summary's version), so a change made again by a redelivered
message is the same event again: the feed is at least once, and a receiver drops an id it has
seen. ``data`` holds ids, kinds and instants only; ``content`` holds the words (the memory's
text, topic, tags, metadata, a feedback note) and is sent to a webhook only when its tenant asks
for it (`ChangeEvent.delivered`).

Signing is Stripe's scheme: the ``Agent-Memory-Signature`` header is ``t=<unix seconds>,v1=<hex
HMAC-SHA256 of "<t>.<body>" with the webhook's secret>``; `verify_signature` checks the MAC in
constant time and refuses a timestamp outside the tolerance (a replayed delivery).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_memory.model.audit_actions import AuditAction, AuditEvent
from agent_memory.model.records import MemoryRecord

#: Where a webhook delivery carries its signature, the event's id and its type.
SIGNATURE_HEADER = "Agent-Memory-Signature"
EVENT_ID_HEADER = "Agent-Memory-Event-Id"
EVENT_TYPE_HEADER = "Agent-Memory-Event-Type"
#: How old (or how far ahead) a signature's timestamp may be, in seconds, by default.
SIGNATURE_TOLERANCE_S = 300
#: The ``source`` of every event on the EventBridge bus.
EVENT_SOURCE = "agent-memory"
#: Ids an event lists at most (a day's summary of a busy agent folds thousands of memories; an
#: EventBridge entry holds 256 KiB): the list is cut there, and its count says how many there are.
MAX_LISTED_IDS = 1_000
#: Audit detail that is words, not ids: sent with the event's content only (`updated`).
_WORDS = ("note",)


class ChangeType(StrEnum):
    """What happened: an event's ``type`` (and its EventBridge ``detail-type``)."""

    MEMORY_CREATED = "memory.created"  # the writer stored a new memory
    MEMORY_UPDATED = "memory.updated"  # merged, superseded (or that undone), feedback, restored
    MEMORY_FORGOTTEN = "memory.forgotten"  # forgotten by id
    USER_ERASED = "user.erased"  # every memory of one end user of an agent forgotten
    SUMMARY_MADE = "summary.made"  # a summary made or re-made by the cascade


class ChangeEvent(BaseModel):
    """One change, as a webhook receives it (with or without ``content``) and the bus carries it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    type: ChangeType
    tenant_id: str
    agent_id: str
    time: datetime
    data: dict[str, Any]
    content: dict[str, Any] | None = None

    def delivered(self, include_content: bool) -> ChangeEvent:
        """The event as a tenant that chose ids only (``include_content`` false) receives it."""
        return self if include_content else self.model_copy(update={"content": None})

    def body(self) -> bytes:
        """The JSON sent (``content`` left out when there is none), compact, UTF-8."""
        return self.model_dump_json(exclude={"content"} if self.content is None else None).encode()


def event_id(tenant_id: str, agent_id: str, kind: ChangeType, *parts: str) -> str:
    """A deterministic id: the same change made twice (a redelivered message) is the same event."""
    material = "\x00".join([tenant_id, agent_id, kind.value, *parts])
    return "evt_" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def record_words(record: MemoryRecord) -> dict[str, Any]:
    """What a memory says, and what it is about: only sent when the tenant asks for content."""
    words: dict[str, Any] = {"content": record.content}
    if record.topic_raw or record.topic:
        words["topic"] = record.topic_raw or record.topic
    if record.speaker:
        words["speaker"] = record.speaker
    if record.tags:
        words["tags"] = list(record.tags)
    if record.metadata:
        words["metadata"] = record.metadata
    return words


def memory_created(record: MemoryRecord) -> ChangeEvent:
    """A new memory stored by the writer (its acceptance time is the event's, so a redelivery
    re-makes this event exactly)."""
    data: dict[str, Any] = {
        "memory_id": record.id,
        "grain": record.grain.value,
        "kind": record.kind.value,
        "user_id": record.user_id,
        "conversation_id": record.conversation_id,
        "occurred_at": record.occurred_at.isoformat(),
        "importance": record.importance,
    }
    if record.supersedes:
        data["supersedes"] = list(record.supersedes)
    key = (record.id, _iso(record.created_at))
    return _event(ChangeType.MEMORY_CREATED, record, record.created_at, key, data, record_words(record))


def memory_updated(
    tenant_id: str,
    agent_id: str,
    memory_id: str,
    change: str,
    at: datetime,
    *,
    key: str,
    detail: dict[str, Any] | None = None,
    words: dict[str, Any] | None = None,
) -> ChangeEvent:
    """A memory changed: ``change`` names how (an `AuditAction`: merged, superseded,
    supersession_undone, feedback, restored); ``key`` is what makes this change one (the write
    absorbed, the memory that superseded it, the feedback id, the instant); ``detail`` its ids
    and figures; ``words`` what it says now, when the change touched its words."""
    data = {"memory_id": memory_id, "change": change, **(detail or {})}
    return _event(ChangeType.MEMORY_UPDATED, (tenant_id, agent_id), at, (memory_id, change, key), data, words)


def updated(event: AuditEvent, words: dict[str, Any] | None = None) -> ChangeEvent:
    """The ``memory.updated`` event of an audited change to a memory.

    Its id comes from what makes the change one: the write a merge absorbed, the memory whose
    write superseded it (the same on a redelivery), the feedback's id; a change made by a request
    (a forget undoing a supersession, a restore) by its instant."""
    detail = event.detail
    if event.action == AuditAction.MERGED:
        key = str(detail.get("absorbed"))
    elif event.action == AuditAction.FEEDBACK:
        key = str(detail.get("feedback_id"))
    elif event.action == AuditAction.SUPERSEDED and detail.get("by"):
        key = str(detail["by"])
    else:
        key = event.at.isoformat()
    said = {k: detail[k] for k in _WORDS if detail.get(k)}
    return memory_updated(
        event.tenant_id,
        event.agent_id,
        event.record_id,
        event.action,
        event.at,
        key=key,
        detail={k: v for k, v in detail.items() if k not in _WORDS} | {"actor": event.actor},
        words=({**said, **(words or {})} or None),
    )


def memory_forgotten(
    record: MemoryRecord, at: datetime, actor: str, stale_summaries: list[str]
) -> ChangeEvent:
    """A memory forgotten by id (no words: they are gone)."""
    data = {
        "memory_id": record.id,
        "grain": record.grain.value,
        "user_id": record.user_id,
        "actor": actor,
        "stale_summaries": list(stale_summaries[:MAX_LISTED_IDS]),
    }
    return _event(ChangeType.MEMORY_FORGOTTEN, record, at, (record.id, _iso(at)), data)


def user_erased(
    tenant_id: str,
    agent_id: str,
    user_id: str,
    at: datetime,
    actor: str,
    forgotten: list[str],
    stale_summaries: list[str],
) -> ChangeEvent:
    """Every memory of one end user of an agent forgotten (the right to erasure): one event for
    the erasure, naming each memory it took."""
    data = {
        "user_id": user_id,
        "actor": actor,
        "memory_ids": list(forgotten[:MAX_LISTED_IDS]),
        "memory_count": len(forgotten),
        "stale_summaries": list(stale_summaries[:MAX_LISTED_IDS]),
    }
    return _event(ChangeType.USER_ERASED, (tenant_id, agent_id), at, (user_id, _iso(at)), data)


def summary_made(record: MemoryRecord, version: str) -> ChangeEvent:
    """A summary stored by the writer; ``version`` names what it was made from (its input hash),
    so a redelivery is the same event and a re-make another."""
    data = {
        "summary_id": record.id,
        "grain": record.grain.value,
        "time_key": record.time_key,
        "period_start": _iso(record.period_start),
        "period_end": _iso(record.period_end),
        "source_ids": list(record.source_ids[:MAX_LISTED_IDS]),
        "source_count": len(record.source_ids),
        "user_ids": list(record.user_ids),
    }
    key = (record.id, version, _iso(record.updated_at))
    return _event(ChangeType.SUMMARY_MADE, record, record.updated_at, key, data, {"content": record.content})


def _event(
    kind: ChangeType,
    of: MemoryRecord | tuple[str, str],
    at: datetime,
    key: tuple[str, ...],
    data: dict[str, Any],
    content: dict[str, Any] | None = None,
) -> ChangeEvent:
    """An event of ``kind`` about ``of`` (a record, or a tenant and agent); its id is made of the
    kind and ``key`` (what makes the change one), so each constructor names the kind once."""
    tenant_id, agent_id = (of.tenant_id, of.agent_id) if isinstance(of, MemoryRecord) else of
    return ChangeEvent(
        id=event_id(tenant_id, agent_id, kind, *key),
        type=kind,
        tenant_id=tenant_id,
        agent_id=agent_id,
        time=at,
        data=data,
        content=content,
    )


def _iso(value: datetime | None) -> str:
    return "" if value is None else value.isoformat()


# --- signing ----------------------------------------------------------------------------------


class SignatureError(ValueError):
    """A delivery whose signature is missing, malformed, wrong or too old."""


def signature(secret: str, body: bytes, at: int) -> str:
    """The ``Agent-Memory-Signature`` header of ``body`` signed at unix time ``at``."""
    mac = hmac.new(secret.encode("utf-8"), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def verify_signature(
    secret: str,
    body: bytes,
    header: str | None,
    *,
    now: float | None = None,
    tolerance_s: float = SIGNATURE_TOLERANCE_S,
) -> int:
    """Check a delivery as its receiver should: the MAC of ``"<t>.<body>"`` (any ``v1`` of the
    header may match, in constant time) and ``t`` within ``tolerance_s`` of ``now``. Returns
    ``t``; raises `SignatureError` otherwise. ``body`` is the raw bytes received, before parsing."""
    if not header:
        raise SignatureError("no signature")
    stamp: int | None = None
    macs: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            try:
                stamp = int(value)
            except ValueError:
                raise SignatureError("malformed timestamp") from None
        elif name == "v1":
            macs.append(value)
    if stamp is None or not macs:
        raise SignatureError("malformed signature")
    if abs((time.time() if now is None else now) - stamp) > tolerance_s:
        raise SignatureError("timestamp outside the tolerance")
    expected = signature(secret, body, stamp).rsplit("v1=", 1)[1]
    if not any(hmac.compare_digest(expected, mac) for mac in macs):
        raise SignatureError("signature does not match")
    return stamp


def parse_event(body: bytes | str) -> ChangeEvent:
    """An event from a delivery's body, or from an EventBridge event whose ``detail`` it is."""
    raw: Any = json.loads(body)
    if isinstance(raw, dict) and "detail" in raw and "detail-type" in raw:
        raw = raw["detail"]
    return ChangeEvent.model_validate(raw)
