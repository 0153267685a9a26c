"""Fault injection on the deployed write path: SQS FIFO (moto), the writer handler, the real store.

The same ledger as `test_fault_injection.py` (every accepted write stored exactly once, or a dead
letter with its reason; in accepted order within its group; other groups flowing), but with the
queue the Lambda reads in AWS: writes are accepted by the API's write service onto an SQS FIFO
queue whose redrive policy moves a message to the FIFO dead-letter queue after its third
receive, and `deliver` plays Lambda's event source mapping: one receive as one event, the
handler's partial batch response deletes what succeeded and gives back what failed. Operators
use `agent-memory dlq list | redrive` with ``AGENT_MEMORY_QUEUE=sqs``.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.environment import set_env, sqs_write_path_env
from tests.integration.test_fault_injection import (
    AGENTS,
    TENANT,
    Crash,
    Harness,
    model_failing_at_first,
    model_rejecting,
)
from tests.payloads import sqs_event
from tests.tables import create_pending_table, create_write_queues

from agent_memory import container
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.adapters.sqs_queue import SqsDeadLetters
from agent_memory.errors import DependencyError
from agent_memory.handlers import writer
from agent_memory.local import cli
from agent_memory.local.lambda_context import LocalContext
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import MAX_RECEIVES_REASON

MAX_RECEIVES = 3


@dataclass
class SqsHarness(Harness):
    sqs: Any = None
    queue_url: str = ""
    dlq_url: str = ""
    in_flight: list[dict[str, Any]] = field(default_factory=list)

    def deliver(self, visibility_s: int = 30) -> tuple[list[str], set[str]]:
        """One receive handed to the writer as Lambda would: the message ids, and those that failed.

        What failed is given back at once (Lambda leaves it to the visibility timeout). When the
        invocation fails as a whole (Powertools raises when every record failed), nothing is
        deleted and the whole batch comes back. A `Crash` leaves the batch in flight.
        """
        self.in_flight = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=10,
            VisibilityTimeout=visibility_s,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not self.in_flight:
            return [], set()
        ids = [m["MessageId"] for m in self.in_flight]
        try:
            response = writer.handler(sqs_event(self.in_flight), LocalContext())
            failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        except Exception:
            failed = set(ids)
        finally:
            discard_unpublished_metrics()  # what a disabled Metrics keeps back (the local worker does too)
        for m in self.in_flight:
            if m["MessageId"] not in failed:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        self.expire([m for m in self.in_flight if m["MessageId"] in failed])
        self.in_flight = []
        return ids, failed

    def expire(self, messages: list[dict[str, Any]] | None = None) -> None:
        """Make in-flight messages visible again, in their order, as their visibility timeout would.

        (Waiting for the timeout under moto 5.2 hands a group's expired messages back last first.)
        """
        for m in self.in_flight if messages is None else messages:
            self.sqs.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
            )

    def drain(self, until: Any = None, timeout_s: float = 20.0) -> None:
        """Deliver until the write queue hands out nothing (the redrive policy moved what was spent)."""
        deadline = time.monotonic() + timeout_s
        while self.deliver()[0]:
            assert time.monotonic() < deadline, "the write queue did not drain"

    def peek(self) -> dict[str, tuple[str, str]]:
        """Record id -> (SQS message id, body) of the writes waiting on the queue, given back at once."""
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=30
        ).get("Messages", [])
        for m in messages:
            self.sqs.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
            )
        return {json.loads(m["Body"])["record"]["id"]: (m["MessageId"], m["Body"]) for m in messages}


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SqsHarness]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        queue, dlq = create_write_queues(sqs, max_receives=MAX_RECEIVES)
        create_pending_table(boto3.client("dynamodb", region_name="us-east-1"), "pending")
        set_env(monkeypatch, sqs_write_path_env(tmp_path / "data", queue, dlq))
        monkeypatch.setattr(SqsDeadLetters, "wait_s", 0)  # moto answers at once
        container.reset()
        h = SqsHarness(tmp_path / "data", container.dead_letters(), sqs=sqs, queue_url=queue, dlq_url=dlq)  # type: ignore[arg-type]
        real_put, real_put_if = SqliteMemoryStore.put, SqliteMemoryStore.put_if

        def fault(items: Any) -> None:
            for item in items:
                if h.store_fault is not None:
                    h.store_fault(item.record.agent_id, item.record.id)

        def put(store: SqliteMemoryStore, items: Any) -> None:
            fault(items)
            real_put(store, items)
            h.puts.extend((item.record.agent_id, item.record.id) for item in items)

        def put_if(store: SqliteMemoryStore, item: Any, read: Any, events: Any = ()) -> bool:
            fault([item])
            done = real_put_if(store, item, read, events)
            if done:
                h.puts.append((item.record.agent_id, item.record.id))
            return done

        # on the class: the CLI rebuilds the container, and the new store must be watched too
        monkeypatch.setattr(SqliteMemoryStore, "put", put)
        monkeypatch.setattr(SqliteMemoryStore, "put_if", put_if)
        yield h
        container.reset()


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The operator's command, as typed (in this process: moto's queues live here)."""
    capsys.readouterr()
    assert cli.main(["dlq", *args]) == 0
    return capsys.readouterr().out


def _redrive(capsys: pytest.CaptureFixture[str]) -> int:
    match = re.fullmatch(r"redrove (\d+) message\(s\)\n", _cli(capsys, "redrive"))
    assert match
    return int(match.group(1))


def _listed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _cli(capsys, "list").splitlines()]


# --- the store fails one record in the middle of a batch ---------------------------------------------


def test_a_store_failure_mid_batch_fails_that_record_and_the_rest_of_its_group_only(
    harness: SqsHarness,
) -> None:
    # GIVEN 9 writes in three groups, and a store that fails bravo's second record once
    harness.accept(per_agent=3)
    ids = {record_id: message_id for record_id, (message_id, _) in harness.peek().items()}
    bad = harness.accepted["bravo"][1]
    failures = Counter[str]()

    def once(agent: str, record_id: str) -> None:
        if record_id == bad and not failures[record_id]:
            failures[record_id] += 1
            raise DependencyError("the store is unavailable")

    harness.store_fault = once

    # WHEN the writer gets the whole batch
    delivered, failed = harness.deliver()

    # THEN the partial batch response names exactly that record and the one after it in its
    # group (FIFO: nothing may overtake it); the other groups' records and bravo's first landed
    assert len(delivered) == 9
    assert failed == {ids[bad], ids[harness.accepted["bravo"][2]]}
    assert harness.stored("alpha") == set(harness.accepted["alpha"])
    assert harness.stored("charlie") == set(harness.accepted["charlie"])
    assert harness.stored("bravo") == {harness.accepted["bravo"][0]}

    # WHEN they are delivered again THEN every write is stored exactly once, in order
    harness.drain()
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert len(harness.puts) == 9
    assert all(container.pending().count(TENANT, a) == 0 for a in AGENTS)


def test_the_writer_dying_mid_batch_on_sqs_stores_each_write_exactly_once(harness: SqsHarness) -> None:
    # GIVEN 12 writes, and a writer that dies after storing 4 of its first batch (nothing settled)
    harness.accept(per_agent=4)

    def crash_after_some(agent: str, record_id: str) -> None:
        if len(harness.puts) >= 4:
            raise Crash

    harness.store_fault = crash_after_some
    with pytest.raises(Crash):
        harness.deliver()

    # WHEN its messages come back after the visibility timeout and a healthy writer takes them
    harness.store_fault = None
    harness.expire()
    harness.drain()

    # THEN the 4 stored before the crash are confirmed, not stored again
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert len(harness.puts) == 12


# --- the embedding model throws -------------------------------------------------------------------------


def test_a_model_failing_for_a_while_on_sqs_delays_but_loses_nothing(
    harness: SqsHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a model that fails its first 4 calls (the batch call, then single-record calls)
    harness.accept(per_agent=3)
    calls = model_failing_at_first(monkeypatch, 4)

    # WHEN the writer drains THEN every write is stored once, in order, and none dead-lettered
    harness.drain()
    assert calls["n"] > 4
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert len(harness.puts) == 9


def _model_rejects(
    harness: SqsHarness, monkeypatch: pytest.MonkeyPatch, record_id: str
) -> Callable[[], None]:
    """Make the model reject the text of one queued write until the returned ``fix`` is called."""
    return model_rejecting(monkeypatch, json.loads(harness.peek()[record_id][1])["record"]["content"])


def test_a_text_the_model_rejects_goes_to_the_dlq_by_the_redrive_policy_and_is_redriven_in_order(
    harness: SqsHarness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN 9 writes (one receive's worth), and charlie's second a text the model rejects
    harness.accept(per_agent=3)
    fix = _model_rejects(harness, monkeypatch, harness.accepted["charlie"][1])

    # WHEN the writer drains: the bad write and the one after it fail together on each of their
    # three receives, and the queue's redrive policy moves both to the dead-letter queue
    harness.drain()

    # THEN charlie's first write is stored, the rest of charlie sits in the DLQ, in order, with
    # the queue's reason, and alpha and bravo were never held up
    assert harness.stored("charlie") == {harness.accepted["charlie"][0]}
    assert harness.stored("alpha") == set(harness.accepted["alpha"])
    assert harness.stored("bravo") == set(harness.accepted["bravo"])
    listed = _listed(capsys)
    assert [json.loads(d["body"])["record"]["id"] for d in listed] == harness.accepted["charlie"][1:]
    assert {d["reason"] for d in listed} == {MAX_RECEIVES_REASON}
    assert {d["group_id"] for d in listed} == {f"{TENANT}:charlie:working"}
    harness.assert_ledger_balances()
    assert container.pending().count(TENANT, "charlie") == 2  # still counted as not stored

    # WHEN the model is fixed and the operator redrives
    fix()
    assert _redrive(capsys) == 2
    harness.drain()

    # THEN charlie is stored exactly once, in its accepted order; nothing is left; a second
    # redrive finds nothing
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert harness.stored("charlie") == set(harness.accepted["charlie"])
    assert container.pending().count(TENANT, "charlie") == 0
    assert _redrive(capsys) == 0
    assert _listed(capsys) == []


def test_on_sqs_a_later_write_with_fewer_deliveries_overtakes_its_dead_lettered_group(
    harness: SqsHarness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The limit of SQS FIFO with a redrive policy: order holds only among messages that failed
    together. A write that first came in a later receive has fewer deliveries than the head of
    its group; when the head and its companions are moved, it is handed out and stored."""
    # GIVEN 12 writes (the first receive takes 10, so charlie's fourth comes a receive later),
    # and charlie's second a text the model rejects
    harness.accept(per_agent=4)
    c = harness.accepted["charlie"]
    fix = _model_rejects(harness, monkeypatch, c[1])

    # WHEN the writer drains
    harness.drain()

    # THEN c1 and c2 (failed together three times) are dead letters, and c3 (received twice with
    # them) was stored once they were moved: nothing lost, but c3 overtook them
    assert [json.loads(d["body"])["record"]["id"] for d in _listed(capsys)] == c[1:3]
    assert harness.stored("charlie") == {c[0], c[3]}
    assert harness.stored("alpha") == set(harness.accepted["alpha"])
    assert harness.stored("bravo") == set(harness.accepted["bravo"])

    # WHEN the model is fixed and the operator redrives
    fix()
    assert _redrive(capsys) == 2
    harness.drain()

    # THEN every write is stored exactly once; the redriven ones after the one that overtook them
    assert harness.dead() == {}
    assert harness.stored("charlie") == set(c)
    assert [i for a, i in harness.puts if a == "charlie"] == [c[0], c[3], c[1], c[2]]
    assert len(harness.puts) == len(set(harness.puts)) == 12


# --- a poison message ------------------------------------------------------------------------------------


def test_a_poison_message_on_sqs_is_dead_lettered_with_its_reason_and_survives_a_redrive(
    harness: SqsHarness, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a message no writer can parse, in the middle of alpha's group
    harness.accept(per_agent=2)
    harness.sqs.send_message(
        QueueUrl=harness.queue_url,
        MessageBody='{"v": 1, "op": "remember"',
        MessageGroupId=f"{TENANT}:alpha:working",
        MessageDeduplicationId="poison-1",
    )
    harness.accept(per_agent=2)

    # WHEN the writer drains
    harness.drain()

    # THEN the poison is in the DLQ on its first delivery, with the parser's reason, and every
    # write around it is stored, in order
    [letter] = _listed(capsys)
    assert letter["reason"].startswith("invalid write command")
    assert letter["group_id"] == f"{TENANT}:alpha:working" and letter["body"] == '{"v": 1, "op": "remember"'
    harness.assert_ledger_balances()
    assert all(harness.stored(a) == set(harness.accepted[a]) for a in AGENTS)

    # WHEN it is redriven while still unparseable THEN it comes back to the DLQ, not lost, and
    # nothing else is stored twice
    assert _redrive(capsys) == 1
    harness.drain()
    [again] = _listed(capsys)
    assert again["body"] == letter["body"] and again["reason"].startswith("invalid write command")
    harness.assert_ledger_balances()
