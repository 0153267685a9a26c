"""The grain cascade: a dispatcher per schedule fans out one job per agent-period to a worker.

The dispatcher (``{"grain": ...}``, or ``{"grain", "period"}`` to re-run one) lists the agents with
activity in the closed period and sends one job each to the summarize queue (standard: jobs are
independent and idempotent; summaries have deterministic ids). The worker folds the children
with the summary model, embeds the summary, and enqueues it on the write FIFO queue, in the same
message group as every other write of that agent and grain.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory_stack.bedrock import grant_invoke
from agent_memory_stack.config import StackConfig
from agent_memory_stack.function_factory import FunctionFactory, FunctionSpec
from agent_memory_stack.queues import consume, grant_send, parking_queue
from agent_memory_stack.scheduling import Scheduling, schedules_of
from agent_memory_stack.vector_store import VectorStore
from agent_memory_stack.write_pipeline import VISIBILITY_FACTOR, WritePipeline

WORKER_TIMEOUT = Duration.minutes(5)
DISPATCH_TIMEOUT = Duration.minutes(5)
#: Jobs per worker invocation: each may take a model call of tens of seconds.
WORKER_BATCH = 5


class Summarization(Construct):
    """Summarize queue and DLQ, dispatcher and worker functions, one schedule per grain."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        factory: FunctionFactory,
        store: VectorStore,
        writes: WritePipeline,
        scheduling: Scheduling,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = parking_queue(self, "DeadLetters")
        self.queue = sqs.Queue(
            self,
            "Jobs",
            visibility_timeout=Duration.seconds(WORKER_TIMEOUT.to_seconds() * VISIBILITY_FACTOR),
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=3, queue=self.dead_letters),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        timezone = {"AGENT_MEMORY_TIMEZONE": config.timezone}
        self.dispatcher = factory.build(
            self,
            FunctionSpec(
                name="SummarizeDispatch",
                handler="agent_memory.handlers.summarize_dispatch.handler",
                description="Finds agents with activity in a closed period and queues one summarize job each",
                memory_mb=512,
                timeout=DISPATCH_TIMEOUT,
                environment={
                    **store.environment(),
                    **timezone,
                    "AGENT_MEMORY_SUMMARIZE_QUEUE_URL": self.queue.queue_url,
                },
            ),
        )
        grant_send(self.queue, self.dispatcher)
        store.grant_data_access(self.dispatcher)

        self.worker = factory.build(
            self,
            FunctionSpec(
                name="SummarizeWorker",
                handler="agent_memory.handlers.summarize_worker.handler",
                description="Folds one agent-period into a summary with Bedrock and queues its write",
                memory_mb=1024,
                timeout=WORKER_TIMEOUT,
                environment={
                    **store.environment(),
                    **writes.queue_environment(),
                    **timezone,
                    # A job may queue the backfill of a missing child period.
                    "AGENT_MEMORY_SUMMARIZE_QUEUE_URL": self.queue.queue_url,
                    "AGENT_MEMORY_SUMMARIZER": "bedrock",
                    "AGENT_MEMORY_BEDROCK_SUMMARY_MODEL_ID": config.summary_model_id,
                },
            ),
        )
        consume(
            self,
            "WorkerSource",
            self.worker,
            self.queue,
            batch_size=WORKER_BATCH,
            max_concurrency=config.summarizer_max_concurrency,
        )
        writes.grant_enqueue(self.worker)
        grant_send(self.queue, self.worker)
        store.grant_data_access(self.worker)
        # the summary model only: the writer embeds the summaries it stores
        grant_invoke(self.worker, self, config.summary_model_id)

        for schedule in schedules_of("summarize_dispatch"):
            scheduling.add(schedule, self.dispatcher)
