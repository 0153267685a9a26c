"""The grain cascade: a dispatcher per schedule fans out one job per agent-period to a worker.

The dispatcher (``{"grain": ...}``, or ``{"grain", "period"}`` to re-run one) lists the agents with
activity in the closed period and sends one job each to the summarize queue (standard: jobs are
independent and idempotent; summaries have deterministic ids). The worker folds the children
with the summary model and enqueues the summary on the write FIFO queue, in the same message
group as every other write of that agent and grain (the writer embeds it).

Pattern recognition (``{"job": "patterns"}``, its own schedule) runs on the same queue and
functions: the dispatcher queues one job per agent with memory in the window and marks each
pending (the pending-writes table), the worker embeds the agent's experiences to cluster them
(the embedding model), states each pattern with the summary model, queues it on the write queue
with a pending mark, and marks its job done.
"""

from __future__ import annotations

from constructs import Construct

from agent_memory_stack.bedrock import grant_invoke
from agent_memory_stack.environment import settings_env
from agent_memory_stack.parts import StackParts
from agent_memory_stack.queues import consume, grant_send, job_queue, parking_queue
from agent_memory_stack.scheduling import schedules_of

#: Jobs per worker invocation: each may take a model call of tens of seconds.
WORKER_BATCH = 5


class Summarization(Construct):
    """Summarize queue and DLQ, dispatcher and worker functions, one schedule per grain."""

    def __init__(self, scope: Construct, construct_id: str, parts: StackParts) -> None:
        super().__init__(scope, construct_id)
        config, store, writes = parts.config, parts.store, parts.writes
        self.dead_letters = parking_queue(self, "DeadLetters")
        self.queue = job_queue(self, "Jobs", "SummarizeWorker", self.dead_letters, 3)
        self.dispatcher = store.build_function(
            self,
            "SummarizeDispatch",
            "Queues a summarize job per agent with activity in a closed period, or a pattern job per agent",
            {
                **settings_env(timezone=config.timezone, summarize_queue_url=self.queue.queue_url),
                # a pattern job holds a pending mark of its agent until it has run
                **writes.pending_environment(),
            },
        )
        grant_send(self.queue, self.dispatcher)
        store.grant_data_access(self.dispatcher, read_only=True)  # it only finds who has memory
        writes.grant_mark_pending(self.dispatcher)

        self.worker = store.build_function(
            self,
            "SummarizeWorker",
            "Folds one agent-period into a summary, or recognises an agent's patterns, and queues the writes",
            {
                **writes.queue_environment(),
                # a pattern job marks its job done and each pattern it queues pending
                **writes.pending_environment(),
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
        writes.grant_mark_pending(self.worker)
        grant_send(self.queue, self.worker)
        # The writer hides a summary, pattern or profile whose source was forgotten before its put
        # and queues its re-make here, so a forget racing a re-make leaves no day without one.
        for variable, value in settings_env(summarize_queue_url=self.queue.queue_url).items():
            writes.writer.add_environment(variable, value)
        grant_send(self.queue, writes.writer)
        store.grant_data_access(self.worker)
        # the summary model (summaries and patterns' statements; the writer embeds what it stores)
        grant_invoke(self.worker, self, config.summary_model_id)
        # a pattern job embeds the agent's experiences to cluster them
        grant_invoke(self.worker, self, config.embedding_model_id)

        for schedule in schedules_of("summarize_dispatch"):
            parts.scheduling.add(schedule, self.dispatcher)
