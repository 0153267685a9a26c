"""Stale summaries: what the forget service marks and the summarize service re-makes.

A summary made from a record that is later forgotten still says what that record said. The
forget service hides such a summary at once (`MemoryStore.mark_stale`: its ``deleted_at`` is
set, so search, get and the cascade's child reads skip it) and queues its re-make. Both a stale
summary and a forgotten one carry a ``deleted_at``; the audit trail tells them apart: the newest
event of a stale summary is ``stale``. A forgotten summary is never re-made; a stale one is.
"""

from __future__ import annotations

from agent_memory.domain.records import MemoryRecord
from agent_memory.ports import AuditAction, AuditLog, AuditQuery

#: Metadata key of a summary's child count (also written by the summarize service).
CHILDREN_COUNT = "children_count"


def is_stale(store: AuditLog, record: MemoryRecord) -> bool:
    """Whether ``record`` is a summary (or recognised pattern) hidden until it is re-made, not
    one that was forgotten."""
    if record.deleted_at is None:
        return False
    page = store.audit_events(AuditQuery(record.tenant_id, record.agent_id, record_id=record.id, limit=1))
    return bool(page.events) and page.events[0].action == AuditAction.STALE


def made_from(summary: MemoryRecord, child_id: str) -> bool:
    """Whether ``summary`` folded ``child_id``; True when it cannot tell (its list of sources is
    cut short on very busy periods), so a forget errs on the side of re-making."""
    count = summary.metadata.get(CHILDREN_COUNT)
    complete = isinstance(count, int) and count == len(summary.source_ids)
    return child_id in summary.source_ids or not complete
