"""One contract for the summarize job queue, on every adapter: the local queue (SQLite) and SQS
standard queues (moto). Jobs are at-least-once and unordered; what every adapter promises is
that each job sent arrives, however many are sent at once, and that nothing deduplicates them
(a period re-run right after the last must run again)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.ports import Job, JobQueue


@dataclass
class Jobs:
    queue: JobQueue
    receive_all: Callable[[], list[str]]  # the bodies of every job that arrives, each taken once


def _local(tmp_path: Path) -> Iterator[Jobs]:
    from agent_memory.adapters.local_jobs import LocalJobQueue
    from agent_memory.adapters.local_queue import LocalFifoQueue

    fifo = LocalFifoQueue(tmp_path / "jobs.db")

    def receive_all() -> list[str]:
        bodies: list[str] = []
        while batch := fifo.receive(10):
            bodies += [m.body for m in batch]
            fifo.ack(m.receipt_handle for m in batch)
        return bodies

    yield Jobs(LocalJobQueue(fifo), receive_all)


def _sqs() -> Iterator[Jobs]:
    from agent_memory.adapters.sqs_jobs import SqsJobQueue

    with mock_aws():
        client: Any = boto3.client("sqs", region_name="us-east-1")
        url = client.create_queue(QueueName="summarize")["QueueUrl"]

        def receive_all() -> list[str]:
            bodies: list[str] = []
            while got := client.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
                bodies += [m["Body"] for m in got]
                entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
                client.delete_message_batch(QueueUrl=url, Entries=entries)
            return bodies

        yield Jobs(SqsJobQueue(url, client=client), receive_all)


@pytest.fixture(params=["local", "sqs"])
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Jobs]:
    yield from (_local(tmp_path) if request.param == "local" else _sqs())


def test_every_job_sent_arrives_however_many_are_sent_at_once(jobs: Jobs) -> None:
    # GIVEN
    sent = [Job(f"t:a:daily:2026-11-{i:02d}", f'{{"n":{i}}}') for i in range(1, 24)]
    jobs.queue.send(sent)
    # WHEN / THEN
    assert sorted(jobs.receive_all()) == sorted(j.body for j in sent)


def test_the_same_job_sent_twice_arrives_twice(jobs: Jobs) -> None:
    # GIVEN
    job = Job("t:a:daily:2026-11-20", '{"x":1}')
    jobs.queue.send([job])
    jobs.queue.send([job])
    # WHEN / THEN
    assert jobs.receive_all() == [job.body, job.body]


def test_sending_nothing_is_nothing(jobs: Jobs) -> None:
    # GIVEN
    jobs.queue.send([])
    # WHEN / THEN
    assert jobs.receive_all() == []
