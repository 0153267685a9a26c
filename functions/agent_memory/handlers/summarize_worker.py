"""The cascade's worker: consumes summarize jobs (and the per-agent jobs: pattern recognition,
``{"job": "patterns"}``, and profiles, ``{"job": "profiles"}``; the per-tenant re-embedding,
``{"job": "reembed"}``; and exports, ``{"job": "export"}``) from the SQS standard queue.

Powertools' `BatchProcessor` reports each failed job as a batch item failure, so only that job
comes back (after the queue's visibility timeout) while the rest of the batch is done; the
queue's redrive policy moves a job that keeps failing to its dead-letter queue. A job is
idempotent: redelivered, it finds its summary current and does nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.derived.rules.patterns import PatternJob, PatternReport
from agent_memory.derived.rules.profiles import ProfileJob, ProfileReport
from agent_memory.errors import ProviderKeyRejectedError
from agent_memory.governance.rules.export_jobs import ExportJob
from agent_memory.model.jobs import SummarizeJob
from agent_memory.observability import logger, metrics, tracer
from agent_memory.tenancy.rules.embedding_spaces import ReembedJob

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> str:
    body = json.loads(record.body)
    try:
        return _run(body)
    except ProviderKeyRejectedError:
        # The job fails (retried, then dead-lettered); its tenant's admin is told where it looks.
        if isinstance(body, dict) and isinstance(body.get("tenant_id"), str):
            parts = [body.get(name) for name in ("agent_id", "grain", "time_key")]
            job = ":".join(str(p) for p in (body.get("job", "summarize"), *parts) if p)
            container.tenant_settings_service().record_key_rejected(body["tenant_id"], job)
        raise


def _export(job: ExportJob) -> str:
    state = container.export_service().run(job)
    return f"export: {'nothing to do' if state is None else state.status}"


def _reembed(job: ReembedJob) -> str:
    done = container.reembed_service().run(job)
    return f"reembed: {done.embedded} embedded, {done.remaining} remaining, switched={done.switched}"


def _derived(name: str, report: PatternReport | ProfileReport) -> str:
    return f"{name}: {report.made} made, {report.refreshed} refreshed, {report.dropped} dropped"


def _summarize(job: SummarizeJob) -> str:
    return container.summarize_service().run(job).outcome.value


_Job = ExportJob | ReembedJob | PatternJob | ProfileJob | SummarizeJob
#: Each job by its ``job`` field: the message's model, and what runs it and says what it did.
_JOBS: dict[str, tuple[type[_Job], Callable[[Any], str]]] = {
    "export": (ExportJob, _export),
    "reembed": (ReembedJob, _reembed),
    "patterns": (PatternJob, lambda job: _derived("patterns", container.pattern_service().run(job))),
    "profiles": (ProfileJob, lambda job: _derived("profiles", container.profile_service().run(job))),
}


def _run(body: object) -> str:
    """Run the job ``body`` holds: one of `_JOBS`, or else a summarize job."""
    kind = body.get("job") if isinstance(body, dict) else None
    model, run = _JOBS.get(kind if isinstance(kind, str) else "", (SummarizeJob, _summarize))
    job = model.model_validate(body)
    logger.append_keys(job=job.key)
    return run(job)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
