"""Forgetting that reaches what was derived from it: one record by id, or everything of one end user.

Before a record is soft-deleted (search and get never return it again), everything derived from
it is marked stale: a `StaleWalk` (`derived.lifecycle`) goes through the registry of derived
kinds (`derived.rules.kinds`: summaries at every grain, recognised patterns, person profiles) and, for
each, finds what the record fed and hides it until the kind's job re-makes it from what is still
remembered (or deletes or drops it when nothing is left). For summaries that is the cascade from
the record up (the daily summary of its day, that day's week, month, quarter and year) and the
summaries of what superseded it, which quote what it replaced; for patterns and profiles, those
naming it as a source. Marks first, so a crash in between never leaves a summary with the
forgotten words unmarked, and a retry finds the record still live. Once it is forgotten the
marks are walked again, a moment later, for a re-make that read the record between the two
(`StaleWalk.mark_again`). The kinds' jobs are queued last, one per summary chain's top and one
per agent for patterns and for profiles.

Every step is in the audit trail: the forget or erase of the record (with the summaries it made
stale), each stale mark, and later each re-make or deletion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_memory.derived.lifecycle import StaleWalk
from agent_memory.errors import NotFoundError
from agent_memory.feed.rules.events import memory_forgotten, user_erased
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditAction, Clock, ForgettableMemory, JobQueue, StoreQuery
from agent_memory.ports.change_feed import ChangeFeed, publish
from agent_memory.supersession.marking import MarkingService

#: Records read per round of an erasure (each round forgets what it read).
ERASE_PAGE = 500
#: How much later than a forget's first marks its second walk marks (`StaleWalk.mark_again`), at least.
_INSTANT = timedelta(microseconds=1)


@dataclass
class ForgetResult:
    """What a forget or an erasure did."""

    forgotten: list[str] = field(default_factory=list)
    stale_summaries: list[str] = field(default_factory=list)


class ForgetService:
    def __init__(
        self,
        store: ForgettableMemory,
        jobs: JobQueue,
        clock: Clock,
        timezone: str = "UTC",
        *,
        feed: ChangeFeed | None = None,
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._clock = clock
        self._tz = timezone
        #: A forget is a ``memory.forgotten`` event, an erasure one ``user.erased``.
        self._feed = feed
        #: What a forgotten memory superseded holds again (and what superseded it, from further back).
        self._supersession = MarkingService(store, feed=feed)

    def forget(self, tenant_id: str, agent_id: str, record_id: str, actor: str) -> ForgetResult:
        """Forget one record (by id or alias) and mark what was derived from it stale."""
        walk = StaleWalk(self._store, self._tz, self._clock.now(), actor)
        record = self._store.get(tenant_id, agent_id, record_id)
        if record is None or not record.is_live(walk.now):
            raise NotFoundError("memory not found")
        forgotten: list[str] = []
        if not self._forget_one(record, AuditAction.FORGET, {}, walk, forgotten):
            self._finish(tenant_id, agent_id, walk)  # what it marked is re-made all the same
            raise NotFoundError("memory not found")
        self._finish(tenant_id, agent_id, walk)
        publish(self._feed, [memory_forgotten(record, walk.now, actor, walk.stale)])
        logger.info(
            "memory forgotten",
            extra={
                "agent_id": agent_id,
                "record_id": record.id,
                "actor": actor,
                "stale_summaries": len(walk.stale),
            },
        )
        return ForgetResult(forgotten, walk.stale)

    def erase_user(self, tenant_id: str, agent_id: str, user_id: str, actor: str) -> ForgetResult:
        """Forget every live record of one end user of the agent (the right to erasure).

        Reads the user's live records in rounds and forgets each round before reading the next,
        so it ends when none is left; what was derived from them is re-made without them.
        """
        walk = StaleWalk(self._store, self._tz, self._clock.now(), actor)
        detail: dict[str, object] = {"user_id": user_id}
        forgotten: list[str] = []
        while True:
            query = StoreQuery(
                tenant_id=tenant_id, agent_id=agent_id, now=walk.now, user_id=user_id, limit=ERASE_PAGE
            )
            found = [c.record for c in self._store.search(query)]
            progress = sum(self._forget_one(r, AuditAction.ERASE, detail, walk, forgotten) for r in found)
            if not found or not progress:
                break
        walk.mark_user(tenant_id, agent_id, user_id)
        self._finish(tenant_id, agent_id, walk)
        if forgotten or walk.stale:  # an erasure that found nothing changed nothing
            event = user_erased(tenant_id, agent_id, user_id, walk.now, actor, forgotten, walk.stale)
            publish(self._feed, [event])
        logger.info(
            "end user erased",
            extra={
                "agent_id": agent_id,
                "actor": actor,
                "forgotten": len(forgotten),
                "stale_summaries": len(walk.stale),
            },
        )
        return ForgetResult(forgotten, walk.stale)

    def _forget_one(
        self,
        record: MemoryRecord,
        action: str,
        detail: dict[str, object],
        walk: StaleWalk,
        forgotten: list[str],
    ) -> bool:
        """Mark stale everything made from ``record`` (every derived kind, and the summaries of
        its successor), then forget it: a crash between the steps leaves the record live with
        what was made from it hidden, and a retry marks again (a no-op for what is already
        stale) and forgets it. The other order could leave a forgotten memory's words in a
        visible summary that no retry would find (the record is no longer live to forget)."""
        tenant, agent = record.tenant_id, record.agent_id
        stale = walk.mark(record)
        event = walk.event(tenant, agent, record.id, action, {**detail, "stale_summaries": stale})
        if not self._store.soft_delete(tenant, agent, record.id, event):
            return False
        walk.mark_again(record, _later(self._clock.now(), walk.now))
        if action != AuditAction.ERASE:  # an erasure takes every memory of the user's timelines
            self._supersession.on_forget(record, walk.now, walk.actor)
        forgotten.append(record.id)
        metrics.add_metric(name="MemoriesForgotten", unit=MetricUnit.Count, value=1)
        return True

    def _finish(self, tenant_id: str, agent_id: str, walk: StaleWalk) -> None:
        """Queue each derived kind's re-make of what the walk marked."""
        jobs = walk.jobs(tenant_id, agent_id)
        if jobs:
            self._jobs.send(jobs)
            metrics.add_metric(name="SummariesMarkedStale", unit=MetricUnit.Count, value=len(walk.stale))


def _later(now: datetime, marked: datetime) -> datetime:
    """The instant of a forget's second marks: now, and later than its first marks."""
    return max(now, marked + _INSTANT)
