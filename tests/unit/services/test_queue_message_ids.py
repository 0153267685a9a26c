"""What the API's use cases hand the write queue: for the longest ids the API accepts, every
message's FIFO group id and deduplication id are ones SQS accepts (at most 128 characters of its
alphabet). SQS refuses a send with a longer one, so the request would answer 503 on every try."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes import FixedClock

from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.knowledge.documents import DocumentsService
from agent_memory.knowledge.rules.passages import NewDocument
from agent_memory.model.caller import Caller
from agent_memory.model.queries import NewMemory
from agent_memory.ports import QueueMessage
from agent_memory.writing.write import WriteService

#: What SQS accepts in a MessageGroupId and a MessageDeduplicationId.
SQS_ID = re.compile(r"\A[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}\Z")
#: Ids the API accepts (tenant, agent, document: 128 characters), the longest ones drawn often.
IDS = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z") | st.integers(1, 128).map(lambda n: "d" * n)


class RecordingQueue:
    """A write queue that keeps what it was given."""

    def __init__(self) -> None:
        self.sent: list[QueueMessage] = []

    def send(self, messages: Sequence[QueueMessage]) -> None:
        self.sent.extend(messages)


class Apis:
    def __init__(self, folder: Path) -> None:
        self.queue = RecordingQueue()
        pending = LocalPendingWrites(folder / "queue.db")
        store = SqliteMemoryStore(folder / "memory.db", dimension=8, model_id="hash")
        self.write = WriteService(self.queue, pending, FixedClock())
        self.knowledge = DocumentsService(store, self.queue, pending, FixedClock())


@pytest.fixture(scope="module")
def apis() -> Iterator[Apis]:
    with tempfile.TemporaryDirectory() as folder:
        yield Apis(Path(folder))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tenant=IDS, agent=IDS, doc_id=IDS)
def test_every_message_the_api_queues_has_ids_sqs_accepts(
    apis: Apis, tenant: str, agent: str, doc_id: str
) -> None:
    """A memory write and a document put, by the longest ids: both ids of each message fit SQS."""
    apis.queue.sent.clear()
    caller = Caller(tenant, scopes=frozenset({"write", "knowledge"}))
    apis.write.accept(caller, agent, [NewMemory(content="Alice moved the launch to March 3.")])
    apis.knowledge.put(caller, doc_id, NewDocument(version="v1", title="Runbook", text="# Runbook\nPromote."))
    assert len(apis.queue.sent) == 2
    for message in apis.queue.sent:
        assert SQS_ID.match(message.group_id), message.group_id
        assert SQS_ID.match(message.dedup_id), message.dedup_id
