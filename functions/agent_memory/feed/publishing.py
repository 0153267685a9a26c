"""Publishing change events from the services that make the changes, without ever failing them.

Every place that records a change in the audit trail (a merge, a supersession and its undoing,
feedback counted, a restore, a forget, an erasure) or stores a memory or a summary hands its
event to `publish`. A feed that is missing (tests, a deployment without one) or fails is never the
change's problem: the change is made and stored, the failure is logged and counted
(``ChangeEventsDropped``), and nothing is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.feed.rules.events import ChangeEvent, memory_updated
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditAction, AuditEvent
from agent_memory.ports.change_feed import ChangeFeed

#: Audit detail that is words, not ids: sent with the event's content only.
_WORDS = ("note",)


def publish(feed: ChangeFeed | None, events: Sequence[ChangeEvent]) -> None:
    """Hand ``events`` to ``feed``; never raises."""
    if feed is None or not events:
        return
    try:
        feed.publish(events)
    except Exception:  # the change is made: losing its event must not undo or fail it
        logger.exception("change events not published", extra={"events": len(events)})
        metrics.add_metric(name="ChangeEventsDropped", unit=MetricUnit.Count, value=len(events))


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
