"""Dispatching the cascade: which agents get a summarize job for which period.

The dispatcher is cheap and runs once per period: for each period a request names, it lists every
(tenant, agent) with anything to fold there and queues one `SummarizeJob` per agent-period. The
work itself (loading, summarizing, writing) happens in the workers, in parallel.

"Anything to fold" is looked for at *every* grain below the summary's, not only its children's:
an agent whose weekly summaries are missing (a failed run) but whose days have working memory
still gets its monthly job, and the worker heals the weeks. Each grain is looked up over the
period's covered span (`cascade.rules.periods.covered_span`), in pages, and an agent found at several
grains is queued once.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from agent_memory.cascade.rules.periods import covered_span, finer_grains
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import DispatchReport, SummarizeJob, SummarizeRequest
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AgentRef, AgentScan, Clock, Job, JobQueue, PeriodScan

#: Jobs handed to the queue per send (the SQS adapter sends them 10 per batch call).
SEND_BATCH = 100


class DispatchService:
    def __init__(
        self, store: AgentScan, jobs: JobQueue, clock: Clock, timezone: str = "UTC", page_size: int = 500
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._clock = clock
        self._tz = timezone
        self._page_size = page_size

    def dispatch(
        self, request: SummarizeRequest, at: datetime | None = None, tenant_id: str | None = None
    ) -> DispatchReport:
        """Queue a job per agent for every period ``request`` names (of ``tenant_id``'s agents
        only, if given: a tenant's admin never queues, nor counts, another tenant's jobs).

        ``at`` is the instant a schedule fired (default now): it decides which period is due
        when the request names none.
        """
        grain = Grain(request.grain)
        keys = request.time_keys(at or self._clock.now(), self._tz)
        scheduled = request.period is None and request.from_ is None
        queued = sum(
            self.dispatch_period(grain, key, "schedule" if scheduled else "backfill", tenant_id)
            for key in keys
        )
        metrics.add_metric(name="SummarizeJobsQueued", unit=MetricUnit.Count, value=queued)
        logger.info(
            "summarize dispatched",
            extra={"grain": grain.value, "periods": len(keys), "first": keys[0], "jobs": queued},
        )
        return DispatchReport(grain=grain, periods=keys, jobs_queued=queued)

    def dispatch_period(
        self, grain: Grain, key: str, reason: str = "schedule", tenant_id: str | None = None
    ) -> int:
        """Queue one job for each agent (of ``tenant_id``) with anything to fold in ``grain``'s ``key``."""
        batch: list[Job] = []
        queued = 0
        for agent in self.agents_for(grain, key, tenant_id):
            job = SummarizeJob(
                tenant_id=agent.tenant_id,
                agent_id=agent.agent_id,
                grain=grain,
                time_key=key,
                reason=reason,  # type: ignore[arg-type]
            )
            batch.append(Job.of(job))
            if len(batch) == SEND_BATCH:
                self._jobs.send(batch)
                queued += len(batch)
                batch = []
        if batch:
            self._jobs.send(batch)
            queued += len(batch)
        return queued

    def agents_for(self, grain: Grain, key: str, tenant_id: str | None = None) -> Iterator[AgentRef]:
        """Every agent (of ``tenant_id``) with live records of a finer grain in the period's
        span, each once."""
        start, end = covered_span(grain, key, self._tz)
        seen: set[tuple[str, str]] = set()
        for finer in finer_grains(grain):
            cursor: str | None = None
            while True:
                page = self._store.agents_with_records(
                    PeriodScan(
                        finer, start, end, cursor=cursor, page_size=self._page_size, tenant_id=tenant_id
                    )
                )
                for agent in page.agents:
                    ref = (agent.tenant_id, agent.agent_id)
                    if ref not in seen:
                        seen.add(ref)
                        yield agent
                cursor = page.next_cursor
                if cursor is None:
                    break
