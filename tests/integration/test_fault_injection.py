"""Fault injection on the write path: the local queue, the real writer handler, the real store.

Writes are accepted through the write service for three agents (three FIFO groups), then drained
by the same worker the local runtime runs, while faults are injected at the seams: the writer
process dies mid-batch, the store is unavailable (for a while, or for one group until an operator
steps in), the embedding model throws, a poison message arrives. Whatever happens, the ledger
must balance:

- every accepted write is stored exactly once (one ``put`` per record id, never two) or sits in
  the dead letters with its reason, never both, never neither;
- within a group, records are stored in the order they were accepted;
- other groups keep flowing while one is failing;
- ``agent-memory dlq redrive`` replays the dead letters, and the ledger balances with none left.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_memory import container
from agent_memory.adapters.local_queue import LocalFifoQueue, to_sqs_event
from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.handlers import writer
from agent_memory.local.lambda_context import LocalContext
from agent_memory.local.worker import QueueWorker
from agent_memory.model.caller import Caller
from agent_memory.ports import QueueMessage

TENANT = "acme"
AGENTS = ("alpha", "bravo", "charlie")
MAX_RECEIVES = 3


class Crash(BaseException):
    """The writer process dying: nothing in it catches this, and nothing settles the batch."""


@dataclass
class Harness:
    data_dir: Path
    queue: LocalFifoQueue
    accepted: dict[str, list[str]] = field(default_factory=dict)  # agent -> ids, in accepted order
    puts: list[tuple[str, str]] = field(default_factory=list)  # (agent, id) in the order stored
    store_fault: Callable[[str, str], None] | None = None  # raises to fail a put of (agent, id)

    def accept(self, per_agent: int) -> None:
        """``per_agent`` writes for each agent, interleaved, each in its own request."""
        write = container.api_services().write
        for i in range(per_agent):
            for agent in AGENTS:
                text = f"{agent} event {i}: {uuid.uuid4().hex} {uuid.uuid4().hex}"
                request = WriteRequest.model_validate({"items": [{"content": text}]})
                [item] = write.accept(Caller(TENANT), agent, request.to_new_memories())
                self.accepted.setdefault(agent, []).append(item)

    def worker(self) -> QueueWorker:
        return QueueWorker(self.queue, poll_s=0.02, retry_base_delay_s=0.01)

    def drain(self, until: Callable[[], bool] | None = None, timeout_s: float = 20.0) -> None:
        """Run the worker until the queue is empty (or ``until`` holds)."""
        worker, deadline = self.worker(), time.monotonic() + timeout_s
        while not (until() if until else self.queue.depth() == 0):
            assert time.monotonic() < deadline, f"not drained: depth {self.queue.depth()}"
            worker.drain_once()

    def dead(self) -> dict[str, str]:
        """Record id -> reason, of every dead letter that carries a write."""
        letters = {}
        for letter in self.queue.dead_letters():
            try:
                letters[json.loads(letter.body)["record"]["id"]] = letter.reason
            except (ValueError, KeyError, TypeError):
                letters[f"poison:{letter.id}"] = letter.reason
        return letters

    def stored(self, agent: str) -> set[str]:
        store = container.store()
        return {
            i for i in self.accepted[agent] if (r := store.get(TENANT, agent, i)) and r.deleted_at is None
        }

    def assert_ledger_balances(self) -> None:
        """Stored exactly once, or dead-lettered with a reason; never both; in order per group."""
        dead = self.dead()
        for agent, ids in self.accepted.items():
            stored = self.stored(agent)
            assert stored.isdisjoint(dead), f"{agent}: both stored and dead-lettered"
            assert stored | {i for i in ids if i in dead} == set(ids), f"{agent}: writes lost"
            in_put_order = [i for a, i in self.puts if a == agent]
            assert len(in_put_order) == len(set(in_put_order)), f"{agent}: a record was put twice"
            assert in_put_order == [i for i in ids if i in stored], f"{agent}: stored out of order"
        assert all(reason.strip() for reason in dead.values())


@pytest.fixture
def harness(local_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setenv("AGENT_MEMORY_MAX_RECEIVE_COUNT", str(MAX_RECEIVES))
    container.reset()
    queue = container.write_queue()
    assert isinstance(queue, LocalFifoQueue)
    h = Harness(local_env, queue)
    store = container.store()
    real_put, real_put_if = store.put, store.put_if

    def fault(items: Any) -> None:
        for item in items:
            if h.store_fault is not None:
                h.store_fault(item.record.agent_id, item.record.id)

    def put(items: Any) -> None:
        fault(items)
        real_put(items)
        h.puts.extend((item.record.agent_id, item.record.id) for item in items)

    def put_if(item: Any, read: Any, events: Any = ()) -> bool:
        fault([item])
        done = real_put_if(item, read, events)
        if done:
            h.puts.append((item.record.agent_id, item.record.id))
        return done

    monkeypatch.setattr(store, "put", put)
    monkeypatch.setattr(store, "put_if", put_if)
    yield h


def model_failing_at_first(monkeypatch: pytest.MonkeyPatch, calls: int) -> Counter[str]:
    """Make the embedding model raise on its first ``calls`` calls (batch and single-record calls
    alike), then work again; the returned counter counts every call (``["n"]``)."""
    embedder = container.embedder()
    real_embed, counted = embedder.embed, Counter[str]()

    def failing(texts: Any) -> Any:
        counted["n"] += 1
        if counted["n"] <= calls:
            raise RuntimeError("model unavailable")
        return real_embed(texts)

    monkeypatch.setattr(embedder, "embed", failing)
    return counted


def model_rejecting(monkeypatch: pytest.MonkeyPatch, text: str) -> Callable[[], None]:
    """Make the embedding model reject every input that holds ``text`` until the returned ``fix``
    is called."""
    embedder = container.embedder()
    real_embed = embedder.embed

    def picky(texts: Any) -> Any:
        if any(text in framed for framed in texts):  # the text, however it is framed
            raise ValueError("input rejected by the model")
        return real_embed(texts)

    monkeypatch.setattr(embedder, "embed", picky)
    return lambda: monkeypatch.setattr(embedder, "embed", real_embed)


def _redrive(h: Harness) -> int:
    """The operator's command, as typed, in its own process: ``agent-memory dlq redrive``."""
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory.local.cli", "dlq", "redrive", "--data-dir", str(h.data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    match = re.fullmatch(r"redrove (\d+) message\(s\)\n", done.stdout)
    assert match, done.stdout + done.stderr
    return int(match.group(1))


# --- the writer dies mid-batch --------------------------------------------------------------------


def test_writer_dies_mid_batch_and_each_write_is_stored_exactly_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN 12 writes in three groups, and a writer that dies after storing 4 of its first batch
    harness.accept(per_agent=4)
    stored_before_crash = 4

    def crash_after_some(agent: str, record_id: str) -> None:
        if len(harness.puts) >= stored_before_crash:
            raise Crash

    harness.store_fault = crash_after_some
    batch = harness.queue.receive(10, visibility_timeout_s=0.3)
    with pytest.raises(Crash):
        writer.handler(to_sqs_event(batch), LocalContext())  # the batch is never settled
    assert len(harness.puts) == stored_before_crash

    # WHEN the process is back and the messages it held become visible again
    harness.store_fault = None
    time.sleep(0.35)
    harness.drain()

    # THEN every write is stored exactly once (the 4 stored before the crash are not put again)
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert len(harness.puts) == 12


# --- the store is unavailable -----------------------------------------------------------------------


def test_a_store_outage_shorter_than_the_retries_loses_and_reorders_nothing(harness: Harness) -> None:
    # GIVEN the store is down while the first batches are tried (its first 5 calls fail)
    harness.accept(per_agent=5)
    calls = Counter[str]()

    def outage(agent: str, record_id: str) -> None:
        calls["n"] += 1
        if calls["n"] <= 5:
            raise DependencyError("the store is unavailable")

    harness.store_fault = outage

    # WHEN the writer drains with retries
    harness.drain()

    # THEN everything is stored once, in order, and nothing was dead-lettered
    assert calls["n"] > 5
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert len(harness.puts) == 15


def test_a_failing_group_does_not_hold_up_the_others_and_redrive_replays_it(harness: Harness) -> None:
    # GIVEN the store refuses every write of agent alpha (its shard is down)
    harness.accept(per_agent=4)

    def alpha_down(agent: str, record_id: str) -> None:
        if agent == "alpha":
            raise DependencyError("shard down")

    harness.store_fault = alpha_down

    # WHEN the writer drains: alpha's writes are retried until their receives are spent
    harness.drain()

    # THEN bravo and charlie are fully stored, and all of alpha sits in the dead letters, with why
    assert harness.stored("bravo") == set(harness.accepted["bravo"])
    assert harness.stored("charlie") == set(harness.accepted["charlie"])
    assert set(harness.dead()) == set(harness.accepted["alpha"])
    assert set(harness.dead().values()) == {"max receive count exceeded"}
    harness.assert_ledger_balances()
    assert container.pending().count(TENANT, "alpha") == 4  # still counted as not stored

    # WHEN the shard is back and the operator redrives the dead letters
    harness.store_fault = None
    assert _redrive(harness) == 4
    harness.drain()

    # THEN alpha is stored exactly once, in its original order, and nothing is left dead
    assert harness.dead() == {}
    harness.assert_ledger_balances()
    assert harness.stored("alpha") == set(harness.accepted["alpha"])
    assert container.pending().count(TENANT, "alpha") == 0


# --- the embedding model throws ---------------------------------------------------------------------


def test_embedder_that_throws_for_a_while_delays_but_loses_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a model that fails its first three calls (batch and single-record calls alike)
    harness.accept(per_agent=3)
    calls = model_failing_at_first(monkeypatch, 3)

    # WHEN the writer drains, THEN every write is stored once, in order
    harness.drain()
    assert calls["n"] > 3
    assert harness.dead() == {}
    harness.assert_ledger_balances()


def test_a_text_the_model_always_rejects_is_dead_lettered_with_its_group_and_redriven_when_fixed(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN bravo's second write is a text the model cannot embed
    harness.accept(per_agent=3)
    bad_id = harness.accepted["bravo"][1]
    bodies = [json.loads(body) for body in _peek(harness.queue)]
    bad = next(b["record"]["content"] for b in bodies if b["record"]["id"] == bad_id)
    fix = model_rejecting(monkeypatch, bad)

    # WHEN the writer drains
    harness.drain()

    # THEN bravo's first write is stored; the bad one and the one after it (its group, kept in
    # order) are dead letters; alpha and charlie are untouched by it
    assert harness.stored("bravo") == {harness.accepted["bravo"][0]}
    assert set(harness.dead()) == set(harness.accepted["bravo"][1:])
    assert harness.stored("alpha") == set(harness.accepted["alpha"])
    assert harness.stored("charlie") == set(harness.accepted["charlie"])
    harness.assert_ledger_balances()

    # WHEN the model is fixed and the dead letters are redriven, THEN all is stored, in order
    fix()
    assert _redrive(harness) == 2
    harness.drain()
    assert harness.dead() == {}
    harness.assert_ledger_balances()


# --- a poison message ----------------------------------------------------------------------------------


def test_a_poison_message_is_dead_lettered_at_once_and_its_group_keeps_flowing(harness: Harness) -> None:
    # GIVEN a message no writer can parse, queued in the middle of alpha's group
    harness.accept(per_agent=2)
    harness.queue.send([QueueMessage(f"{TENANT}:alpha:working", "poison-1", '{"v": 1, "op": "remember"')])
    harness.accept(per_agent=2)

    # WHEN the writer drains
    harness.drain()

    # THEN the poison is dead-lettered on its first delivery, with the parser's reason, and every
    # write around it (before and after, same group) is stored in order
    [(key, reason)] = harness.dead().items()
    assert key.startswith("poison:") and reason.startswith("invalid write command")
    [letter] = harness.queue.dead_letters()
    assert letter.receive_count == 0  # moved by the writer, not by spent retries
    harness.assert_ledger_balances()
    assert all(harness.stored(a) == set(harness.accepted[a]) for a in AGENTS)


# --- redelivery of a write that was forgotten meanwhile --------------------------------------------------


def test_a_redelivered_write_does_not_bring_back_a_memory_forgotten_since(harness: Harness) -> None:
    # GIVEN a stored write whose message is delivered again after the user forgot it
    harness.accept(per_agent=1)
    batch = harness.queue.receive(10)
    event = to_sqs_event(batch)
    assert writer.handler(event, LocalContext()) == {"batchItemFailures": []}
    harness.queue.ack(m.receipt_handle for m in batch)
    target = harness.accepted["alpha"][0]
    container.api_services().forget.forget(TENANT, "alpha", target, actor="test")

    # WHEN the same message arrives again (at-least-once delivery, or a redrive)
    assert writer.handler(event, LocalContext()) == {"batchItemFailures": []}

    # THEN the memory stays forgotten
    record = container.store().get(TENANT, "alpha", target)
    assert record is not None and record.deleted_at is not None
    assert harness.puts.count(("alpha", target)) == 1


def _peek(queue: LocalFifoQueue) -> list[str]:
    """The body of every queued message, without receiving it."""
    with queue._db.transaction(write=False) as conn:
        return [row["body"] for row in conn.execute("SELECT body FROM queue_messages ORDER BY seq")]
