"""Moving a tenant's memories into the space of the embedding model it chose, in the background.

`start` is called when an admin changes ``settings.embedding``: the tenant's `EmbeddingState`
gets a target and a job is queued. `run` is that job: it embeds, a page at a time, the tenant's
live records that have no vector in the target space yet (the store finds them, so the job
keeps no cursor of its own: killed midway, it is redelivered and goes on from what is stored),
records its progress in the state (shown by ``GET /v1/admin/settings``), and queues itself again
until nothing is missing. Then it switches the tenant to the new space, once every function is
sure to write both spaces (the phases and why they are safe: `tenancy.rules.embedding_spaces`), and a
cache lifetime later drops the vectors of the space the tenant left.

The tenant's searches read the old space throughout the fill and the new one after the switch:
at no moment is a record missing from the space being searched, and no record is in a search
twice (a query reads one space).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from agent_memory.errors import ConflictError
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Clock, EmbeddingSpaces, Job, JobQueue
from agent_memory.ports.tenancy import EmbeddingStateStore
from agent_memory.tenancy.models import TenantEmbedders, record_vectors
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState, ReembedJob
from agent_memory.tenancy.rules.tenant_settings import ModelChoice
from agent_memory.tenancy.settings import SettingsCache

#: Records embedded per model call and store write.
PAGE_SIZE = 64
#: Pages per run: a run stays well inside a function's time limit and queues the next one.
MAX_PAGES = 40
#: How long a run that could not make progress waits before the next try (seconds).
RETRY_DELAY_S = 60
#: The longest a queued job may be delayed (SQS's limit).
MAX_DELAY_S = 900
#: Compare-and-set retries on the state before giving up for this run.
_CAS_TRIES = 5


@dataclass(slots=True)
class ReembedReport:
    """What one run did."""

    embedded: int = 0
    remaining: int | None = None
    switched: bool = False
    dropped: list[str] = field(default_factory=list)
    next_in_s: int | None = None


class ReembedService:
    def __init__(
        self,
        store: EmbeddingSpaces,
        states: EmbeddingStateStore,
        cache: SettingsCache,
        embedders: TenantEmbedders,
        jobs: JobQueue,
        clock: Clock,
        *,
        page_size: int = PAGE_SIZE,
        max_pages: int = MAX_PAGES,
    ) -> None:
        self._store = store
        self._states = states
        self._cache = cache
        self._embedders = embedders
        self._jobs = jobs
        self._clock = clock
        self._page_size = page_size
        self._max_pages = max_pages
        #: Every function sees a change within the settings cache's lifetime.
        self._ttl = timedelta(seconds=math.ceil(cache.ttl_s) + 1)

    def start(self, tenant_id: str, wanted: ModelChoice | None) -> EmbeddingState:
        """The tenant chose ``wanted``: a fill towards it (or none, if it is the model in force)."""
        for _ in range(_CAS_TRIES):
            state = self._states.get_embedding_state(tenant_id) or EmbeddingState()
            moved = state.choose(wanted, self._clock.now())
            if moved.model_dump(exclude={"version"}) == state.model_dump(exclude={"version"}):
                return state
            try:
                stored = self._states.put_embedding_state(tenant_id, moved, state.version)
            except ConflictError:
                continue  # the job moved it meanwhile: apply the choice to what it wrote
            self._cache.remember_embedding(tenant_id, stored)
            self._queue(tenant_id, 0)
            logger.info("embedding model changed", extra={"target": stored.target_space or "deployment"})
            return stored
        raise ConflictError("the tenant's embedding state keeps changing: try again")

    def state(self, tenant_id: str) -> EmbeddingState:
        """The tenant's latest state (not the cache's), for its admin."""
        return self._states.get_embedding_state(tenant_id) or EmbeddingState()

    def run(self, job: ReembedJob) -> ReembedReport:
        tenant = job.tenant_id
        report = ReembedReport()
        state = self._drop_retired(tenant, report)
        if not state.moving or state.target_space is None:
            self._again_for_drops(tenant, state, report)
            return report
        space = state.target_space
        target = self._embedders.of_choice(tenant, state.target)
        for _ in range(self._max_pages):
            page = self._store.missing_in_space(tenant, space, self._page_size)
            if not page:
                break
            stored = self._store.put_space_vectors(
                tenant, space, list(zip(page, record_vectors(target.embedder, page), strict=True))
            )
            report.embedded += stored
            if stored == 0:
                break  # every record of the page changed since it was read: its writer embeds it
        report.remaining = self._store.count_missing(tenant, space)
        metrics.add_metric(name="RecordsReembedded", unit=MetricUnit.Count, value=report.embedded)
        now = self._clock.now()
        if report.remaining == 0 and state.may_switch(now, self._ttl):
            switched = self._save(
                tenant, state, lambda s: s.switched(now) if s.target_space == space else None
            )
            report.switched = switched is not None and switched.active_space == space
            if report.switched:
                metrics.add_metric(name="EmbeddingSpacesSwitched", unit=MetricUnit.Count, value=1)
                logger.info("tenant switched embedding space", extra={"space": space})
            self._queue(tenant, self._delay(self._ttl.total_seconds()), report)
            return report
        self._save(tenant, state, lambda s: _progress(s, space, report))
        if report.remaining:
            wait = 0 if report.embedded else RETRY_DELAY_S
        else:  # complete, but some function may still write the old space alone
            assert state.started_at is not None
            wait = self._delay((state.started_at + self._ttl - now).total_seconds())
        self._queue(tenant, wait, report)
        return report

    def _drop_retired(self, tenant: str, report: ReembedReport) -> EmbeddingState:
        """Drop the spaces nobody reads or writes any more. The state says so first (so a choice
        of the same space after this point starts a fill that will not be dropped under it)."""
        state = self._states.get_embedding_state(tenant) or EmbeddingState()
        due = state.due_for_drop(self._clock.now(), self._ttl)
        if not due:
            return state
        saved = self._save(
            tenant,
            state,
            lambda s: s.dropped(due) if s.due_for_drop(self._clock.now(), self._ttl) == due else None,
        )
        if saved is None:
            return self._states.get_embedding_state(tenant) or EmbeddingState()
        for space in due:
            removed = self._store.drop_space(tenant, space)
            report.dropped.append(space)
            logger.info(
                "retired embedding space dropped", extra={"space": space or "deployment", "vectors": removed}
            )
        return saved

    def _again_for_drops(self, tenant: str, state: EmbeddingState, report: ReembedReport) -> None:
        if not state.retiring:
            return
        first = min(state.retiring.values()) + self._ttl
        self._queue(tenant, self._delay((first - self._clock.now()).total_seconds()), report)

    def _save(
        self, tenant: str, read: EmbeddingState, change: Callable[[EmbeddingState], EmbeddingState | None]
    ) -> EmbeddingState | None:
        """Apply ``change`` (state -> new state, or None: not any more) with compare-and-set,
        re-reading on a conflict; the state stored, or None when the change no longer applies."""
        state = read
        for _ in range(_CAS_TRIES):
            moved = change(state)
            if moved is None:
                return None
            try:
                stored: EmbeddingState = self._states.put_embedding_state(tenant, moved, state.version)
            except ConflictError:
                state = self._states.get_embedding_state(tenant) or EmbeddingState()
                continue
            self._cache.remember_embedding(tenant, stored)
            return stored
        return None

    def _delay(self, seconds: float) -> int:
        return max(0, min(MAX_DELAY_S, math.ceil(seconds)))

    def _queue(self, tenant: str, delay_s: int, report: ReembedReport | None = None) -> None:
        self._jobs.send(
            [Job(key=ReembedJob(tenant_id=tenant).key, body=ReembedJob(tenant_id=tenant).model_dump_json())],
            delay_s=delay_s,
        )
        if report is not None:
            report.next_in_s = delay_s


def _progress(state: EmbeddingState, space: str, report: ReembedReport) -> EmbeddingState | None:
    """The fill's counters after a run (None: the tenant moved to another target meanwhile)."""
    if state.target_space != space:
        return None
    return state.model_copy(
        update={"embedded": state.embedded + report.embedded, "remaining": report.remaining}
    )
