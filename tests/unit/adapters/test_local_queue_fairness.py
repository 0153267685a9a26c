"""The embedded write queue is fair between tenants: one tenant's bulk write never holds another
tenant's write back for more than one batch, and every group's order still holds."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.fakes import SteppingClock

from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.ports import QueueMessage

GROUPS = ("big:a1:working", "big:a2:working", "big:a1:daily", "small:b:working", "mid:c:working")


def msg(group: str, n: int) -> QueueMessage:
    return QueueMessage(group, hashlib.sha256(f"{group}/{n}".encode()).hexdigest(), f"{group}#{n}")


def tenant(group: str) -> str:
    return group.split(":", 1)[0]


def test_a_small_tenants_write_is_in_the_next_batch_behind_a_bulk_load(tmp_path: Path) -> None:
    # GIVEN one tenant's 500 writes on two agents, queued before another tenant's single write
    queue = LocalFifoQueue(tmp_path / "queue.db", clock=SteppingClock())
    queue.send(
        [msg("big:a1:working", i) for i in range(250)] + [msg("big:a2:working", i) for i in range(250)]
    )
    queue.send([msg("small:b:working", 0)])

    # WHEN the worker takes its next batch
    batch = [m.body for m in queue.receive(10)]

    # THEN the small tenant's write is in it, after the bulk tenant's oldest (round-robin)
    assert batch[:2] == ["big:a1:working#0", "small:b:working#0"]
    assert len(batch) == 10


@settings(max_examples=60, deadline=None)
@given(sends=st.lists(st.lists(st.sampled_from(GROUPS), min_size=1, max_size=30), min_size=1, max_size=6))
def test_batches_take_tenants_round_robin_and_keep_each_groups_order(
    tmp_path_factory: object, sends: list[list[str]]
) -> None:
    # GIVEN messages sent in batches across three tenants' groups
    path = tmp_path_factory.mktemp("fair") / "queue.db"  # type: ignore[attr-defined]
    queue = LocalFifoQueue(path, clock=SteppingClock())
    counters: dict[str, int] = defaultdict(int)
    for send in sends:
        batch = []
        for group in send:
            batch.append(msg(group, counters[group]))
            counters[group] += 1
        queue.send(batch)
    waiting: dict[str, int] = defaultdict(int)
    for group, count in counters.items():
        waiting[tenant(group)] += count

    # WHEN a worker takes batches of 10 and settles each one before the next
    seen: dict[str, list[int]] = defaultdict(list)
    while batch_received := queue.receive(10):
        taken: dict[str, int] = defaultdict(int)
        for m in batch_received:
            group, number = m.body.split("#")
            seen[group].append(int(number))
            taken[tenant(group)] += 1
        # THEN every tenant with messages waiting has its share of the batch: the batch takes
        # one of each tenant's before a second of any (no tenant waits behind another's bulk)
        shares = sorted(waiting[t] for t in waiting if waiting[t] > 0)
        fair = min(len(batch_received), len(shares))
        assert sum(1 for t in waiting if waiting[t] > 0 and taken[t] > 0) >= fair
        for t, count in taken.items():
            waiting[t] -= count
        queue.ack(m.receipt_handle for m in batch_received)

    # AND every group came out whole and in its send order
    assert {g: seen[g] for g in counters} == {g: list(range(c)) for g, c in counters.items()}
