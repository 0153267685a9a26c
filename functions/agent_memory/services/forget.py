"""Forgetting that reaches the summaries: one record by id, or everything of one end user.

A forget walks up the cascade from the record (the daily summary of its day, that day's week,
month, quarter and year), then soft-deletes the record (search and get never return it again):
marks first, so a crash in between never leaves a summary with the forgotten words unmarked, and
a retry finds the record still live. Once it is forgotten the marks are walked again, a moment
later, for a re-make that read the record between the two (`_mark_again`). Each summary on the
way that was made from the one below it is marked stale (`staleness`): hidden at once and re-made
by a ``forget`` job from what is still remembered, or deleted when nothing is left. One job per
chain is queued, for its top-most stale summary: making it makes every stale summary below it
first (the cascade heals missing children), so the order is right.

The walk stops at the first summary that does not exist (nothing above it was made through it)
or that was forgotten itself (it is never re-made, and its parent was re-made without it when it
was forgotten). A recognised pattern made from a forgotten experience is marked stale the same
way and its agent's pattern job queued (`services.pattern_recognition`), which re-makes it from
the members left or drops it; so is a person's profile made from a forgotten statement
(`services.person_profiles`). Every step is in the audit trail: the forget or erase of the record (with the
summaries it made stale), each stale mark, and later each re-make or deletion of a summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_memory.domain.cascade import PARENT_GRAIN, local_date, parent_key
from agent_memory.domain.change_events import memory_forgotten, user_erased
from agent_memory.domain.grains import Grain
from agent_memory.domain.ids import summary_id
from agent_memory.domain.patterns import PatternJob
from agent_memory.domain.profiles import STATEMENT_KINDS, ProfileJob
from agent_memory.domain.records import MEMBER_KINDS, MemoryRecord
from agent_memory.domain.summary_jobs import SummarizeJob
from agent_memory.errors import NotFoundError
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditAction, AuditEvent, Clock, Job, JobQueue, StoreQuery, WritableMemory
from agent_memory.ports.change_feed import ChangeFeed
from agent_memory.services.change_publishing import publish
from agent_memory.services.pattern_recognition import recognised_patterns
from agent_memory.services.person_profiles import made_profiles
from agent_memory.services.staleness import is_stale, made_from
from agent_memory.services.superseding import SupersessionService

#: Records read per round of an erasure (each round forgets what it read).
ERASE_PAGE = 500
#: How much later than a forget's first marks its second walk marks (`_mark_again`), at least.
_INSTANT = timedelta(microseconds=1)


@dataclass
class ForgetResult:
    """What a forget or an erasure did."""

    forgotten: list[str] = field(default_factory=list)
    stale_summaries: list[str] = field(default_factory=list)


@dataclass
class _Walk:
    """One forget operation's bookkeeping: summaries already marked, and the chains' tops."""

    now: datetime
    actor: str
    marked: set[str] = field(default_factory=set)
    tops: dict[str, tuple[Grain, str]] = field(default_factory=dict)
    result: ForgetResult = field(default_factory=ForgetResult)
    #: The agent's recognised patterns (read once, on the first forgotten experience) and those
    #: this operation marked stale.
    patterns: list[MemoryRecord] | None = None
    stale_patterns: list[str] = field(default_factory=list)
    #: The same for the agent's profiles (read once, on the first forgotten statement).
    profiles: list[MemoryRecord] | None = None
    stale_profiles: list[str] = field(default_factory=list)

    def event(
        self, tenant_id: str, agent_id: str, record_id: str, action: str, detail: dict[str, object]
    ) -> AuditEvent:
        """An audit event of this operation: every step of it names the same actor and instant."""
        return AuditEvent(
            tenant_id=tenant_id,
            agent_id=agent_id,
            record_id=record_id,
            action=action,
            actor=self.actor,
            at=self.now,
            detail=detail,
        )


class ForgetService:
    def __init__(
        self,
        store: WritableMemory,
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
        self._supersession = SupersessionService(store, feed=feed)

    def forget(self, tenant_id: str, agent_id: str, record_id: str, actor: str) -> ForgetResult:
        """Forget one record (by id or alias) and mark the summaries made from it stale."""
        walk = _Walk(now=self._clock.now(), actor=actor)
        record = self._store.get(tenant_id, agent_id, record_id)
        if record is None or not record.is_live(walk.now):
            raise NotFoundError("memory not found")
        if not self._forget_one(record, AuditAction.FORGET, {}, walk):
            self._finish(tenant_id, agent_id, walk)  # what it marked is re-made all the same
            raise NotFoundError("memory not found")
        self._finish(tenant_id, agent_id, walk)
        publish(self._feed, [memory_forgotten(record, walk.now, actor, walk.result.stale_summaries)])
        logger.info(
            "memory forgotten",
            extra={
                "agent_id": agent_id,
                "record_id": record.id,
                "actor": actor,
                "stale_summaries": len(walk.result.stale_summaries),
            },
        )
        return walk.result

    def erase_user(self, tenant_id: str, agent_id: str, user_id: str, actor: str) -> ForgetResult:
        """Forget every live record of one end user of the agent (the right to erasure).

        Reads the user's live records in rounds and forgets each round before reading the next,
        so it ends when none is left; summaries made from them are re-made without them.
        """
        walk = _Walk(now=self._clock.now(), actor=actor)
        detail: dict[str, object] = {"user_id": user_id}
        while True:
            query = StoreQuery(
                tenant_id=tenant_id, agent_id=agent_id, now=walk.now, user_id=user_id, limit=ERASE_PAGE
            )
            found = [c.record for c in self._store.search(query)]
            progress = sum(self._forget_one(r, AuditAction.ERASE, detail, walk) for r in found)
            if not found or not progress:
                break
        # Summaries that still hold the user's words after the memories they came from are gone
        # (retention deleted them once a summary held them): re-made from what is left.
        for summary in self._store.summaries_of_user(tenant_id, agent_id, user_id, walk.now):
            self._mark_summary(summary, {"because_user": user_id}, walk)
        self._finish(tenant_id, agent_id, walk)
        done = walk.result
        if done.forgotten or done.stale_summaries:  # an erasure that found nothing changed nothing
            event = user_erased(
                tenant_id, agent_id, user_id, walk.now, actor, done.forgotten, done.stale_summaries
            )
            publish(self._feed, [event])
        logger.info(
            "end user erased",
            extra={
                "agent_id": agent_id,
                "actor": actor,
                "forgotten": len(walk.result.forgotten),
                "stale_summaries": len(walk.result.stale_summaries),
            },
        )
        return walk.result

    # -- the walk up the cascade ----------------------------------------------------------------

    def _forget_one(self, record: MemoryRecord, action: str, detail: dict[str, object], walk: _Walk) -> bool:
        """Mark stale everything made from ``record`` (its summaries, patterns and profiles, and
        its successor's summaries), then forget it: a crash between the steps leaves the record
        live with what was made from it hidden, and a retry marks again (a no-op for what is
        already stale) and forgets it. The other order could leave a forgotten memory's words in
        a visible summary that no retry would find (the record is no longer live to forget)."""
        tenant, agent = record.tenant_id, record.agent_id
        stale = self._mark_chain(record, walk)
        if record.kind in MEMBER_KINDS:
            if walk.patterns is None:
                walk.patterns = recognised_patterns(self._store, tenant, agent, walk.now)
            self._mark_derived(record, walk, walk.patterns, walk.stale_patterns)
        if record.kind in STATEMENT_KINDS:
            if walk.profiles is None:
                walk.profiles = made_profiles(self._store, tenant, agent, walk.now)
            self._mark_derived(record, walk, walk.profiles, walk.stale_profiles)
        self._mark_successor(record, walk)
        event = walk.event(tenant, agent, record.id, action, {**detail, "stale_summaries": stale})
        if not self._store.soft_delete(tenant, agent, record.id, event):
            return False
        self._mark_again(record, walk)
        if action != AuditAction.ERASE:  # an erasure takes every memory of the user's timelines
            self._supersession.on_forget(record, walk.now, walk.actor)
        walk.result.forgotten.append(record.id)
        metrics.add_metric(name="MemoriesForgotten", unit=MetricUnit.Count, value=1)
        return True

    def _mark_again(self, record: MemoryRecord, walk: _Walk) -> None:
        """Walk the marks of ``record`` again once it is forgotten, at a later instant.

        A re-make that read its children between the first marks and the delete still folded
        ``record``, and names the first mark (`staleness.REMAKES`): marked again, the summary's
        mark is no longer the one that version names, so the writer drops it (or, already
        stored, it is hidden here) and the re-make queued for the chain's top is made from what
        is left. Idempotent: a retry after a crash finds the record forgotten and stops earlier;
        marking a stale summary again only moves its mark forward."""
        again = _Walk(now=max(self._clock.now(), walk.now + _INSTANT), actor=walk.actor, tops=walk.tops)
        self._mark_chain(record, again)
        self._mark_successor(record, again)
        known = set(walk.result.stale_summaries)
        walk.result.stale_summaries += [s for s in again.result.stale_summaries if s not in known]
        walk.marked |= again.marked

    def _mark_successor(self, record: MemoryRecord, walk: _Walk) -> None:
        """The summaries of what superseded ``record`` quote what it replaced: re-made too."""
        if record.superseded_by:
            successor = self._store.get(record.tenant_id, record.agent_id, record.superseded_by)
            if successor is not None and successor.is_live(walk.now):
                self._mark_chain(successor, walk)

    def _mark_summary(self, summary: MemoryRecord, detail: dict[str, object], walk: _Walk) -> None:
        """Mark ``summary`` itself stale (unless this operation did), then the chain above it."""
        if summary.id in walk.marked or summary.time_key is None:
            return
        event = walk.event(summary.tenant_id, summary.agent_id, summary.id, AuditAction.STALE, detail)
        if not self._store.mark_stale(summary.tenant_id, summary.agent_id, summary.id, event):
            return
        walk.marked.add(summary.id)
        walk.tops[summary.id] = (summary.grain, summary.time_key)
        walk.result.stale_summaries.append(summary.id)
        self._mark_chain(summary, walk)

    def _mark_chain(self, record: MemoryRecord, walk: _Walk) -> list[str]:
        """Mark stale every summary made from ``record``, directly or through the cascade."""
        tenant, agent = record.tenant_id, record.agent_id
        step = self._parent_of(record)
        child_id, marked = record.id, []
        child_ids = set(record.write_ids)
        while step is not None:
            grain, key = step
            sid = summary_id(tenant, agent, grain.value, key)
            if sid in walk.marked:
                # Marked by this operation already, with everything above it: the job of its
                # chain's top re-makes it and, through it, the summary just marked below it.
                walk.tops.pop(child_id, None)
                break
            summary = self._store.get(tenant, agent, sid)
            if summary is None:
                # Deleted by retention, which only deletes a summary its live parent lists: the
                # parent (and the chain above) still holds what this one held. Or not stored yet:
                # a version made from ``record`` may wait in the write queue, so its period is
                # made again (it re-makes a summary holding a forgotten memory) unless a summary
                # above it is re-made, which makes it first. Only right above what holds the
                # forgotten words: nothing above a missing summary was made through it.
                if child_id == record.id or child_id in walk.marked:
                    walk.tops.pop(child_id, None)
                    walk.tops[sid] = (grain, key)
                child_id, child_ids = sid, {sid}
                step = (PARENT_GRAIN[grain], parent_key(grain, key)) if grain in PARENT_GRAIN else None
                continue
            if summary.is_live(walk.now):
                if not any(made_from(summary, c) for c in child_ids):
                    break
            elif not is_stale(self._store, summary):
                break  # forgotten: never re-made, and its parent was re-made without it
            event = walk.event(tenant, agent, sid, AuditAction.STALE, {"because": record.id})
            self._store.mark_stale(tenant, agent, sid, event)
            walk.marked.add(sid)
            walk.tops.pop(child_id, None)
            walk.tops[sid] = (grain, key)
            marked.append(sid)
            walk.result.stale_summaries.append(sid)
            child_id, child_ids = sid, {sid}
            step = (PARENT_GRAIN[grain], parent_key(grain, key)) if grain in PARENT_GRAIN else None
        return marked

    def _mark_derived(
        self, record: MemoryRecord, walk: _Walk, derived: list[MemoryRecord], stale: list[str]
    ) -> None:
        """Hide every pattern or profile (of ``derived``) made from ``record`` until its job
        re-makes it; ``stale`` collects their ids for that job."""
        ids = record.write_ids
        for item in derived:
            if ids.isdisjoint(item.source_ids) or item.id in stale:
                continue
            event = walk.event(
                item.tenant_id, item.agent_id, item.id, AuditAction.STALE, {"because": record.id}
            )
            if self._store.mark_stale(item.tenant_id, item.agent_id, item.id, event):
                stale.append(item.id)
                walk.result.stale_summaries.append(item.id)

    def _parent_of(self, record: MemoryRecord) -> tuple[Grain, str] | None:
        """The summary a record is folded into: its local day's, or its period's parent."""
        if record.grain is Grain.WORKING:
            return Grain.DAILY, local_date(record.occurred_at, self._tz).isoformat()
        if record.grain in PARENT_GRAIN and record.time_key is not None:
            return PARENT_GRAIN[record.grain], parent_key(record.grain, record.time_key)
        return None

    def _finish(self, tenant_id: str, agent_id: str, walk: _Walk) -> None:
        """Queue the re-make of each chain's top; making it re-makes the stale ones below."""
        jobs = [
            Job.of(
                SummarizeJob(
                    tenant_id=tenant_id, agent_id=agent_id, grain=grain, time_key=key, reason="forget"
                )
            )
            for grain, key in walk.tops.values()
        ]
        if walk.stale_patterns:
            job = PatternJob(
                tenant_id=tenant_id, agent_id=agent_id, reason="forget", stale=walk.stale_patterns
            )
            jobs.append(Job(key=job.key, body=job.model_dump_json()))
        if walk.stale_profiles:
            remake = ProfileJob(
                tenant_id=tenant_id, agent_id=agent_id, reason="forget", stale=walk.stale_profiles
            )
            jobs.append(Job(key=remake.key, body=remake.model_dump_json()))
        if jobs:
            self._jobs.send(jobs)
            metrics.add_metric(
                name="SummariesMarkedStale", unit=MetricUnit.Count, value=len(walk.result.stale_summaries)
            )
