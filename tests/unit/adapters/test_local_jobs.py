"""The local job queue: SQS-standard behaviour on the local FIFO queue."""

from __future__ import annotations

from pathlib import Path

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.ports import Job


def test_a_job_sent_twice_runs_twice_like_on_a_standard_queue(tmp_path: Path) -> None:
    # GIVEN the same job sent twice in a row (a period re-run right after the last)
    queue = LocalFifoQueue(tmp_path / "jobs.db")
    jobs = LocalJobQueue(queue)
    jobs.send([Job("t:a:daily:2026-11-20", '{"x":1}')])
    jobs.send([Job("t:a:daily:2026-11-20", '{"x":1}')])

    # WHEN / THEN both are queued (no deduplication), one after the other: same key, same group
    first = queue.receive(10)
    assert [m.body for m in first] == ['{"x":1}', '{"x":1}']
    assert {m.group_id for m in first} == {"t:a:daily:2026-11-20"}


def test_a_delayed_job_waits_its_time_without_holding_back_the_jobs_before_it(tmp_path: Path) -> None:
    # GIVEN a job, and the same job delayed by a minute
    now = [1000.0]
    queue = LocalFifoQueue(tmp_path / "jobs.db", clock=lambda: now[0])
    jobs = LocalJobQueue(queue)
    jobs.send([Job("t:reembed", '{"n":1}')])
    jobs.send([Job("t:reembed", '{"n":2}')], delay_s=60)
    # WHEN the queue is read at once, then after the delay
    received = queue.receive(10)
    queue.ack(m.receipt_handle for m in received)
    at_once = [m.body for m in received]
    now[0] += 61
    later = [m.body for m in queue.receive(10)]
    # THEN the first runs at once and the delayed one only after its minute
    assert (at_once, later) == (['{"n":1}'], ['{"n":2}'])


def test_jobs_of_different_periods_do_not_wait_for_each_other(tmp_path: Path) -> None:
    # GIVEN
    queue = LocalFifoQueue(tmp_path / "jobs.db")
    LocalJobQueue(queue).send([Job("t:a:daily:1", "a"), Job("t:a:daily:1", "b"), Job("t:a:daily:2", "c")])

    batch = queue.receive(1)
    # WHEN / THEN
    assert [m.body for m in batch] == ["a"]
    # while "a" is in flight, "b" (same period) waits but "c" (another period) is handed out
    assert [m.body for m in queue.receive(10)] == ["c"]
