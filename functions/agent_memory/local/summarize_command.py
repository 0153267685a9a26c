"""`agent-memory summarize`: run the cascade now, for one period or a range (a history import).

It dispatches exactly as the scheduler and the admin route do (one job per agent-period on the
local job queue), then, unless told not to wait, works both local queues in this process until
they are empty: the summarize jobs, and the summary writes they queue. A server running on the
same data directory may take some of the work meanwhile; the queues never hand one message to
two consumers, and waiting ends when both are empty.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent_memory import container
from agent_memory.adapters.local_jobs import JOBS_QUEUE_ARN
from agent_memory.errors import ConfigurationError
from agent_memory.handlers import summarize_worker
from agent_memory.local.worker import QueueWorker
from agent_memory.model.jobs import SummarizeRequest

if TYPE_CHECKING:
    from agent_memory.adapters.local_queue import LocalFifoQueue

#: How long to wait between looks at queues that hold only delayed or in-flight messages.
IDLE_WAIT_S = 0.2


def local_queues() -> tuple[LocalFifoQueue, LocalFifoQueue]:
    """(jobs, writes): the two local queues, or a clear error when this is not the local runtime."""
    jobs, writes = container.local_job_fifo(), container.local_writes()
    if jobs is None or writes is None:
        raise ConfigurationError("`summarize` runs the local queues; in AWS, POST /v1/admin/summarize")
    return jobs, writes


def run(request: SummarizeRequest, wait: bool = True, timeout_s: float = 3600.0) -> dict[str, Any]:
    """Dispatch ``request``; with ``wait``, work the queues until both are empty."""
    jobs, writes = local_queues()
    dead_before = len(jobs.dead_letters())
    result: dict[str, Any] = container.dispatch_service().dispatch(request).as_dict()
    if not wait:
        return result
    drain(jobs, writes, timeout_s)
    result["failed_jobs"] = len(jobs.dead_letters()) - dead_before
    result["pending"] = jobs.depth() + writes.depth()
    return result


def drain(jobs: LocalFifoQueue, writes: LocalFifoQueue, timeout_s: float = 3600.0) -> None:
    """Run jobs and writes (writes first: a job may wait for one) until both queues are empty."""
    job_worker = QueueWorker(
        jobs, poll_s=0.0, handler=summarize_worker.handler, name="summarize-worker", queue_arn=JOBS_QUEUE_ARN
    )
    write_worker = QueueWorker(writes, poll_s=0.0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if write_worker.drain_once() or job_worker.drain_once():
            continue
        if jobs.depth() == 0 and writes.depth() == 0:
            return
        time.sleep(IDLE_WAIT_S)  # retries waiting out their delay, or another process's work
