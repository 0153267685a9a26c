"""A put of a shared-knowledge document interleaved with a read at the worst moment, on the real
OpenSearch node: the read answers with one whole version, never a part of one.

A put is several requests (docs/opensearch.md, "Shared knowledge"), and a refresh can expose any
prefix of them to a search, part of one ``_bulk`` included. The contract test
``test_a_search_during_puts_sees_one_whole_version`` races puts against searches and catches the
bad interleaving about once in ten runs; here it is made every time. The store's client is
wrapped so that a put stops after its first passage is stored and searchable, and a read lets
the put finish right after the read's first request has answered: that request fixed what the
read sees, and everything the read asks afterwards must agree with it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from tests.contract.test_knowledge_store_contract import doc
from tests.opensearch_cluster import Indexes, cluster_client, cluster_url

from agent_memory.adapters.opensearch import opensearch_knowledge
from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.knowledge.rules.passages import KnowledgeDocument, passages_of
from agent_memory.ports import PassageQuery, StoredPassage

pytestmark = pytest.mark.opensearch

DIM, MODEL = 8, "snapshot-model"
#: The requests with which a read can first look at the index.
READS = ("search", "msearch", "create_pit", "mget")
V1 = "# A\ncommon alpha\n# B\ncommon bravo\n# C\ncommon charlie"
V2 = "# D\ncommon delta\n# E\ncommon echo"


def document(text: str, version: str) -> KnowledgeDocument:
    return doc("runbook", text, version=version)


def stored(doc: KnowledgeDocument) -> list[StoredPassage]:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[0] = 1.0
    return [StoredPassage(p, vector) for p in passages_of(doc)]


class Interleaving:
    """The adapter's client, with a put held after its first ``_bulk`` and released by a read.

    `hold_put` runs a put on a thread until its second ``_bulk`` (one passage per ``_bulk``:
    the first passage is stored, refreshed, and nothing else of the put is); the next read
    request made on another thread answers, then the put runs to its end before the read goes
    on."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._put_thread: threading.Thread | None = None
        self._held = threading.Event()
        self._release = threading.Event()
        self._bulks = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if name == "bulk":
            return self._bulk
        if name in READS:
            return self._read(attribute)
        return attribute

    def _bulk(self, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is self._put_thread:
            self._bulks += 1
            if self._bulks == 2:
                self._held.set()
                assert self._release.wait(30), "the put was never released"
        return self._client.bulk(*args, **kwargs)

    def _read(self, request: Callable[..., Any]) -> Callable[..., Any]:
        def read(*args: Any, **kwargs: Any) -> Any:
            answer = request(*args, **kwargs)
            thread = self._put_thread
            if thread is not None and threading.current_thread() is not thread and not self._release.is_set():
                self._release.set()
                thread.join(30)
                assert not thread.is_alive(), "the put did not finish"
            return answer

        return read

    def hold_put(self, put: Callable[[], None]) -> None:
        self._put_thread = threading.Thread(target=put)
        self._put_thread.start()
        assert self._held.wait(30), "the put never reached its second bulk"


@pytest.fixture(scope="module")
def indexes() -> Iterator[Indexes]:
    made = Indexes(cluster_client(cluster_url()), DIM, MODEL, prefix="snapshot")
    try:
        yield made
    finally:
        made.delete()


@pytest.fixture
def interleaved(
    indexes: Indexes, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[OpenSearchStore, Interleaving]]:
    monkeypatch.setattr(opensearch_knowledge, "KNOWLEDGE_BULK_CHUNK", 1)
    client = Interleaving(indexes.client)
    try:
        yield OpenSearchStore(client, indexes.alias, DIM, MODEL), client
    finally:
        indexes.clear()


def ids_of(doc: KnowledgeDocument) -> set[str]:
    return {p.id for p in passages_of(doc)}


READERS: dict[str, Callable[[OpenSearchStore], set[str]]] = {
    "vector search": lambda s: {
        c.passage.id
        for c in s.search_passages(
            PassageQuery(tenant_id="t1", vector=stored(document(V1, "v1"))[0].vector, limit=50)
        )
    },
    "word search": lambda s: {
        c.passage.id for c in s.search_passages(PassageQuery(tenant_id="t1", text="common", limit=50))
    },
    "both": lambda s: {
        c.passage.id
        for c in s.search_passages(
            PassageQuery(tenant_id="t1", text="common", vector=stored(document(V1, "v1"))[0].vector, limit=50)
        )
    },
    "passages": lambda s: {p.id for p in s.passages("t1", "runbook")},
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_read_while_a_new_version_is_half_stored_answers_with_one_whole_version(
    interleaved: tuple[OpenSearchStore, Interleaving], reader: str
) -> None:
    # GIVEN a document stored whole in version 1 (three passages)
    store, client = interleaved
    v1, v2 = document(V1, "v1"), document(V2, "v2")
    store.put_document(v1, stored(v1))

    # WHEN a put of version 2 (two passages) has stored its first passage only, and a read's
    # first request answers before the rest of the put lands
    client.hold_put(lambda: store.put_document(v2, stored(v2)))
    seen = READERS[reader](store)

    # THEN the read saw one whole version: the first, as its first request did
    assert seen in (ids_of(v1), ids_of(v2)), sorted(seen)


@pytest.mark.parametrize("reader", list(READERS))
def test_a_read_while_a_first_version_is_half_stored_answers_with_nothing_or_all_of_it(
    interleaved: tuple[OpenSearchStore, Interleaving], reader: str
) -> None:
    # GIVEN nothing stored; WHEN a first put has stored one passage of three when a read looks
    store, client = interleaved
    v1 = document(V1, "v1")
    client.hold_put(lambda: store.put_document(v1, stored(v1)))
    seen = READERS[reader](store)

    # THEN the read saw none of the document or all of it
    assert seen in (set(), ids_of(v1)), sorted(seen)
