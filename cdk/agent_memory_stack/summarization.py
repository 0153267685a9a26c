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
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FUNCTIONS
from agent_memory_stack.parts import StackParts
from agent_memory_stack.queues import consume, grant_send, parking_queue
from agent_memory_stack.scheduling import schedules_of
from agent_memory_stack.write_pipeline import VISIBILITY_FACTOR

#: Jobs per worker invocation: each may take a model call of tens of seconds.
WORKER_BATCH = 5


class Summarization(Construct):
    """Summarize queue and DLQ, dispatcher and worker functions, one schedule per grain."""

    def __init__(self, scope: Construct, construct_id: str, parts: StackParts) -> None:
        super().__init__(scope, construct_id)
        config, store, writes = parts.config, parts.store, parts.writes
        self.dead_letters = parking_queue(self, "DeadLetters")
        self.queue = sqs.Queue(
            self,
            "Jobs",
            visibility_timeout=Duration.seconds(
                FUNCTIONS["SummarizeWorker"].timeout.to_seconds() * VISIBILITY_FACTOR
            ),
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=3, queue=self.dead_letters),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        self.dispatcher = store.build_function(
            self,
            "SummarizeDispatch",
            "Finds agents with activity in a closed period and queues one summarize job each",
            settings_env(timezone=config.timezone, summarize_queue_url=self.queue.queue_url),
        )
        grant_send(self.queue, self.dispatcher)
        store.grant_data_access(self.dispatcher)

        self.worker = store.build_function(
            self,
            "SummarizeWorker",
            "Folds one agent-period into a summary with Bedrock and queues its write",
            {
                **writes.queue_environment(),
                **settings_env(
                    timezone=config.timezone,
                    # A job may queue the backfill of a missing child period.
                    summarize_queue_url=self.queue.queue_url,
                    summarizer="bedrock",
                    bedrock_summary_model_id=config.summary_model_id,
                ),
            },
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
            parts.scheduling.add(schedule, self.dispatcher)
