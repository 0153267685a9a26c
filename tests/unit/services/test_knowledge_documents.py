"""Shared knowledge in the services: a put is queued and stored by the writer (or not, when a
delete or a later put got there first), and search blends passages with memories by weight."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.unit.services.conftest import World, make_world

from agent_memory.errors import ConflictError, DependencyError
from agent_memory.knowledge.documents import DocumentsService, KnowledgeWriter, StoreOutcome
from agent_memory.knowledge.rules.passages import NewDocument, PutStatus
from agent_memory.model.caller import Caller
from agent_memory.model.commands import DocumentCommand
from agent_memory.model.queries import BOTH, Hit, NewMemory, SearchQuery, SharedHit
from agent_memory.ports import Matrix
from agent_memory.recall.search import SearchService

ACME = Caller("acme", scopes=frozenset({"knowledge", "read"}))
RUNBOOK = NewDocument(
    version="v1",
    title="Runbook",
    text="# Runbook\n\n## Failover\nPromote the replica in the standby region.\n\n"
    "## Backups\nNightly at 02:00.",
)


class Knowledge:
    """The API side and the writer side over one world, and a drain that stores what is queued."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.service = DocumentsService(world.store, world.queue, world.pending, world.clock)
        self.writer = KnowledgeWriter(world.store, world.embedder, world.pending)
        self.search = SearchService(
            world.store, world.embedder, world.clock, world.search._weights, knowledge=world.store
        )

    def drain(self) -> list[str]:
        outcomes: list[str] = []
        while batch := self.world.queue.receive(10):
            for p in self.world.writer.prepare([m.body for m in batch]):
                if p.document is not None:
                    outcomes.append(self.writer.apply(p.document).value)
                else:
                    assert p.command is not None, p.poison_reason
                    outcomes.append(self.world.writer.apply(p.command, p.vector).value)
            self.world.queue.ack(m.receipt_handle for m in batch)
        return outcomes

    def queued(self) -> list[DocumentCommand]:
        """The document commands waiting in the queue (left there)."""
        batch = self.world.queue.receive(10)
        parsed = self.world.writer.prepare([m.body for m in batch])
        self.world.queue.settle(
            batch, {"batchItemFailures": [{"itemIdentifier": m.message_id} for m in batch]}, retry_delay_s=0
        )
        return [p.document for p in parsed if p.document is not None]


@pytest.fixture
def knowledge(tmp_path: Path, clock: FixedClock) -> Knowledge:
    return Knowledge(make_world(tmp_path, clock))


def test_a_put_is_pending_until_the_writer_stores_it_and_a_replay_changes_nothing(
    knowledge: Knowledge,
) -> None:
    # GIVEN a document put
    outcome = knowledge.service.put(ACME, "runbook", RUNBOOK)
    assert outcome.status is PutStatus.ACCEPTED and outcome.document.passages == 2
    assert knowledge.service.pending("acme") == 1
    [command] = knowledge.queued()

    # WHEN the writer stores it, and the same message is delivered again
    first = knowledge.drain()
    again = knowledge.writer.apply(command)

    # THEN it is stored once, nothing is pending, and the replay is only confirmed
    assert first == ["stored"] and again is StoreOutcome.REPLAYED
    assert knowledge.service.pending("acme") == 0
    assert [p.heading_path for p in knowledge.service.passages("acme", "runbook")] == [
        ["Failover"],
        ["Backups"],
    ]


def test_a_redelivered_older_put_never_replaces_a_newer_one(knowledge: Knowledge, clock: FixedClock) -> None:
    # GIVEN version 1 accepted (and left in the queue), then version 2 accepted later and stored
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    [old] = knowledge.queued()
    knowledge.drain()
    clock.advance(minutes=1)
    knowledge.service.put(ACME, "runbook", replace(RUNBOOK, version="v2", text="# Runbook\n\nAll new."))
    knowledge.drain()

    # WHEN the version 1 message comes back (a redrive from the dead-letter queue)
    outcome = knowledge.writer.apply(old)

    # THEN version 2 stays
    assert outcome is StoreOutcome.SUPERSEDED
    assert knowledge.service.get("acme", "runbook").version == "v2"


def test_a_delete_after_the_put_was_accepted_wins(knowledge: Knowledge, clock: FixedClock) -> None:
    # GIVEN a put still in the queue
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    clock.advance(seconds=1)

    # WHEN the document is deleted, then the writer gets to the put
    removed = knowledge.service.delete(ACME, "runbook")
    outcomes = knowledge.drain()

    # THEN nothing was there to remove, and the put is dropped
    assert removed == 0 and outcomes == ["superseded"]
    assert knowledge.world.store.get_document("acme", "runbook") is None
    assert knowledge.service.pending("acme") == 0


def test_the_same_version_with_other_content_is_a_conflict(knowledge: Knowledge) -> None:
    # GIVEN a stored version
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    knowledge.drain()

    # WHEN / THEN the same content is unchanged, other content under that version is refused
    assert knowledge.service.put(ACME, "runbook", RUNBOOK).status is PutStatus.UNCHANGED
    with pytest.raises(ConflictError):
        knowledge.service.put(ACME, "runbook", replace(RUNBOOK, title="Runbook (draft)"))
    assert knowledge.world.queue.receive(10) == []


class FailingEmbedder:
    """An embedder whose model is down: every call fails the way the Bedrock adapter's does."""

    model_id = "down"
    dimension = 384

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise DependencyError("the embedding model is unavailable")


def test_an_embedding_outage_stores_nothing_and_keeps_the_old_version(
    knowledge: Knowledge, clock: FixedClock
) -> None:
    # GIVEN version 1 stored, version 2 queued
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    knowledge.drain()
    clock.advance(minutes=1)
    knowledge.service.put(ACME, "runbook", replace(RUNBOOK, version="v2", text="# Runbook\n\nAll new."))
    [command] = knowledge.queued()

    # WHEN the writer cannot embed
    with pytest.raises(DependencyError):
        KnowledgeWriter(knowledge.world.store, FailingEmbedder(), knowledge.world.pending).apply(command)

    # THEN version 1 is whole and searchable, and version 2 is still pending (to be retried)
    assert knowledge.service.get("acme", "runbook").version == "v1"
    assert len(knowledge.service.passages("acme", "runbook")) == 2
    assert knowledge.service.pending("acme") == 1


def test_a_document_command_that_cannot_parse_is_poison(knowledge: Knowledge) -> None:
    # WHEN the writer is handed a document command without a document
    [prepared] = knowledge.world.writer.prepare(
        ['{"v": 1, "op": "document", "accepted_at": "2026-11-24T00:00:00Z"}']
    )

    # THEN it is poison, with a reason, for the dead-letter queue
    assert prepared.command is None and prepared.document is None
    assert prepared.poison_reason and "document" in prepared.poison_reason


def _blend(knowledge: Knowledge, **ranking: float) -> list[Hit | SharedHit]:
    query = SearchQuery(query="promote the replica standby region failover", sources=BOTH, ranking=ranking)
    return knowledge.search.search("acme", "bot", query)


def test_the_source_weights_decide_how_passages_and_memories_interleave(knowledge: Knowledge) -> None:
    # GIVEN a passage and a memory that match the question alike
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    knowledge.world.write.accept(
        ACME, "bot", [NewMemory(content="Failover: promote the replica in the standby region.")]
    )
    knowledge.drain()

    # WHEN the agent searches both sources, weighting one or the other down
    shared_first = _blend(knowledge, private_weight=0.1)
    private_first = _blend(knowledge, shared_weight=0.1)
    private_only = knowledge.search.search("acme", "bot", SearchQuery(query="promote the replica"))

    # THEN the weights order them, and the default search has memories alone
    assert shared_first[0].source_tag == "shared" and private_first[0].source_tag == "private"
    assert {f.source_tag for f in shared_first} == {"shared", "private"}
    assert {f.source_tag for f in private_only} == {"private"}


def test_kinds_and_the_day_window_narrow_memories_only_and_browsing_lists_no_passages(
    knowledge: Knowledge,
) -> None:
    # GIVEN a passage and a memory
    knowledge.service.put(ACME, "runbook", RUNBOOK)
    knowledge.world.write.accept(ACME, "bot", [NewMemory(content="We promoted the replica yesterday.")])
    knowledge.drain()

    # WHEN searching both with a window that excludes today's memory, and browsing without a query
    windowed = knowledge.search.search(
        "acme", "bot", SearchQuery(query="promote the replica", sources=BOTH, min_days_ago=1)
    )
    browsed = knowledge.search.search("acme", "bot", SearchQuery(sources=BOTH))

    # THEN the passage is still found (documents are not dated memories), and browsing is memories
    assert {f.source_tag for f in windowed} == {"shared"}
    assert browsed and {f.source_tag for f in browsed} == {"private"}
