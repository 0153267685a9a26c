"""The cascade's dispatcher: invoked per grain by EventBridge Scheduler (or by hand).

Events: ``{"grain": "daily"}`` summarizes the period of that grain that has just closed (in the
configured timezone), measured from ``scheduled_time`` when the schedule passes it
(``"<aws.scheduler.scheduled-time>"``), so a delayed or retried invocation still takes the right
period; ``{"grain": "daily", "period": "2026-11-21"}`` one period; ``{"grain": ..., "from":
"2026-01-01", "to": "2026-03-31"}`` every period of the grain holding a day of that range (a
backfill). It queues one job per agent with anything to fold and returns how many.
``{"job": "patterns"}`` queues a pattern-recognition job for every agent with memory in the
pattern window (`derived.pattern_recognition`), ``{"job": "profiles"}`` a profile job for every
agent with memory in the profile window (`derived.person_profiles`), on the same job queue and workers.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.model.jobs import AgentJobsEvent, DispatchEvent
from agent_memory.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if "job" in event:
        agent_jobs = AgentJobsEvent.model_validate(event)
        patterns = agent_jobs.job == "patterns"
        dispatch = container.pattern_dispatch() if patterns else container.profile_dispatch()
        return {"job": agent_jobs.job, "jobs_queued": dispatch.dispatch(at=agent_jobs.scheduled_time)}
    request = DispatchEvent.model_validate(event)
    response = container.dispatch_service().dispatch(request, at=request.scheduled_time)
    return response.as_dict()
