"""The SQLite knowledge store against a plain reference, as a stateful property test.

Two tenants put (new versions, or the same one again) and delete three documents each, in any
order, on a clock that moves a second a step. The reference is a dict of each (tenant, document)
to its current document and passages. After every step:

1. what search can return for each tenant (by a word every passage has, through its title, and by
   vector, both with a limit above any passage count) is exactly the reference's passages of that
   tenant: nothing of an old version, of a deleted document, or of the other tenant;
2. a passage id once stored and no longer current never comes back;
3. ``list_documents``, paged two at a time, is the reference's documents (id, version, title),
   and ``passages`` of each document is the reference's list;
4. a delete removes as many passages as the reference held and leaves a tombstone at its time.
"""

from __future__ import annotations

import hashlib
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.knowledge.rules.passages import KnowledgeDocument, Passage, document_hash, passages_of
from agent_memory.ports import PassageQuery, StoredPassage

DIM = 8
START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TENANTS = ("acme", "globex")
DOC_IDS = ("adr-1", "runbook", "spec.v2")
VERSIONS = ("v1", "v2", "2026-11-22T12:00:00+00:00")
EVERYTHING = 10_000
#: In every title, so a search for it reaches every passage (the title is indexed with each).
COMMON_WORD = "handbook"

WORDS = ("deploy", "primary", "replica", "failover", "DNS", "rollback", "Ünïcode", "x" * 30, "NEAR(", '"')
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(lambda w: " ".join(w) + ".")
paragraphs = st.one_of(
    st.lists(sentences, min_size=1, max_size=30).map(" ".join),
    st.sampled_from(WORDS).map(lambda w: f"## {w}"),
    st.just("```\n# not a heading\n```"),
    st.just("   "),
)
texts = st.lists(paragraphs, max_size=6).map("\n\n".join)


def vector_of(passage_id: str) -> np.ndarray:
    """A fixed pseudo-random vector per passage id."""
    seed = int(hashlib.sha256(passage_id.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


class KnowledgeStoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = tempfile.TemporaryDirectory(prefix="knowledge-stateful-")
        self.store = SqliteMemoryStore(Path(self.directory.name) / "memory.db", DIM, "m")
        self.now = START
        self.documents: dict[tuple[str, str], KnowledgeDocument] = {}
        self.passages: dict[tuple[str, str], list[Passage]] = {}
        self.tombstones: dict[tuple[str, str], datetime] = {}
        self.gone: set[str] = set()

    def teardown(self) -> None:
        self.store.close()
        self.directory.cleanup()

    def _tick(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now

    def _current_ids(self, tenant: str) -> set[str]:
        return {p.id for (t, _), passages in self.passages.items() if t == tenant for p in passages}

    def _retire(self, key: tuple[str, str]) -> None:
        self.gone |= {p.id for p in self.passages.pop(key, [])}
        self.documents.pop(key, None)

    @rule(
        tenant=st.sampled_from(TENANTS),
        doc_id=st.sampled_from(DOC_IDS),
        version=st.sampled_from(VERSIONS),
        text=texts,
        markdown=st.booleans(),
    )
    def put(self, tenant: str, doc_id: str, version: str, text: str, markdown: bool) -> None:
        at = self._tick()
        document = KnowledgeDocument(
            tenant_id=tenant,
            doc_id=doc_id,
            version=version,
            title=f"{COMMON_WORD.title()} {doc_id}",
            text=text,
            format="markdown" if markdown else "text",
            content_hash=document_hash(text),
            created_at=at,
            updated_at=at,
        )
        passages = passages_of(document)
        document = document.model_copy(update={"passages": len(passages)})
        self.store.put_document(document, [StoredPassage(p, vector_of(p.id)) for p in passages])
        key = (tenant, doc_id)
        self._retire(key)
        self.documents[key] = document
        self.passages[key] = passages
        self.gone -= {p.id for p in passages}

    @rule(tenant=st.sampled_from(TENANTS), doc_id=st.sampled_from(DOC_IDS))
    def delete(self, tenant: str, doc_id: str) -> None:
        at = self._tick()
        removed = self.store.delete_document(tenant, doc_id, at)
        key = (tenant, doc_id)
        assert removed == len(self.passages.get(key, []))
        self._retire(key)
        self.tombstones[key] = at
        assert self.store.deleted_at(tenant, doc_id) == at

    @invariant()
    def search_finds_exactly_the_current_passages(self) -> None:
        for tenant in TENANTS:
            expected = self._current_ids(tenant)
            for query in (
                PassageQuery(tenant_id=tenant, text=COMMON_WORD, limit=EVERYTHING),
                PassageQuery(tenant_id=tenant, vector=np.ones(DIM, dtype=np.float32), limit=EVERYTHING),
            ):
                found = self.store.search_passages(query)
                found_ids = [c.passage.id for c in found]
                assert len(found_ids) == len(set(found_ids)), "a passage found twice"
                assert set(found_ids) == expected
                assert not set(found_ids) & self.gone, "a retired passage came back"
                assert {c.passage.tenant_id for c in found} <= {tenant}

    @invariant()
    def listing_and_passages_are_the_reference(self) -> None:
        for tenant in TENANTS:
            listed: list[tuple[str, str, str]] = []
            cursor: str | None = None
            while True:
                page = self.store.list_documents(tenant, cursor=cursor, limit=2)
                listed += [(d.doc_id, d.version, d.title) for d in page.documents]
                assert all(d.text == "" for d in page.documents)
                cursor = page.next_cursor
                if cursor is None:
                    break
            expected = sorted(
                (d.doc_id, d.version, d.title) for (t, _), d in self.documents.items() if t == tenant
            )
            assert listed == expected
            for doc_id in DOC_IDS:
                assert self.store.passages(tenant, doc_id) == self.passages.get((tenant, doc_id), [])
                stored = self.store.get_document(tenant, doc_id)
                assert stored == self.documents.get((tenant, doc_id))
                assert self.store.deleted_at(tenant, doc_id) == self.tombstones.get((tenant, doc_id))


KnowledgeStoreMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_knowledge_store_on_sqlite = KnowledgeStoreMachine.TestCase
