"""Per-agent background jobs (pattern recognition, profiles): queued for every agent with
recent memory by a schedule, or for one agent by an admin.

Each job holds a pending mark of its agent until it has run, so a caller that waits for the
agent's pending writes (``wait_until_stored``) waits for the job too, and then for its writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Literal

from agent_memory.errors import DependencyError
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import AgentJobBase
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AgentRef,
    AgentScan,
    Clock,
    Job,
    JobQueue,
    PendingWrites,
    PeriodScan,
)
from agent_memory.writing.write import hold

#: Jobs handed to the queue per send.
SEND_BATCH = 100

Reason = Literal["schedule", "admin"]
#: The per-agent jobs.
AgentJob = AgentJobBase


#: The job a dispatch queues (the class `PatternJob` or `ProfileJob`), called with its agent's
#: ``tenant_id`` and ``agent_id``, its ``reason`` and its ``pending_id``.
JobFactory = Callable[..., AgentJob]


class AgentJobDispatch:
    """Queues one ``name`` job per agent with working memory in the last ``window_days`` (the
    schedule, or an admin for its tenant), or for one agent."""

    def __init__(
        self,
        name: str,
        store: AgentScan,
        jobs: JobQueue,
        pending: PendingWrites,
        clock: Clock,
        window_days: int,
        make_job: JobFactory,
    ) -> None:
        self._name = name
        self._store = store
        self._jobs = jobs
        self._pending = pending
        self._clock = clock
        self._window = timedelta(days=window_days)
        self._make_job = make_job

    def queue_agent(self, tenant_id: str, agent_id: str, reason: Reason) -> int:
        self._send([self._job(tenant_id, agent_id, reason)])
        return 1

    def dispatch(self, at: datetime | None = None, tenant_id: str | None = None) -> int:
        now = at or self._clock.now()
        reason: Reason = "schedule" if tenant_id is None else "admin"
        batch: list[AgentJob] = []
        queued = 0
        for agent in agents_with_memory(self._store, now, self._window, tenant_id):
            batch.append(self._job(agent.tenant_id, agent.agent_id, reason))
            if len(batch) == SEND_BATCH:
                self._send(batch)
                queued, batch = queued + len(batch), []
        if batch:
            self._send(batch)
            queued += len(batch)
        metrics.add_metric(name="AgentJobsQueued", unit=MetricUnit.Count, value=queued)
        logger.info("agent jobs dispatched", extra={"job": self._name, "jobs": queued})
        return queued

    def _job(self, tenant_id: str, agent_id: str, reason: Reason) -> AgentJob:
        pending_id = f"job_{uuid.uuid4().hex}"
        return self._make_job(tenant_id=tenant_id, agent_id=agent_id, reason=reason, pending_id=pending_id)

    def _send(self, jobs: Sequence[AgentJob]) -> None:
        for job in jobs:
            self._pending.add(job.tenant_id, job.agent_id, [job.pending_id or ""])
        try:
            self._jobs.send([Job(key=j.key, body=j.model_dump_json()) for j in jobs])
        except DependencyError:
            for job in jobs:
                self._pending.discard(job.tenant_id, job.agent_id, [job.pending_id or ""])
            raise
        for job in jobs:  # queued: the marks hold past their lease until the job clears them
            hold(self._pending, job.tenant_id, job.agent_id, [job.pending_id or ""])


def agents_with_memory(
    store: AgentScan, now: datetime, window: timedelta, tenant_id: str | None = None
) -> Iterator[AgentRef]:
    """Every (tenant, agent) with working memory in the last ``window`` (of ``tenant_id`` only,
    if given), page by page: whom a per-agent job runs for."""
    cursor: str | None = None
    while True:
        page = store.agents_with_records(
            PeriodScan(Grain.WORKING, now - window, now, cursor=cursor, tenant_id=tenant_id)
        )
        yield from page.agents
        cursor = page.next_cursor
        if cursor is None:
            return
