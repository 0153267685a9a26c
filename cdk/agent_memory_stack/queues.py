"""Queue grants that are exactly what the code and Lambda's poller call.

CDK's ``grant_send_messages`` adds ``GetQueueAttributes`` and ``GetQueueUrl``, and
``SqsEventSource`` grants ``grant_consume_messages`` (``ChangeMessageVisibility``,
``GetQueueUrl`` among them): the functions call neither, and the deployed-configuration tests
fail on a grant no path uses. The queues are SSE-SQS encrypted, so no KMS grant is needed.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory_stack.function_factory import FUNCTIONS
from agent_memory_stack.nag import acknowledge

#: What Lambda's SQS poller calls with the function's role (Lambda developer guide, "Amazon SQS").
POLLER_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
#: AWS's guidance for SQS event sources: at least six times the function timeout, so a message
#: is not redelivered while a throttled or retried invocation still works on it.
VISIBILITY_FACTOR = 6


def parking_queue(scope: Construct, construct_id: str, *, parks: str | None = None) -> sqs.Queue:
    """A standard queue that holds what failed for 14 days (SSE, TLS only), to inspect and replay.

    ``parks`` says what lands here when it is not an SQS redrive target (cdk-nag's SQS3 looks
    for a redrive policy pointing at every dead-letter queue).
    """
    queue = sqs.Queue(
        scope,
        construct_id,
        retention_period=Duration.days(14),
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
    )
    if parks is not None:
        acknowledge(queue, "SQS3", f"this queue is itself where failures are parked: {parks}")
    return queue


def consumed_by(consumer: str, dead_letters: sqs.IQueue, max_receive_count: int) -> dict[str, object]:
    """The props of a queue that ``consumer`` (a function of `FUNCTIONS`) takes its messages from:
    invisible for `VISIBILITY_FACTOR` of its timeouts, kept 4 days, parked in ``dead_letters``
    after ``max_receive_count`` receipts."""
    return {
        "visibility_timeout": Duration.seconds(FUNCTIONS[consumer].timeout.to_seconds() * VISIBILITY_FACTOR),
        "retention_period": Duration.days(4),
        "dead_letter_queue": sqs.DeadLetterQueue(max_receive_count=max_receive_count, queue=dead_letters),
    }


def job_queue(
    scope: Construct, construct_id: str, consumer: str, dead_letters: sqs.IQueue, max_receive_count: int
) -> sqs.Queue:
    """A standard queue of jobs for ``consumer`` (`consumed_by`), SSE-SQS encrypted, TLS only."""
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        **consumed_by(consumer, dead_letters, max_receive_count),  # type: ignore[arg-type]
    )


def grant_send(queue: sqs.IQueue, function: lambda_.IFunction) -> None:
    """``SendMessage`` (``SendMessageBatch`` included) on this queue, nothing else."""
    function.add_to_role_policy(iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queue.queue_arn]))


def consume(
    scope: Construct,
    construct_id: str,
    function: lambda_.Function,
    queue: sqs.IQueue,
    *,
    batch_size: int,
    max_concurrency: int,
) -> lambda_.EventSourceMapping:
    """Feed ``queue`` to ``function`` in batches, reporting per-message failures."""
    function.add_to_role_policy(
        iam.PolicyStatement(actions=list(POLLER_ACTIONS), resources=[queue.queue_arn])
    )
    return lambda_.EventSourceMapping(
        scope,
        construct_id,
        target=function,
        event_source_arn=queue.queue_arn,
        batch_size=batch_size,
        report_batch_item_failures=True,
        max_concurrency=max_concurrency,
    )
