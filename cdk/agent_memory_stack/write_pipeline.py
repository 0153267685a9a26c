"""The write pipeline: SQS FIFO queue -> writer function -> vector store, plus pending writes.

Every write of one (tenant, agent, grain) shares a message group, so one writer at a time
touches that slice (docs/decisions.md). High-throughput FIFO (deduplication and throughput per
message group) lets many agents' groups flow in parallel. The writer moves poison messages to the
FIFO dead-letter queue itself; the redrive policy (``max_receive_count``) bounds transient retries.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory.model.limits import MAX_MESSAGE_BYTES
from agent_memory_stack.bedrock import grant_invoke
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env
from agent_memory_stack.queues import consume, consumed_by, grant_send
from agent_memory_stack.tables import on_demand_table
from agent_memory_stack.vector_store import VectorStore


def fifo_queue(scope: Construct, construct_id: str, **props: object) -> sqs.Queue:
    """A high-throughput FIFO queue, encrypted, that refuses requests without TLS."""
    return sqs.Queue(
        scope,
        construct_id,
        fifo=True,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        # SQS's maximum: a summary's write names every one of its children (`MAX_MESSAGE_BYTES`).
        max_message_size_bytes=MAX_MESSAGE_BYTES,
        **props,  # type: ignore[arg-type]
    )


class WritePipeline(Construct):
    """The write queue and its DLQ, the pending-writes table and the writer function."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig, store: VectorStore
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = fifo_queue(self, "DeadLetters", retention_period=Duration.days(14))
        self.queue = fifo_queue(
            self, "Queue", **consumed_by("Writer", self.dead_letters, config.max_receive_count)
        )
        # One item per accepted-but-not-stored record id (adapters/dynamodb_pending.py). Marks
        # expire within days by TTL: nothing here is worth keeping after the stack.
        self.pending = on_demand_table(self, "PendingWrites", "pk", "sk", ttl="expires_at")
        self.writer = store.build_function(
            self,
            "Writer",
            "Stores queued writes: embed, dedup against the nearest record, bulk index",
            {
                **self.queue_environment(),
                **self.pending_environment(),
                **settings_env(
                    dead_letter_queue_url=self.dead_letters.queue_url,
                    max_receive_count=config.max_receive_count,
                    # a near duplicate is merged only within one local day (writing/rules/dedup.py)
                    timezone=config.timezone,
                ),
            },
        )
        consume(
            self,
            "WriterSource",
            self.writer,
            self.queue,
            batch_size=10,
            max_concurrency=config.writer_max_concurrency,
        )
        grant_send(self.dead_letters, self.writer)  # poison messages, with their reason
        self.pending.grant(self.writer, "dynamodb:BatchWriteItem")  # done: the tombstone
        store.grant_data_access(self.writer)
        # The writer embeds every record it stores (the API only queues): its role must reach
        # the embedding model, or every write would fail five times and be dead-lettered.
        grant_invoke(self.writer, self, config.embedding_model_id)

    def queue_environment(self) -> dict[str, str]:
        return settings_env(queue="sqs", write_queue_url=self.queue.queue_url)

    def pending_environment(self) -> dict[str, str]:
        return settings_env(pending="dynamodb", pending_table=self.pending.table_name)

    def grant_enqueue(self, function: lambda_.IFunction) -> None:
        """A producer of writes: the API, and the summarize worker for summaries."""
        grant_send(self.queue, function)

    def grant_pending(self, function: lambda_.IFunction) -> None:
        """The API: mark pending (BatchGet + BatchWrite), hold a mark once its message is queued
        (a conditional UpdateItem), undo (BatchWrite), count (Query)."""
        self.pending.grant(
            function,
            "dynamodb:BatchGetItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:UpdateItem",
            "dynamodb:Query",
        )

    def grant_mark_pending(self, function: lambda_.IFunction) -> None:
        """A function that marks work pending but never counts it: the pattern dispatcher (a mark
        per job it queues, held once queued; undone if the send fails) and the summarize worker
        (its job's mark done, a mark per pattern it queues, held once queued): BatchGet +
        BatchWrite + UpdateItem, no Query."""
        self.pending.grant(
            function, "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem"
        )
