"""Exports: every live memory of one end user (or one agent) with its metadata, versions and audit
trail, and the summaries that hold it, as a JSON Lines file (`governance.rules.export_jobs`).

`start` keeps a new export's state and queues its job; `run` is the job. A run claims the export
(a lease, so two deliveries never write one file at once), goes on from its last checkpoint, and
walks the store a page at a time: memory stays bounded by a page and the writer's one part,
whatever the export's size. Every second or so it saves its progress (shown by
``GET /v1/admin/exports/{id}``) and, when the writer can make what it wrote durable, a
checkpoint; after ``run_s`` seconds it stops at the next checkpoint and queues itself again, so
a run stays well inside a function's time limit and a large export is a chain of short runs.

What an export holds, for an end user: their live records in every agent of the tenant (the
memories erasure would forget: ``user_id`` theirs), then, agent by agent, the summaries whose end
users include them (what erasure re-makes: `RecordStore.summaries_of_user`); a summary that also
folds another end user's words is named, never shown (its text is partly someone else's). For an
agent: every live record of it, summaries included. Each memory comes with its versions
(`governance.rules.versions`) and the audit events about it. Nothing of another tenant is ever read:
every store read names the export's tenant.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby

from agent_memory.errors import ConflictError, ForbiddenError, NotFoundError
from agent_memory.governance.rules.export_jobs import (
    MAX_FAILURES,
    ExportCheckpoint,
    ExportItem,
    ExportJob,
    ExportPhase,
    ExportScope,
    ExportState,
    new_export_id,
    overlaps,
    summary_is_only_theirs,
)
from agent_memory.governance.rules.versions import Change, versions
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditEvent, Clock, ExportableMemory, Job, JobQueue
from agent_memory.ports.export_store import (
    ExportArchive,
    ExportLines,
    ExportLocation,
    ExportQuery,
    ExportWriter,
)

#: Records read per store page.
PAGE_SIZE = 500
#: Agents read per page of the tenant's agent listing (a user's summaries, agent by agent).
AGENT_PAGE = 100
#: Seconds a run writes before it stops at its next checkpoint and queues the next run.
RUN_S = 20.0
#: Seconds between two saves of the progress (and tries at a checkpoint).
SAVE_EVERY_S = 1.0
#: How long a pre-signed download URL is valid.
URL_TTL_S = 900


@dataclass
class _Run:
    """One run of an export: its state as last stored (and the tag to replace it), its writer,
    the walk's position and when it last saved."""

    state: ExportState
    tag: str
    writer: ExportWriter
    deadline: float
    saved_at: float
    phase: ExportPhase = "records"
    cursor: str | None = None
    agent_id: str | None = None


class ExportService:
    def __init__(
        self,
        store: ExportableMemory,
        archive: ExportArchive,
        lines: ExportLines,
        jobs: JobQueue,
        clock: Clock,
        *,
        page_size: int = PAGE_SIZE,
        run_s: float = RUN_S,
        save_every_s: float = SAVE_EVERY_S,
        url_ttl_s: int = URL_TTL_S,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._archive = archive
        self._lines = lines
        self._jobs = jobs
        self._clock = clock
        self._page = page_size
        self._run_s = run_s
        self._save_every_s = save_every_s
        self._url_ttl_s = url_ttl_s
        self._timer = timer
        #: A run holds its export this long: past its budget, the next checkpoint, and a margin.
        self._lease = timedelta(seconds=2 * run_s + 60)

    # -- the admin's side ---------------------------------------------------------------------

    def start(self, caller: Caller, scope: ExportScope) -> ExportState:
        """A new export of ``scope`` in the caller's tenant, queued. A key bound to agents may
        export only one of its agents (an end user's memory spans every agent)."""
        if caller.agents and scope.agent_id not in caller.agents:
            raise ForbiddenError("a key bound to agents may export only one of its agents")
        now = self._clock.now()
        state = ExportState(
            id=new_export_id(),
            tenant_id=caller.tenant_id,
            scope=scope,
            requested_by=caller.key_id,
            created_at=now,
            updated_at=now,
        )
        self._archive.create(state)
        self._queue(state)
        metrics.add_metric(name="ExportsStarted", unit=MetricUnit.Count, value=1)
        of = "user" if scope.user_id else "agent"
        logger.info("export started", extra={"export_id": state.id, "of": of})
        return state

    def get(self, caller: Caller, export_id: str) -> ExportState:
        """The caller's export; another tenant's, or an unknown id, is not found alike."""
        found = self._archive.read(caller.tenant_id, export_id)
        if found is None or not found[0].visible_to(caller):
            raise NotFoundError("export not found")
        return found[0]

    def recent(self, caller: Caller, limit: int) -> list[ExportState]:
        """The caller's tenant's exports, newest first (for a key bound to agents: of its agents)."""
        return [s for s in self._archive.recent(caller.tenant_id, limit) if s.visible_to(caller)]

    def location(self, caller: Caller, export_id: str) -> ExportLocation:
        """Where the caller's finished export is fetched; 409 while it is not done."""
        state = self.get(caller, export_id)
        if state.status != "done":
            raise ConflictError(f"the export is {state.status}, not done")
        location = self.location_of(state)
        if location is None:
            raise NotFoundError("export not found")
        return location

    def location_of(self, state: ExportState) -> ExportLocation | None:
        """Where a done export (already read for its caller) is fetched; None: its file is gone."""
        return self._archive.location(state.tenant_id, state.id, self._url_ttl_s)

    # -- the job ------------------------------------------------------------------------------

    def run(self, job: ExportJob) -> ExportState | None:
        """One run of the export: claimed, walked from its checkpoint, stopped at its budget (and
        queued again) or finished. None: nothing to do (unknown, or another run holds it)."""
        found = self._archive.read(job.tenant_id, job.export_id)
        now = self._clock.now()
        if found is None or found[0].finished or found[0].leased(now):
            return None if found is None or not found[0].finished else found[0]
        state, tag = found
        state = state.claimed(now, self._lease)
        try:
            tag = self._archive.replace(state, tag)
        except ConflictError:
            return None  # another delivery claimed it first
        sink = state.checkpoint.sink
        run: _Run | None = None
        try:
            started = self._timer()
            run = _Run(
                state,
                tag,
                self._archive.writer(state.tenant_id, state.id, sink or None),
                deadline=started + self._run_s,
                saved_at=started,
                phase=state.checkpoint.phase,
                cursor=state.checkpoint.cursor,
                agent_id=state.checkpoint.agent_id,
            )
            if not sink:
                self._begin(run)
            if self._walk(run):
                return self._finish(run)
            self._queue(run.state)
            return run.state
        except ConflictError:
            logger.warning("export run lost its lease", extra={"export_id": job.export_id})
            return None
        except Exception:
            if self._failed(job, None if run is None else run.writer):
                raise  # retried by the queue, from the last checkpoint
            return None

    def _begin(self, run: _Run) -> None:
        """A fresh file: the estimate of what it will hold, and the header."""
        progress = run.state.progress
        progress.estimated_total = self._store.count_records(self._query(run.state, None))
        self._write(run, self._lines.header(run.state))

    def _walk(self, run: _Run) -> bool:
        """Write from the run's position on; True when everything is written, False when the
        run stopped at its budget (a checkpoint saved)."""
        scope = run.state.scope
        if run.phase == "records":
            while True:
                page = self._store.export_records(self._query(run.state, run.cursor))
                self._write_records(run, page.records)
                run.cursor = page.next_cursor
                if run.cursor is None and scope.user_id is not None:
                    run.phase = "summaries"
                if self._pause(run):
                    return run.cursor is None and scope.user_id is None
                if run.cursor is None:
                    break
        if scope.user_id is None:
            return True
        return self._walk_summaries(run, scope.user_id)

    def _walk_summaries(self, run: _Run, user_id: str) -> bool:
        tenant = run.state.tenant_id
        while True:
            listing = run.cursor
            page = self._store.list_agents(tenant, self._clock.now(), listing, AGENT_PAGE)
            for ref in page.agents:
                if run.agent_id is not None and ref.agent_id <= run.agent_id:
                    continue  # written before the last checkpoint
                self._write_summaries(run, ref.agent_id, user_id)
                run.agent_id = ref.agent_id
                if self._pause(run):
                    return False
            if page.next_cursor is None:
                return True
            run.cursor, run.agent_id = page.next_cursor, None

    def _query(self, state: ExportState, cursor: str | None) -> ExportQuery:
        scope = state.scope
        return ExportQuery(
            tenant_id=state.tenant_id,
            now=self._clock.now(),
            agent_id=scope.agent_id,
            user_id=scope.user_id,
            # an end user's summaries come agent by agent, by the users they fold
            grains=(Grain.WORKING,) if scope.user_id is not None else None,
            start=scope.since,
            end=scope.until,
            limit=self._page,
            cursor=cursor,
        )

    def _write_records(self, run: _Run, records: Sequence[MemoryRecord]) -> None:
        """A page of records (sorted by agent), each with its versions and audit trail."""
        for agent_id, group in groupby(records, key=lambda r: r.agent_id):
            batch = list(group)
            for item in self._items(run.state.tenant_id, agent_id, batch):
                self._write_item(run, item)

    def _write_summaries(self, run: _Run, agent_id: str, user_id: str) -> None:
        scope = run.state.scope
        found = self._store.summaries_of_user(run.state.tenant_id, agent_id, user_id, self._clock.now())
        held = [s for s in found if overlaps(s, scope.since, scope.until)]
        theirs = [s for s in held if summary_is_only_theirs(s, user_id)]
        for item in self._items(run.state.tenant_id, agent_id, theirs):
            self._write_item(run, item)
        for summary in held:
            if not summary_is_only_theirs(summary, user_id):
                self._write_item(run, ExportItem("summary", summary, withheld=True))

    def _items(self, tenant_id: str, agent_id: str, records: Sequence[MemoryRecord]) -> list[ExportItem]:
        if not records:
            return []
        events: dict[str, list[AuditEvent]] = {}
        for event in self._store.audit_of_records(tenant_id, agent_id, [r.id for r in records]):
            events.setdefault(event.record_id, []).append(event)
        items = []
        for record in records:
            changes = [Change(e.action, e.actor, e.at, e.detail) for e in events.get(record.id, [])]
            changes.sort(key=lambda c: c.at)
            history = tuple(versions(record, changes))
            if record.grain is Grain.WORKING:
                items.append(ExportItem("memory", record, history, tuple(changes)))
            else:
                items.append(ExportItem("summary", record, history, tuple(changes)))
        return items

    def _write_item(self, run: _Run, item: ExportItem) -> None:
        self._write(run, self._lines.item(item))
        progress = run.state.progress
        if item.withheld:
            progress.withheld_summaries += 1
        elif item.kind == "memory":
            progress.memories += 1
        else:
            progress.summaries += 1
        progress.audit_events += len(item.events)

    def _write(self, run: _Run, data: bytes) -> None:
        run.writer.write(data)
        run.state.progress.bytes += len(data)

    def _pause(self, run: _Run) -> bool:
        """Save the progress every `SAVE_EVERY_S` (a checkpoint with it when the writer can
        make one); True when the budget is spent and a checkpoint is saved: the run stops."""
        now = self._timer()
        over = now >= run.deadline
        if not over and now - run.saved_at < self._save_every_s:
            return False
        sink = run.writer.checkpoint()
        update: dict[str, object] = {"updated_at": self._clock.now()}
        if sink is not None:
            update["checkpoint"] = ExportCheckpoint(
                phase=run.phase,
                cursor=run.cursor,
                agent_id=run.agent_id,
                progress=run.state.progress.model_copy(),
                sink=sink,
            )
        stop = over and sink is not None
        if stop:
            update["lease_until"] = None
        self._save(run, run.state.model_copy(update=update))
        run.saved_at = now
        return stop

    def _finish(self, run: _Run) -> ExportState:
        self._write(run, self._lines.trailer(run.state))
        size = run.writer.finish()
        now = self._clock.now()
        progress = run.state.progress.model_copy(update={"bytes": size})
        done = run.state.model_copy(
            update={
                "status": "done",
                "finished_at": now,
                "updated_at": now,
                "lease_until": None,
                "progress": progress,
                "checkpoint": ExportCheckpoint(phase=run.phase, progress=progress),
            }
        )
        self._save(run, done)
        metrics.add_metric(name="ExportsFinished", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="ExportedMemories", unit=MetricUnit.Count, value=progress.memories)
        logger.info(
            "export finished",
            extra={"export_id": done.id, "memories": progress.memories, "bytes": progress.bytes},
        )
        return done

    def _failed(self, job: ExportJob, writer: ExportWriter | None) -> bool:
        """Count a failed run; True when the export goes on (the job is retried), False when it
        failed too often and is given up (its file too)."""
        logger.exception("export run failed", extra={"export_id": job.export_id})
        found = self._archive.read(job.tenant_id, job.export_id)
        if found is None:
            return False
        state, tag = found
        failures = state.failures + 1
        given_up = failures >= MAX_FAILURES
        now = self._clock.now()
        update: dict[str, object] = {"failures": failures, "lease_until": None, "updated_at": now}
        if given_up:
            update |= {"status": "failed", "finished_at": now, "error": "the export could not be made"}
            if writer is not None:
                writer.abort()
            metrics.add_metric(name="ExportsFailed", unit=MetricUnit.Count, value=1)
        self._archive.replace(state.model_copy(update=update), tag)
        return not given_up

    def _save(self, run: _Run, state: ExportState) -> None:
        run.tag = self._archive.replace(state, run.tag)
        run.state = state

    def _queue(self, state: ExportState) -> None:
        job = ExportJob(tenant_id=state.tenant_id, export_id=state.id)
        self._jobs.send([Job(key=job.key, body=job.model_dump_json())])
