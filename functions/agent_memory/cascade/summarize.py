"""Making summaries: the worker side of the grain cascade.

One job is one agent's period of one grain (`SummarizeJob`). The worker loads the period's
children completely (`MemoryStore.records_in_span`), folds them with the `Summarizer` and sends
the summary as an ``upsert`` `WriteCommand` to the write queue, on the ``tenant:agent:grain``
group every write of that slice goes through; the writer embeds and stores it. Why each step is
safe to repeat (jobs are delivered at least once, schedules fire again, people re-run periods):

* **Deterministic ids.** A summary's id comes from (tenant, agent, grain, time key): a re-run
  overwrites it, never adds a second one.
* **Re-runs are no-ops.** A summary records the hash of what it was made from (its children's
  ids and content hashes, the summarizer's model id and prompt version). A re-run that finds the
  same hash stops there: no model call, no write, the store does not change.
* **Self-healing.** A child summary that is missing (a failed or late run) is made first, from
  its own children, recursively down to working memory. A child that was forgotten is respected:
  it is neither re-made nor folded. An empty period makes nothing.
* **Stale parents are refreshed.** When a summary is made or changes and its parent summary
  already exists (a month summarized before its last week closed, a history import into an old
  day), a ``refresh`` job for the parent is queued. It waits until the child's write is stored
  (``after``), so it folds the new child, not the old one.
* **Stale summaries are re-made.** A summary marked stale by a forget (`governance.forget`) is
  made again from what is still remembered, whatever its input hash says, or deleted when
  nothing is left; each re-make and deletion is audited with the children it dropped.
* **Nothing is lost to retention.** When children were only removed since the summary was made
  (working memory past its retention, or forgotten) and none were added, the summary is kept:
  re-making it would drop what it still remembers.

A summary is one of the derived kinds (`derived.rules.kinds`) and lives their one life
(`derived.lifecycle.Lifecycle`, driven by the summaries' row): what its period's id holds before
it is made (nothing, a live summary, a stale one to re-make, a forgotten one never made again),
the upsert through the writer and the drop of an emptied one are the lifecycle's; what is the
cascade's own is the choosing (periods, healing) and the folding.

Children larger than the summarizer's budget are folded in chunks: each chunk is summarized on
its own (map), then the partial summaries are summarized together (reduce), repeatedly if needed
(`cascade.folding`, which also makes the rest of the record: the children it names, their tags
and links, the bounded text, an earlier version kept or carried).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agent_memory.cascade.folding import (
    bounded,
    carrying,
    check_budget,
    fold,
    lost_children,
    merged_links,
    only_removed,
    top_tags,
)
from agent_memory.cascade.rules.periods import (
    CHILD_GRAIN,
    PARENT_GRAIN,
    child_keys,
    covered_span,
    local_date,
    parent_key,
)
from agent_memory.derived.lifecycle import CHILDREN_COUNT, MODEL_ID, REMAKES, Lifecycle, stamp
from agent_memory.derived.rules.kinds import SUMMARIES, is_derived
from agent_memory.errors import DependencyError
from agent_memory.model.grains import Grain
from agent_memory.model.ids import content_hash, summary_id
from agent_memory.model.jobs import ExpectedChild, SummarizeJob
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    Clock,
    Job,
    JobQueue,
    Summarizer,
    SummaryInput,
    SummaryMemory,
    WriteQueue,
)
from agent_memory.supersession.review import ReviewService
from agent_memory.tenancy.models import TenantSummarizers, summarizer_of

#: Seconds a refresh job waits before its first attempt, so the write it follows is usually
#: stored by then (SQS ``DelaySeconds``; the ``after`` check makes it correct either way).
REFRESH_DELAY_S = 60
#: How many replaced memories a child's input quotes, and how much of each.
MAX_REPLACED = 3
REPLACED_CHARS = 200

# Metadata keys every summary carries (and `MODEL_ID`, `CHILDREN_COUNT`, `REMAKES`).
PROMPT_VERSION = "prompt_version"
INPUT_HASH = "input_hash"
CHILD_GRAIN_KEY = "child_grain"
CALLS = "summarizer_calls"
TIMEZONE = "timezone"


class SummaryOutcome(StrEnum):
    MADE = "made"  # new, or re-made because its children changed
    UNCHANGED = "unchanged"  # made from exactly these children already: nothing written
    EMPTY = "empty"  # nothing to fold: nothing written
    KEPT = "kept"  # children only went away since (retention, forget): kept as it is
    FORGOTTEN = "forgotten"  # forgotten by its agent: never re-made
    UNFINISHED = "unfinished"  # a day that has not ended: nothing made yet


class ChildNotStoredYetError(DependencyError):
    """A refresh ran before the write of the child that triggered it was stored: retry later."""


@dataclass
class RunStats:
    """What one job did, for its log line, its metrics and the benchmark's LLM-cost count."""

    outcome: SummaryOutcome = SummaryOutcome.EMPTY
    made: list[str] = field(default_factory=list)
    healed: int = 0
    calls: int = 0
    input_chars: int = 0
    output_chars: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    refreshes: int = 0


@dataclass(frozen=True, slots=True)
class _Made:
    record: MemoryRecord | None
    outcome: SummaryOutcome


#: The summarizer of the job this thread (or task) is running.
_CURRENT: ContextVar[Summarizer | None] = ContextVar("summarizer", default=None)


class SummarizeService:
    def __init__(
        self,
        store: SummaryMemory,
        summarizer: Summarizer,
        writes: WriteQueue,
        jobs: JobQueue,
        clock: Clock,
        timezone: str = "UTC",
        *,
        refresh_delay_s: int = REFRESH_DELAY_S,
        summarizers: TenantSummarizers | None = None,
        review: ReviewService | None = None,
    ) -> None:
        check_budget(summarizer)
        #: Confirms, undoes or adds the day's supersession links with the summary model.
        self._review = review
        self._store = store
        self._default_summarizer = summarizer
        #: The tenant's own summary model, when it chose one (`tenancy.models`).
        self._summarizers = summarizers
        #: The life every derived kind lives, as the summaries' registry row drives it: what a
        #: period's id holds before it is made, the upsert through the writer, the drop.
        self._life = Lifecycle(SUMMARIES, store, writes)
        self._jobs = jobs
        self._clock = clock
        self._tz = timezone
        self._refresh_delay_s = refresh_delay_s

    @property
    def _summarizer(self) -> Summarizer:
        """The running job's tenant's summarizer (set by `run`), else the deployment's."""
        return _CURRENT.get() or self._default_summarizer

    def run(self, job: SummarizeJob) -> RunStats:
        """Make the job's summary (and any missing child first) with the tenant's summarizer."""
        chosen = summarizer_of(self._summarizers, self._default_summarizer, job.tenant_id)
        if chosen is not self._default_summarizer:
            check_budget(chosen)
        token = _CURRENT.set(chosen)
        try:
            return self._run(job)
        finally:
            _CURRENT.reset(token)

    def _run(self, job: SummarizeJob) -> RunStats:
        now = self._clock.now()
        if job.after is not None:
            self._require_stored(job, job.after)
        stats = RunStats()
        made = self._make(job.tenant_id, job.agent_id, job.grain, job.time_key, now, stats)
        stats.outcome = made.outcome
        if made.outcome is SummaryOutcome.MADE and made.record is not None:
            self._refresh_parent(made.record, now, stats)
        self._emit(job, stats)
        return stats

    # -- making one summary -------------------------------------------------------------------

    def _make(
        self,
        tenant: str,
        agent: str,
        grain: Grain,
        key: str,
        now: datetime,
        stats: RunStats,
    ) -> _Made:
        if grain is Grain.DAILY and covered_span(grain, key, self._tz)[1] > now:
            # A day still open would be summarized while writes still arrive into it, and
            # nothing would fold them in later: its schedule (or a later job) makes it once it
            # has ended. Coarser periods may be made early from the days that have ended (a
            # month whose last ISO week runs into the next month): each later day's summary
            # refreshes them ("Stale parents are refreshed").
            return _Made(None, SummaryOutcome.UNFINISHED)
        prior = self._life.prior(tenant, agent, summary_id(tenant, agent, grain.value, key), now)
        if prior.forgotten:
            return _Made(None, SummaryOutcome.FORGOTTEN)
        existing, stale = prior.record, prior.hidden
        children = self._children(tenant, agent, grain, key, now, stats)
        if not children:
            if existing is not None and (stale or self._holds_forgotten(existing, children)):
                self._drop_stale(existing, now)
                return _Made(None, SummaryOutcome.EMPTY)
            return _Made(existing, SummaryOutcome.EMPTY)
        digest = self._input_hash(grain, key, children)
        # A live summary made from a memory forgotten since (its version was still in the write
        # queue when the forget looked for it) is re-made: neither kept nor carried forward.
        holds_forgotten = existing is not None and not stale and self._holds_forgotten(existing, children)
        if existing is not None and not stale and not holds_forgotten:
            if existing.metadata.get(INPUT_HASH) == digest:
                return _Made(existing, SummaryOutcome.UNCHANGED)
            if only_removed(existing, children):
                logger.info(
                    "children were removed since the summary was made; keeping it",
                    extra={"summary_id": existing.id, "children": len(children)},
                )
                return _Made(existing, SummaryOutcome.KEPT)
        # The model's second look at the day's supersession links, before it folds the day.
        if (
            grain is Grain.DAILY
            and self._review is not None
            and any(self._review.review(children, self._summarizer, now))
        ):
            children = self._children(tenant, agent, grain, key, now, stats)
            digest = self._input_hash(grain, key, children)
        inputs = [self._input(c) for c in children]
        carried: MemoryRecord | None = None
        if existing is not None and not stale and not holds_forgotten and lost_children(existing, children):
            # Retention deleted children this summary holds (their words live only here now) and
            # new ones came since (a late write): fold the new ones into what it says, never
            # re-make it from what is left.
            carried = existing
            known = set(existing.source_ids)
            inputs = [SummaryInput(label=f"{key} so far", text=existing.content)]
            inputs += [self._input(c) for c in children if c.id not in known]
        calls_before = stats.calls
        text = fold(self._summarizer, grain, key, inputs, stats)
        if not text.strip():
            logger.warning("the summarizer made no text", extra={"grain": grain.value, "time_key": key})
            return _Made(existing, SummaryOutcome.EMPTY)
        record = self._record(
            tenant, agent, grain, key, children, text, digest, now, existing, stats.calls - calls_before
        )
        if carried is not None:
            record = carrying(record, carried)
        # Queued under its version (what it was made from): a resend of this exact message is
        # dropped by the queue, a later re-make (even of identical text) is not.
        self._life.queue([record], versions={record.id: digest})
        stats.made.append(record.id)
        metrics.add_metric(name="SummariesMade", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name=f"SummariesMade{grain.value.capitalize()}", unit=MetricUnit.Count, value=1)
        return _Made(record, SummaryOutcome.MADE)

    def _children(
        self, tenant: str, agent: str, grain: Grain, key: str, now: datetime, stats: RunStats
    ) -> list[MemoryRecord]:
        """The period's children, oldest first; missing child summaries are made first."""
        start, end = covered_span(grain, key, self._tz)
        child = CHILD_GRAIN[grain]
        found = self._store.records_in_span(tenant, agent, child, start, end, now)
        if grain is Grain.DAILY:
            # Patterns and profiles are made from other memories, which the days fold already;
            # folded too, a re-made or dropped one would live on in its day's summary.
            return [r for r in found if not is_derived(r)]
        wanted = child_keys(grain, key)
        by_key = {r.time_key: r for r in found if r.time_key in wanted}
        out: list[MemoryRecord] = []
        for child_key in wanted:
            record = by_key.get(child_key)
            if record is None:  # missing: heal it, if its own period has anything to fold
                healed = self._make(tenant, agent, child, child_key, now, stats)
                if healed.outcome is SummaryOutcome.MADE:
                    stats.healed += 1
                    metrics.add_metric(name="SummariesHealed", unit=MetricUnit.Count, value=1)
                record = healed.record
            if record is not None:
                out.append(record)
        return out

    def _holds_forgotten(self, summary: MemoryRecord, children: Sequence[MemoryRecord]) -> bool:
        """Whether a source of ``summary`` that is no longer among its children was forgotten
        (its tombstone is there), not deleted by retention (gone)."""
        gone = set(summary.source_ids) - {c.id for c in children}
        for child_id in sorted(gone):
            if self._life.forgotten(self._life.get(summary.tenant_id, summary.agent_id, child_id)):
                return True
        return False

    def _input(self, record: MemoryRecord) -> SummaryInput:
        """A working memory is labelled with its local day; a summary with its time key. A
        memory that superseded others says what it replaced, so the summary can say "moved from
        Berlin to Lisbon" instead of stating the new value as if nothing had held before (a
        forget of the replaced memory re-makes this summary: `ForgetService`)."""
        label = record.time_key or local_date(record.occurred_at, self._tz).isoformat()
        return SummaryInput(label=label, text=record.content + self._replaced(record))

    def _replaced(self, record: MemoryRecord) -> str:
        if record.grain is not Grain.WORKING or not record.supersedes:
            return ""
        olds = [
            self._store.get(record.tenant_id, record.agent_id, i) for i in record.supersedes[:MAX_REPLACED]
        ]
        said = [
            f"[{local_date(o.occurred_at, self._tz).isoformat()}] {_clip(o.content)}"
            for o in olds
            if o is not None and o.deleted_at is None
        ]
        return f" (this replaces what was said before: {'; '.join(said)})" if said else ""

    def _input_hash(self, grain: Grain, key: str, children: Sequence[MemoryRecord]) -> str:
        h = hashlib.sha256()
        for part in (self._summarizer.model_id, self._summarizer.prompt_version, self._tz, grain.value, key):
            h.update(part.encode("utf-8") + b"\x00")
        for child in children:
            h.update(f"{child.id}\x00{child.content_hash}\x00".encode())
            if child.supersedes:  # what it replaced is in its input (`_replaced`); none: as before
                h.update(("\x01" + ",".join(child.supersedes) + "\x00").encode())
        return h.hexdigest()

    def _record(
        self,
        tenant: str,
        agent: str,
        grain: Grain,
        key: str,
        children: Sequence[MemoryRecord],
        text: str,
        digest: str,
        now: datetime,
        existing: MemoryRecord | None,
        calls: int,
    ) -> MemoryRecord:
        start, end = covered_span(grain, key, self._tz)
        content = bounded(text)
        users = {c.user_id for c in children}
        everyone = sorted({u for c in children for u in (c.user_ids or (c.user_id,)) if u is not None})
        return MemoryRecord(
            id=summary_id(tenant, agent, grain.value, key),
            tenant_id=tenant,
            agent_id=agent,
            user_id=users.pop() if len(users) == 1 else None,
            user_ids=everyone,
            grain=grain,
            time_key=key,
            period_start=start,
            period_end=end,
            kind=MemoryKind.SUMMARY,
            content=content,
            # An event keeps its weight as it is folded up: a summary is as important as the most
            # important thing in it (a mean would let one decision drown in a month of chatter).
            importance=max(c.importance for c in children),
            tags=top_tags(children),
            links=merged_links(children),
            metadata={
                MODEL_ID: self._summarizer.model_id,
                PROMPT_VERSION: self._summarizer.prompt_version,
                INPUT_HASH: digest,
                CHILD_GRAIN_KEY: CHILD_GRAIN[grain].value,
                CHILDREN_COUNT: len(children),
                CALLS: calls,
                TIMEZONE: self._tz,
                # The stale mark this version re-makes: the writer drops it once a later
                # forget has marked the summary again (`staleness.version_outdated`).
                REMAKES: stamp(existing),
            },
            # Every child, never a prefix: retention deletes a record only when its parent names
            # it here. About 33 bytes an id: 10,000 children fit a 1 MiB queue message many
            # times over; a write too large for the queue fails loudly, it is never cut.
            source_ids=[c.id for c in children],
            content_hash=content_hash(content),
            created_at=existing.created_at if existing is not None else now,
            updated_at=now,
            occurred_at=start,
        )

    # -- stale summaries (a record they were made from was forgotten) -------------------------

    def _drop_stale(self, summary: MemoryRecord, now: datetime) -> None:
        """Nothing is left to fold: the stale summary goes, with an audit event saying so.

        The event is dated no earlier than the mark it answers (as `staleness.remade_event`
        is): a job whose clock read lags the forget's would otherwise date ``emptied`` before
        ``stale``, and a summary made anew later would read as still stale in its trail."""
        at = max(now, summary.deleted_at) if summary.deleted_at else now
        detail: dict[str, object] = {
            "dropped": list(summary.source_ids),
            "stale_since": summary.deleted_at.isoformat() if summary.deleted_at else None,
        }
        self._life.drop(summary, at, detail, actor=f"{SUMMARIES.actor}:{self._summarizer.model_id}")
        metrics.add_metric(name="StaleSummariesDeleted", unit=MetricUnit.Count, value=1)

    # -- refreshes ------------------------------------------------------------------------------

    def _refresh_parent(self, record: MemoryRecord, now: datetime, stats: RunStats) -> None:
        grain = record.grain
        if grain not in PARENT_GRAIN or record.time_key is None:
            return
        parent_grain, key = PARENT_GRAIN[grain], parent_key(grain, record.time_key)
        tenant, agent = record.tenant_id, record.agent_id
        parent = self._store.get(tenant, agent, summary_id(tenant, agent, parent_grain.value, key))
        if parent is None or not parent.is_live(now):
            return  # its own schedule (or a backfill) makes it, from the stored children
        job = SummarizeJob(
            tenant_id=tenant,
            agent_id=agent,
            grain=parent_grain,
            time_key=key,
            reason="refresh",
            after=ExpectedChild(id=record.id, updated_at=record.updated_at),
        )
        self._jobs.send([Job.of(job)], delay_s=self._refresh_delay_s)
        stats.refreshes += 1
        metrics.add_metric(name="SummaryRefreshesQueued", unit=MetricUnit.Count, value=1)

    def _require_stored(self, job: SummarizeJob, after: ExpectedChild) -> None:
        stored = self._store.get(job.tenant_id, job.agent_id, after.id)
        if stored is None or stored.updated_at < after.updated_at:
            raise ChildNotStoredYetError(
                f"{job.key}: waiting for the write of {after.id} ({after.updated_at.isoformat()})"
            )

    def _emit(self, job: SummarizeJob, stats: RunStats) -> None:
        metrics.add_metric(name="SummarizeJobsDone", unit=MetricUnit.Count, value=1)
        if stats.outcome is SummaryOutcome.UNCHANGED:
            metrics.add_metric(name="SummariesUnchanged", unit=MetricUnit.Count, value=1)
        if stats.calls:
            metrics.add_metric(name="SummarizerCalls", unit=MetricUnit.Count, value=stats.calls)
        if stats.input_tokens or stats.output_tokens:
            metrics.add_metric(name="SummarizerInputTokens", unit=MetricUnit.Count, value=stats.input_tokens)
            metrics.add_metric(
                name="SummarizerOutputTokens", unit=MetricUnit.Count, value=stats.output_tokens
            )
        logger.info(
            "summarize job",
            extra={
                "job": job.key,
                "reason": job.reason,
                "outcome": stats.outcome.value,
                "made": len(stats.made),
                "healed": stats.healed,
                "calls": stats.calls,
                "refreshes": stats.refreshes,
            },
        )


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


def _clip(text: str) -> str:
    return text if len(text) <= REPLACED_CHARS else text[: REPLACED_CHARS - 1] + "…"
