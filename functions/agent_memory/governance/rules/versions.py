"""A memory's history: every change to it as a numbered version, read back from what is kept.

No copy of a memory is stored per change. A version is derived from two things the service keeps
anyway: the record itself (its ``merged_from`` holds every write merged into it, verbatim) and its
audit trail (who or what changed it, when, and how: the merge's absorbed id, a supersession's new
fields, feedback's confidence, a restore's version). So the history can never hold what the
record no longer holds: a forgotten or erased memory's versions keep their dates, actors and
changes and lose their text (``content`` None), and nothing of it survives anywhere else.

Version 1 is the first write; each audit event on the record makes the next one.

Pure (no I/O): `governance.history` reads the record and its events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.records import MemoryRecord, RecordValidity

#: The change that made version 1.
WRITTEN = "written"
#: Changes after which the memory is gone (no later version has text, none can be restored).
ENDINGS = frozenset({AuditAction.FORGET, AuditAction.ERASE, AuditAction.RETENTION})


@dataclass(frozen=True, slots=True)
class Change:
    """One audit event on the record, as the history reads it."""

    action: str
    actor: str
    at: datetime
    detail: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Version:
    """What the memory said and whether it held, after one change."""

    number: int
    at: datetime
    change: str
    actor: str
    detail: Mapping[str, Any]
    #: None: the memory was forgotten or erased since (its text survives in no version).
    content: str | None
    validity: RecordValidity
    confidence: float | None = None


def validity_detail(validity: RecordValidity) -> dict[str, Any]:
    """A supersession change's audit detail: the fields it set, so the history can replay them."""
    return {
        "superseded_by": validity.superseded_by,
        "valid_to": None if validity.valid_to is None else validity.valid_to.isoformat(),
        "valid_from": None if validity.valid_from is None else validity.valid_from.isoformat(),
        "supersedes": list(validity.supersedes),
    }


def _validity_of(detail: Mapping[str, Any], before: RecordValidity) -> RecordValidity:
    if "superseded_by" not in detail:  # an event written before details carried the fields
        return before
    return RecordValidity.model_validate(
        {k: detail.get(k) for k in ("superseded_by", "valid_to", "valid_from") if detail.get(k)}
        | {"supersedes": tuple(detail.get("supersedes") or ())}
    )


def versions(record: MemoryRecord, changes: Iterable[Change]) -> list[Version]:
    """The record's versions, oldest first (``changes`` in any order: sorted by time here)."""
    said = {m.id: m.content for m in record.merged_from}
    first = record.merged_from[0] if record.merged_from else None
    start = Version(
        number=1,
        at=first.created_at if first else record.created_at,
        change=WRITTEN,
        actor="writer",
        detail={},
        content=first.content if first else record.content,
        validity=RecordValidity(),
        confidence=None if record.experience is None else record.experience.prior,
    )
    out = [start]
    for change in sorted(changes, key=lambda c: c.at):
        now = out[-1]
        d = change.detail
        content, validity, confidence = now.content, now.validity, now.confidence
        if change.action == AuditAction.MERGED:
            content = said.get(str(d.get("absorbed")), content)
        elif change.action in (AuditAction.SUPERSEDED, AuditAction.SUPERSESSION_UNDONE):
            validity = _validity_of(d, validity)
        elif change.action == AuditAction.FEEDBACK and isinstance(d.get("confidence"), int | float):
            confidence = float(d["confidence"])
        elif change.action == AuditAction.RESTORED and isinstance(d.get("version"), int):
            back = next((v for v in out if v.number == d["version"]), None)
            if back is not None:
                content, validity = back.content, back.validity
        out.append(replace(now, number=now.number + 1, at=change.at, change=change.action,
                           actor=change.actor, detail=dict(d), content=content, validity=validity,
                           confidence=confidence))  # fmt: skip
    if record.deleted_at is not None:  # forgotten, erased or removed: its words are in no version
        out = [replace(v, content=None) for v in out]
    return out


def restorable(history: list[Version], number: int) -> Version | None:
    """The version ``number`` if a restore may bring it back: it exists, is not the current
    one, has its text, and the memory has not ended (a forgotten memory stays forgotten)."""
    if not history or history[-1].content is None or history[-1].change in ENDINGS:
        return None
    target = next((v for v in history if v.number == number), None)
    if target is None or target.number == history[-1].number or target.content is None:
        return None
    return target
