"""The embedded FIFO queue behaves like SQS FIFO where the writer relies on it."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.parser.models import SqsModel
from tests.fakes import T0, SteppingClock

from agent_memory.adapters.local_queue import (
    MAX_RECEIVE,
    MAX_RECEIVES_REASON,
    LocalFifoQueue,
    ReceivedMessage,
    to_sqs_event,
)
from agent_memory.ports import QueueMessage


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def queue(tmp_path: Path, tick: SteppingClock) -> LocalFifoQueue:
    return LocalFifoQueue(tmp_path / "queue.db", max_receive_count=3, visibility_timeout_s=30, clock=tick)


def msg(group: str, n: int, body: str | None = None) -> QueueMessage:
    text = body if body is not None else f"{group}-{n}"
    return QueueMessage(group, hashlib.sha256(f"{group}/{n}/{text}".encode()).hexdigest(), text)


def bodies(batch: list[ReceivedMessage]) -> list[str]:
    return [m.body for m in batch]


# --- message groups ---------------------------------------------------------------------------


def test_messages_come_out_in_send_order_and_a_batch_may_hold_one_group_several_times(
    queue: LocalFifoQueue,
) -> None:
    # GIVEN two interleaved groups
    queue.send([msg("t:a:working", 1), msg("t:b:working", 1), msg("t:a:working", 2)])
    queue.send([msg("t:b:working", 2), msg("t:a:working", 3)])

    # WHEN one consumer asks for a full batch
    batch = queue.receive(10)

    # THEN it gets all five in send order, with rising sequence numbers and first deliveries
    assert bodies(batch) == [
        "t:a:working-1",
        "t:b:working-1",
        "t:a:working-2",
        "t:b:working-2",
        "t:a:working-3",
    ]
    assert [m.sequence_number for m in batch] == sorted(m.sequence_number for m in batch)
    assert {m.receive_count for m in batch} == {1}
    assert len({m.message_id for m in batch}) == 5


def test_no_later_message_of_a_group_is_handed_out_while_one_is_in_flight(queue: LocalFifoQueue) -> None:
    # GIVEN a group with two messages, the first one received
    queue.send([msg("g", 1), msg("g", 2)])
    first = queue.receive(1)
    assert bodies(first) == ["g-1"]

    # WHEN another consumer asks, THEN the group is blocked
    assert queue.receive(10) == []

    # WHEN the first is acked, THEN the second comes
    assert queue.ack([first[0].receipt_handle]) == 1
    assert bodies(queue.receive(10)) == ["g-2"]


def test_other_groups_keep_flowing_while_one_group_is_blocked(queue: LocalFifoQueue) -> None:
    # GIVEN group a's head in flight, and group b waiting behind a's second message
    queue.send([msg("a", 1), msg("a", 2), msg("b", 1), msg("b", 2)])
    assert bodies(queue.receive(1)) == ["a-1"]

    # WHEN another consumer receives, THEN it gets group b only, in order
    assert bodies(queue.receive(10)) == ["b-1", "b-2"]


def test_peek_shows_what_comes_next_without_receiving_it(queue: LocalFifoQueue) -> None:
    # GIVEN group a's head in flight, and messages of a and b waiting
    queue.send([msg("a", 1), msg("a", 2), msg("b", 1), msg("a", 3)])
    assert bodies(queue.receive(1)) == ["a-1"]

    # WHEN the consumer peeks, THEN it sees the waiting messages oldest first, those of the group
    # in flight too, and not the one in flight
    assert queue.peek(10) == ["a-2", "b-1", "a-3"]
    assert queue.peek(2) == ["a-2", "b-1"]
    assert queue.peek(0) == []
    # AND nothing was received: the next receive hands out what it would have
    assert bodies(queue.receive(10)) == ["b-1"]
    assert queue.depth() == 4


def test_receive_refuses_batches_beyond_its_limit(queue: LocalFifoQueue) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="max_messages"):
        queue.receive(MAX_RECEIVE + 1)
    with pytest.raises(ValueError, match="max_messages"):
        queue.receive(0)


# --- deduplication ----------------------------------------------------------------------------


def test_a_dedup_id_seen_within_the_window_is_dropped(queue: LocalFifoQueue, tick: SteppingClock) -> None:
    # GIVEN a message sent, and the same dedup id sent again in the same batch and later on
    queue.send([msg("g", 1), msg("g", 1)])
    tick.now += 299
    queue.send([msg("g", 1)])

    # THEN only one copy is queued
    assert queue.depth() == 1

    # WHEN the window (counted from the first send) has passed, THEN the id is accepted again
    tick.now += 2
    queue.send([msg("g", 1)])
    assert queue.depth() == 2


def test_dedup_survives_the_delivery_of_the_first_copy(queue: LocalFifoQueue, tick: SteppingClock) -> None:
    # GIVEN a message received and acked (a client retry arrives after the write was stored)
    queue.send([msg("g", 1)])
    queue.ack([m.receipt_handle for m in queue.receive()])
    tick.now += 60

    # WHEN the same write is sent again within the window, THEN nothing is queued
    queue.send([msg("g", 1)])
    assert queue.depth() == 0


def test_a_batch_send_is_all_or_nothing(queue: LocalFifoQueue) -> None:
    # GIVEN a batch whose last message cannot be stored
    broken = QueueMessage(None, "d3", "x")  # type: ignore[arg-type]

    # WHEN it is sent, THEN it fails and none of the batch is queued, nor its dedup ids burnt
    with pytest.raises(sqlite3.IntegrityError):
        queue.send([msg("g", 1), msg("g", 2), broken])
    assert queue.depth() == 0
    queue.send([msg("g", 1)])
    assert queue.depth() == 1


# --- redelivery and dead letters --------------------------------------------------------------


def test_a_nacked_message_is_redelivered_with_its_receive_count(queue: LocalFifoQueue) -> None:
    # GIVEN a received message that the consumer gives back
    queue.send([msg("g", 1), msg("g", 2)])
    (first,) = queue.receive(1)
    queue.nack([first.receipt_handle])

    # WHEN it is received again, THEN it is the same message, ahead of its group, delivered twice
    again = queue.receive(1)
    assert [(m.message_id, m.body, m.receive_count) for m in again] == [(first.message_id, "g-1", 2)]
    assert again[0].receipt_handle != first.receipt_handle
    assert again[0].first_received_at == first.first_received_at


def test_a_delayed_nack_keeps_the_group_blocked_until_the_delay_is_over(
    queue: LocalFifoQueue, tick: SteppingClock
) -> None:
    # GIVEN the head of a group nacked with a delay
    queue.send([msg("g", 1), msg("g", 2), msg("h", 1)])
    (head,) = queue.receive(1)
    queue.nack([head.receipt_handle], delay_s=10)

    # THEN neither it nor its successor comes out during the delay; other groups do
    tick.now += 9
    assert bodies(queue.receive(10)) == ["h-1"]

    # WHEN the delay is over, THEN the group resumes in order
    tick.now += 2
    assert bodies(queue.receive(10)) == ["g-1", "g-2"]


def test_a_message_nacked_at_max_receive_count_moves_to_the_dead_letters(
    queue: LocalFifoQueue, tick: SteppingClock
) -> None:
    # GIVEN a message that fails on each of its 3 deliveries
    queue.send([msg("g", 1), msg("g", 2)])
    for expected_count in (1, 2, 3):
        (m,) = queue.receive(1)
        assert (m.body, m.receive_count) == ("g-1", expected_count)
        queue.nack([m.receipt_handle])

    # WHEN / THEN it is a dead letter with its original group, dedup id and body, and the group moves on
    (dead,) = queue.dead_letters()
    assert (dead.id, dead.group_id, dead.dedup_id, dead.body) == (
        m.message_id,
        "g",
        msg("g", 1).dedup_id,
        "g-1",
    )
    assert (dead.reason, dead.receive_count, dead.failed_at) == (MAX_RECEIVES_REASON, 3, tick.now)
    assert bodies(queue.receive(10)) == ["g-2"]


def test_expired_visibility_makes_a_message_visible_again(queue: LocalFifoQueue, tick: SteppingClock) -> None:
    # GIVEN a consumer that received a batch and died
    queue.send([msg("g", 1), msg("g", 2)])
    lost = queue.receive(10)
    tick.now += 29
    assert queue.receive(10) == []

    # WHEN the visibility timeout passes, THEN the batch is delivered again, in order
    tick.now += 2
    again = queue.receive(10)
    assert [(m.body, m.receive_count) for m in again] == [("g-1", 2), ("g-2", 2)]

    # AND the dead consumer's late ack no longer deletes anything
    assert queue.ack([m.receipt_handle for m in lost]) == 0
    assert queue.depth() == 2


def test_a_message_whose_last_delivery_expires_becomes_a_dead_letter(
    queue: LocalFifoQueue, tick: SteppingClock
) -> None:
    # GIVEN a message received max_receive_count times, never settled
    queue.send([msg("g", 1), msg("g", 2)])
    for _ in range(3):
        assert bodies(queue.receive(1)) == ["g-1"]
        tick.now += 31

    # WHEN a consumer receives again, THEN the spent message is dead-lettered and the group flows
    assert bodies(queue.receive(10)) == ["g-2"]
    assert [(d.body, d.reason, d.receive_count) for d in queue.dead_letters()] == [
        ("g-1", MAX_RECEIVES_REASON, 3)
    ]


def test_the_writer_dead_letters_a_poison_message_with_its_reason(queue: LocalFifoQueue) -> None:
    # WHEN the writer puts an unparseable message aside
    poison = QueueMessage("t:a:working", "f" * 64, "{not json")
    queue.put(poison, "body is not a WriteCommand: Invalid JSON")

    # THEN it is listed with that reason and its original ids
    (dead,) = queue.dead_letters()
    assert (dead.group_id, dead.dedup_id, dead.body) == ("t:a:working", "f" * 64, "{not json")
    assert dead.reason == "body is not a WriteCommand: Invalid JSON"
    assert dead.receive_count == 0


def test_redrive_moves_dead_letters_to_the_tail_of_their_groups_despite_the_dedup_window(
    queue: LocalFifoQueue, tick: SteppingClock
) -> None:
    # GIVEN two dead letters of group g (within the dedup window) and a newer message of g
    queue.put(msg("g", 1), "poison")
    queue.put(msg("h", 1), "poison")
    queue.send([msg("g", 2)])
    tick.now += 5

    # WHEN only g's dead letter is redriven
    g_dead = [d.id for d in queue.dead_letters() if d.group_id == "g"]
    assert queue.redrive(g_dead) == 1

    # THEN it comes back after g's newer message, with a fresh receive count; h's stays dead
    batch = queue.receive(10)
    assert [(m.body, m.receive_count) for m in batch] == [("g-2", 1), ("g-1", 1)]
    assert batch[1].sent_at == tick.now
    assert [d.group_id for d in queue.dead_letters()] == ["h"]

    # AND redrive() without ids moves the rest
    assert queue.redrive() == 1
    assert queue.dead_letters() == []


# --- sharing one file -------------------------------------------------------------------------


def test_threads_share_the_queue_without_losing_duplicating_or_reordering(tmp_path: Path) -> None:
    # GIVEN 4 producer threads and 3 consumer threads on one queue file (two queue objects)
    producer_side = LocalFifoQueue(tmp_path / "q.db")
    consumer_side = LocalFifoQueue(tmp_path / "q.db")
    groups = ["g0", "g1", "g2"]
    batches = {
        p: [[msg(groups[(p + k) % 3], p * 100 + i + k) for k in range(3)] for i in range(0, 30, 3)]
        for p in range(4)
    }
    log: list[ReceivedMessage] = []
    log_lock = threading.Lock()
    done_sending = threading.Event()

    def produce(p: int) -> None:
        for batch in batches[p]:
            producer_side.send(batch)

    def consume() -> None:
        while True:
            batch = consumer_side.receive(4, wait_s=0.05)
            if not batch and done_sending.is_set() and consumer_side.depth() == 0:
                return
            with log_lock:  # logged before the ack, so a group's next message is logged after it
                log.extend(batch)
            consumer_side.ack([m.receipt_handle for m in batch])

    # WHEN
    producers = [threading.Thread(target=produce, args=(p,)) for p in range(4)]
    consumers = [threading.Thread(target=consume) for _ in range(3)]
    for t in producers + consumers:
        t.start()
    for t in producers:
        t.join()
    done_sending.set()
    for t in consumers:
        t.join(timeout=30)

    # THEN every message came out exactly once
    sent = [m.body for p in batches for batch in batches[p] for m in batch]
    assert sorted(m.body for m in log) == sorted(sent)
    # AND each group in the order the queue accepted its messages, each producer's in its send order
    for g in groups:
        received = [m for m in log if m.group_id == g]
        seqs = [m.sequence_number for m in received]
        assert seqs == sorted(seqs)
        for p in range(4):
            mine = [m.body for m in received if m.body in {x.body for b in batches[p] for x in b}]
            assert mine == [x.body for b in batches[p] for x in b if x.group_id == g]


def test_a_second_process_sends_to_the_same_file(tmp_path: Path) -> None:
    # GIVEN a consumer in this process and a sender in another (such as the CLI)
    queue = LocalFifoQueue(tmp_path / "q.db")
    script = (
        "import sys; from pathlib import Path\n"
        "from agent_memory.adapters.local_queue import LocalFifoQueue\n"
        "from agent_memory.ports import QueueMessage\n"
        "q = LocalFifoQueue(Path(sys.argv[1]))\n"
        "q.send([QueueMessage('g', 'd1', 'one'), QueueMessage('g', 'd2', 'two')])\n"
    )

    # WHEN the other process sends
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "q.db")], check=True, timeout=60)

    # THEN this process receives what it sent, in order
    assert bodies(queue.receive(10, wait_s=1)) == ["one", "two"]


def test_a_waiting_receive_wakes_when_a_message_is_sent(tmp_path: Path) -> None:
    # GIVEN a consumer long-polling an empty queue
    queue = LocalFifoQueue(tmp_path / "q.db")
    sender = threading.Timer(0.05, lambda: LocalFifoQueue(tmp_path / "q.db").send([msg("g", 1)]))
    started = time.monotonic()
    sender.start()

    # WHEN another thread sends, THEN the receive returns it well before its wait is over
    batch = queue.receive(10, wait_s=5)
    sender.join()
    assert bodies(batch) == ["g-1"]
    assert time.monotonic() - started < 2


# --- the SQS event the writer handler sees ----------------------------------------------------


def test_to_sqs_event_is_a_fifo_event_powertools_parses(queue: LocalFifoQueue, tick: SteppingClock) -> None:
    # GIVEN a batch received once before (so its counts and timestamps differ)
    queue.send([msg("t:a:working", 1, body='{"id": "mem_1"}'), msg("t:b:daily", 1)])
    queue.nack([m.receipt_handle for m in queue.receive(10)])
    tick.now += 1.5
    batch = queue.receive(10)

    # WHEN it is turned into a Lambda event
    arn = "arn:aws:sqs:eu-west-1:000000000000:writes.fifo"
    event = to_sqs_event(batch, queue_arn=arn)

    # THEN Powertools' model parses it and every field says what SQS would say
    parsed = SqsModel.model_validate(event)
    first = parsed.Records[0]
    assert (first.messageId, first.receiptHandle, first.body) == (
        batch[0].message_id,
        batch[0].receipt_handle,
        '{"id": "mem_1"}',
    )
    assert first.attributes.MessageGroupId == "t:a:working"
    assert first.attributes.MessageDeduplicationId == batch[0].dedup_id
    assert first.attributes.ApproximateReceiveCount == "2"
    assert first.attributes.SequenceNumber == str(batch[0].sequence_number)
    assert first.attributes.SentTimestamp.timestamp() == pytest.approx(T0)
    assert first.attributes.ApproximateFirstReceiveTimestamp.timestamp() == pytest.approx(T0)
    assert first.md5OfBody == hashlib.md5(b'{"id": "mem_1"}').hexdigest()
    assert (first.eventSource, first.eventSourceARN, first.awsRegion) == ("aws:sqs", arn, "eu-west-1")
    assert event["Records"][0]["attributes"]["SentTimestamp"] == str(int(T0 * 1000))


def test_a_partial_batch_response_from_the_fifo_processor_settles_the_batch(queue: LocalFifoQueue) -> None:
    # GIVEN a batch of one group whose second message fails in a Powertools FIFO processor
    queue.send([msg("g", 1), msg("g", 2), msg("g", 3)])
    batch = queue.receive(10)

    def record_handler(record: SQSRecord) -> None:
        if record.body == "g-2":
            raise RuntimeError("transient")

    response = process_partial_response(
        event=to_sqs_event(batch), record_handler=record_handler, processor=SqsFifoPartialProcessor()
    )

    # WHEN the response settles the batch
    acked, failed = queue.settle(batch, response)

    # THEN the first is gone, and the failed one and the one behind it come back, in order
    assert (acked, failed) == (1, 2)
    assert [(m.body, m.receive_count) for m in queue.receive(10)] == [("g-2", 2), ("g-3", 2)]
