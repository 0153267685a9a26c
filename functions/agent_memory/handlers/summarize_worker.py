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
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.domain.embedding_spaces import ReembedJob
from agent_memory.domain.export_jobs import ExportJob
from agent_memory.domain.patterns import PatternJob
from agent_memory.domain.profiles import ProfileJob
from agent_memory.domain.summary_jobs import SummarizeJob
from agent_memory.errors import ProviderKeyRejectedError
from agent_memory.observability import logger, metrics, tracer

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


def _run(body: object) -> str:
    if isinstance(body, dict) and body.get("job") == "export":
        export = ExportJob.model_validate(body)
        logger.append_keys(job=export.key)
        state = container.export_service().run(export)
        return f"export: {'nothing to do' if state is None else state.status}"
    if isinstance(body, dict) and body.get("job") == "reembed":
        reembed = ReembedJob.model_validate(body)
        logger.append_keys(job=reembed.key)
        done = container.reembed_service().run(reembed)
        return f"reembed: {done.embedded} embedded, {done.remaining} remaining, switched={done.switched}"
    if isinstance(body, dict) and body.get("job") == "patterns":
        patterns = PatternJob.model_validate(body)
        logger.append_keys(job=patterns.key)
        report = container.pattern_service().run(patterns)
        return f"patterns: {report.made} made, {report.refreshed} refreshed, {report.dropped} dropped"
    if isinstance(body, dict) and body.get("job") == "profiles":
        profiles = ProfileJob.model_validate(body)
        logger.append_keys(job=profiles.key)
        made = container.profile_service().run(profiles)
        return f"profiles: {made.made} made, {made.refreshed} refreshed, {made.dropped} dropped"
    job = SummarizeJob.model_validate(body)
    logger.append_keys(job=job.key)
    return container.summarize_service().run(job).outcome.value


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
