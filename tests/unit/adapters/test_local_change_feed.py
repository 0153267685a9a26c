"""The local outbox: one queue message per event, grouped by tenant (its events go in order),
deduplicated by event id (an event published again is dropped), and a broken outbox never
raises into the change."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.payloads import memory_record

from agent_memory.adapters.local_change_feed import LocalChangeFeed
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.feed.rules.events import memory_created


def test_events_are_queued_by_tenant_once_each(tmp_path: Path) -> None:
    # GIVEN
    queue = LocalFifoQueue(tmp_path / "changes.db")
    feed = LocalChangeFeed(queue)
    a1, a2 = (memory_created(memory_record(f"mem_{c * 16}", c, tenant="acme")) for c in "ab")
    g1 = memory_created(memory_record("mem_" + "c" * 16, "c", tenant="globex"))
    # WHEN the same event comes twice
    feed.publish([a1, g1])
    feed.publish([a1, a2])
    # THEN three messages; acme's in order
    got = queue.receive(10)
    assert [(m.group_id, json.loads(m.body)["id"]) for m in got] == [
        ("acme", a1.id),
        ("globex", g1.id),
        ("acme", a2.id),
    ]


class _FullDisk(LocalFifoQueue):
    def send(self, messages: object, delay_s: float = 0.0) -> None:
        raise sqlite3.OperationalError("database or disk is full")


def test_an_outbox_that_cannot_be_written_never_raises(tmp_path: Path) -> None:
    # GIVEN an outbox on a full disk
    feed = LocalChangeFeed(_FullDisk(tmp_path / "changes.db"))
    # WHEN / THEN the publish returns (the change that made the event is stored already)
    feed.publish([memory_created(memory_record("mem_" + "a" * 16, "a"))])
