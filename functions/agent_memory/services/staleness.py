"""Stale summaries: what the forget service marks and the summarize service re-makes.

A summary made from a record that is later forgotten still says what that record said. The
forget service hides such a summary at once (`MemoryStore.mark_stale`: its ``deleted_at`` is
set, so search, get and the cascade's child reads skip it) and queues its re-make. Both a stale
summary and a forgotten one carry a ``deleted_at``; the audit trail tells them apart: of the
events that hide a record (``stale``, ``forget``, ``erase``), the newest *by event time* is
``stale``. A forgotten summary is never re-made; a stale one is.

Event time, not the order the events were appended in: a re-make that started before a later
forget appends its ``remade`` after that forget's ``stale`` (and its version is then dropped by
the writer, `REMAKES`), so "the last event appended" would take a summary hidden by the forget
for one forgotten on purpose, and nothing would ever re-make its day. ``remade`` and the other
events that do not hide a record say nothing about why it is hidden now and are not read.

A re-make names the stale mark it re-makes (`REMAKES`, the ``deleted_at`` it read): the writer
stores the version only while that mark is still the newest, so a forget that lands between the
re-make's read and its write leaves the summary stale for that forget's own re-make.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from agent_memory.domain.patterns import PatternJob, is_recognised_pattern
from agent_memory.domain.profiles import ProfileJob, is_made_profile
from agent_memory.domain.records import MemoryKind, MemoryRecord
from agent_memory.domain.summary_jobs import SummarizeJob
from agent_memory.ports import AuditAction, AuditEvent, AuditLog, AuditQuery, Job

#: Metadata key of a summary's child count (also written by the summarize service).
CHILDREN_COUNT = "children_count"
#: Metadata key of the model a summary was made with (the summarize service writes it).
MODEL_ID = "summarizer_model_id"
#: Metadata key of a summary version: the ``deleted_at`` (ISO 8601) of the stale summary it
#: re-makes, or None when it was made over a live summary or none.
REMAKES = "remakes_stale_since"

#: The events that hide a record, the only ones that say why it is hidden.
_HIDING = frozenset({AuditAction.STALE, AuditAction.FORGET, AuditAction.ERASE})
#: Events read per page of a record's trail.
_PAGE = 100


def is_stale(store: AuditLog, record: MemoryRecord) -> bool:
    """Whether ``record`` is a summary (or recognised pattern) hidden until it is re-made, not
    one that was forgotten: the newest hiding event by event time (the later appended of two
    at the same instant) is ``stale``."""
    if record.deleted_at is None:
        return False
    newest: AuditEvent | None = None
    trail = _trail(store, record.tenant_id, record.agent_id, record.id)
    for event in trail:  # newest appended first: a tie keeps the one appended later
        if event.action in _HIDING and (newest is None or event.at > newest.at):
            newest = event
    return newest is not None and newest.action == AuditAction.STALE


def hidden_since(store: AuditLog, record: MemoryRecord, since: datetime) -> bool:
    """Whether ``record`` was hidden (marked stale, forgotten or erased) at or after ``since``,
    even if it is live again now.

    A summary marked stale and re-made between a parent's read of it and the parent's put is
    live when the writer looks: only its trail says the parent quotes words since forgotten."""
    return trail_hides_since(store, record.tenant_id, record.agent_id, record.id, since)


def trail_hides_since(
    store: AuditLog, tenant_id: str, agent_id: str, record_id: str, since: datetime
) -> bool:
    """`hidden_since` by id, for a record that may be stored no more: a day's summary whose
    every memory was forgotten is marked stale, then deleted by its re-make, and only its trail
    says that a week made from it before holds words since forgotten."""
    trail = _trail(store, tenant_id, agent_id, record_id)
    return any(event.action in _HIDING and event.at >= since for event in trail)


def _trail(store: AuditLog, tenant_id: str, agent_id: str, record_id: str) -> Iterator[AuditEvent]:
    """Every event of the record's audit trail, newest appended first, page by page."""
    cursor: str | None = None
    while True:
        page = store.audit_events(
            AuditQuery(tenant_id, agent_id, record_id=record_id, limit=_PAGE, cursor=cursor)
        )
        yield from page.events
        cursor = page.next_cursor
        if cursor is None:
            return


def remakes(record: MemoryRecord) -> str | None:
    """The stale mark (``deleted_at``) a summary version re-makes, as `stamp` writes it."""
    value = record.metadata.get(REMAKES)
    return value if isinstance(value, str) else None


def stamp(existing: MemoryRecord | None) -> str | None:
    """What a version made over ``existing`` records in `REMAKES`."""
    if existing is None or existing.deleted_at is None:
        return None
    return existing.deleted_at.isoformat()


def version_outdated(stored: MemoryRecord | None, version: MemoryRecord) -> bool:
    """Whether a summary version must not be stored over ``stored``: it was hidden (marked stale
    again, or forgotten) after the version read it. A version that names no mark (`REMAKES`
    absent: a pattern, a profile, or a summary queued before the mark existed) is judged by
    time: hidden after the version was made."""
    if stored is None or stored.deleted_at is None:
        return False
    if REMAKES not in version.metadata:
        return stored.deleted_at > version.updated_at
    return remakes(version) != stored.deleted_at.isoformat()


def made_from(summary: MemoryRecord, child_id: str) -> bool:
    """Whether ``summary`` folded ``child_id``; True when it cannot tell (its list of sources is
    cut short on very busy periods), so a forget errs on the side of re-making."""
    count = summary.metadata.get(CHILDREN_COUNT)
    complete = isinstance(count, int) and count == len(summary.source_ids)
    return child_id in summary.source_ids or not complete


def remade_event(stale: MemoryRecord, version: MemoryRecord) -> AuditEvent | None:
    """The ``remade`` event of storing ``version`` over the stale summary ``stale`` (None when it
    is not one). The writer appends it when the version is stored, so the trail says "remade"
    exactly when a re-made summary is visible. Dated no earlier than the mark it re-makes, and
    the same for a redelivered write (the trail is idempotent per record, action and instant)."""
    if version.kind is not MemoryKind.SUMMARY or stale.deleted_at is None:
        return None
    return AuditEvent(
        tenant_id=stale.tenant_id,
        agent_id=stale.agent_id,
        record_id=stale.id,
        action=AuditAction.REMADE,
        actor=f"summarizer:{version.metadata.get(MODEL_ID)}",
        at=max(version.updated_at, stale.deleted_at),
        detail={
            "dropped": sorted(set(stale.source_ids) - set(version.source_ids)),
            "stale_since": stale.deleted_at.isoformat(),
        },
    )


def remake_job(record: MemoryRecord) -> Job | None:
    """The job that re-makes ``record`` once it is marked stale, as a forget queues it: its
    period's summary job, or its agent's pattern or profile job naming it (None: nothing
    re-makes such a record)."""
    tenant, agent = record.tenant_id, record.agent_id
    if record.kind is MemoryKind.SUMMARY and record.time_key is not None:
        return Job.of(
            SummarizeJob(
                tenant_id=tenant,
                agent_id=agent,
                grain=record.grain,
                time_key=record.time_key,
                reason="forget",
            )
        )
    derived: PatternJob | ProfileJob
    if is_recognised_pattern(record):
        derived = PatternJob(tenant_id=tenant, agent_id=agent, reason="forget", stale=[record.id])
    elif is_made_profile(record):
        derived = ProfileJob(tenant_id=tenant, agent_id=agent, reason="forget", stale=[record.id])
    else:
        return None
    return Job(key=derived.key, body=derived.model_dump_json())
