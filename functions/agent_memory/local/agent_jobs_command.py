"""`agent-memory patterns run` and `agent-memory profiles run`: a per-agent job now, in this
process, and what it did.

The daily schedules (and ``POST /v1/admin/patterns``) queue one job per agent; these commands
run the same service on the same agents here, as `retention run` runs retention: for every
agent with memory in the job's window (``--tenant``: of that tenant only), or for one agent
(``--agent``; of every tenant that has memory of it in the window, unless ``--tenant`` names
one). Each prints the summed report (for patterns the admin route's fields; the ids written),
having worked the local write queue until the writes are stored, unless told not to wait. Runs
are idempotent: a run beside the scheduled one changes nothing it would not.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from agent_memory import container
from agent_memory.contract.v1_experience import PatternRunResponse
from agent_memory.derived.agent_job_dispatch import agents_with_memory
from agent_memory.derived.rules.patterns import PatternJob, PatternReport
from agent_memory.derived.rules.profiles import ProfileJob, ProfileReport
from agent_memory.local.worker import QueueWorker
from agent_memory.ports import AgentRef

#: How long to wait between looks at a write queue that holds only delayed or in-flight messages.
IDLE_WAIT_S = 0.2


def targets(tenant_id: str | None, agent_id: str | None, now: datetime, window_days: int) -> list[AgentRef]:
    """The agents to run: one named agent of a named tenant (whether or not it has memory in the
    window: what it stored may need dropping), else the window's agents, narrowed to the tenant
    and the agent given."""
    if tenant_id is not None and agent_id is not None:
        return [AgentRef(tenant_id, agent_id)]
    found = agents_with_memory(container.store(), now, timedelta(days=window_days), tenant_id)
    return [a for a in found if agent_id is None or a.agent_id == agent_id]


def run(
    tenant_id: str | None = None, agent_id: str | None = None, wait: bool = True, timeout_s: float = 3600.0
) -> dict[str, Any]:
    """Recognise the patterns of ``targets``; with ``wait``, store what was queued before returning."""
    report = PatternReport()
    service = container.pattern_service()
    window = container.current().pattern_rules.window_days
    for agent in targets(tenant_id, agent_id, container.clock().now(), window):
        job = PatternJob(tenant_id=agent.tenant_id, agent_id=agent.agent_id, reason="admin")
        report.add(service.run(job))
    result: dict[str, Any] = {**PatternRunResponse.of(report).model_dump(), "patterns": report.patterns}
    if wait:
        result["pending"] = store_writes(timeout_s)
    return result


def run_profiles(
    tenant_id: str | None = None, agent_id: str | None = None, wait: bool = True, timeout_s: float = 3600.0
) -> dict[str, Any]:
    """Make the profiles of ``targets``; with ``wait``, store what was queued before returning."""
    report = ProfileReport()
    service = container.profile_service()
    window = container.current().profile_rules.window_days
    for agent in targets(tenant_id, agent_id, container.clock().now(), window):
        report.add(
            service.run(ProfileJob(tenant_id=agent.tenant_id, agent_id=agent.agent_id, reason="admin"))
        )
    result: dict[str, Any] = asdict(report)
    if wait:
        result["pending"] = store_writes(timeout_s)
    return result


def store_writes(timeout_s: float = 3600.0) -> int:
    """Work the local write queue until it is empty; what is left in it (0 unless the deadline
    passed). Another queue (SQS) is the deployed writer's to work: nothing is waited for."""
    writes = container.local_writes()
    if writes is None:
        return 0
    worker = QueueWorker(writes, poll_s=0.0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if worker.drain_once():
            continue
        if writes.depth() == 0:
            break
        time.sleep(IDLE_WAIT_S)  # retries waiting out their delay, or another process's work
    return writes.depth()
