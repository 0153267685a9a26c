"""The `KnowledgeStore` contract: a tenant's documents and passages, written once, run against each
adapter of the ``store`` fixture (conftest.py) that is a knowledge store.

Put, read back and list; a new version replacing every passage of the old one; deletes (all the
passages at once, a tombstone kept at the later time); tenants that never see each other's
documents; vector search (nearest first, cosine), lexical search (stemmed, titles and headings),
the validity and tag filters; list pagination and its cursors; hit counts. Times are whole
seconds and whole days, as in the memory store's contract.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from tests.strategies import HOSTILE_PIECES

from agent_memory.errors import ValidationFailedError
from agent_memory.knowledge.rules.passages import KnowledgeDocument, Passage, document_hash, passages_of
from agent_memory.ports import KnowledgeStore, MemoryStore, PassageCandidate, PassageQuery, StoredPassage

DIM = 8  # the dimension conftest.py builds every store with
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
KNOWLEDGE_METHODS = (
    "put_document",
    "get_document",
    "list_documents",
    "passages",
    "delete_document",
    "deleted_at",
    "search_passages",
    "record_document_hits",
)
EVERYTHING = 10_000  # a search limit above any test's passage count
MISSING = object()  # a cursor field left out

RUNBOOK = """# Runbook

Deploy the service with the blue-green script. Check the health page before switching traffic.

## Failover

Promote the replica in the other region and repoint DNS.

## Rollback

Switch traffic back to the previous colour and keep the new one for forensics.
"""


@pytest.fixture
def knowledge(store: MemoryStore) -> KnowledgeStore:
    """The ``store`` fixture's adapter, when it implements the knowledge store (skipped if not)."""
    missing = [name for name in KNOWLEDGE_METHODS if not callable(getattr(store, name, None))]
    if missing:
        pytest.skip(f"{type(store).__name__} does not implement KnowledgeStore yet (no {', '.join(missing)})")
    return cast(KnowledgeStore, store)


def vec(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def at_cosine(c: float) -> np.ndarray:
    """A unit vector whose cosine to ``vec(1)`` is ``c``."""
    return vec(c, float(np.sqrt(max(0.0, 1 - c * c))))


def doc(
    doc_id: str, text: str = RUNBOOK, *, tenant: str = "t1", version: str = "v1", **fields: Any
) -> KnowledgeDocument:
    values: dict[str, Any] = {
        "tenant_id": tenant,
        "doc_id": doc_id,
        "version": version,
        "title": f"Title of {doc_id}",
        "text": text,
        "content_hash": document_hash(text),
        "created_at": NOW,
        "updated_at": NOW,
        **fields,
    }
    document = KnowledgeDocument(**values)
    return document.model_copy(update={"passages": len(passages_of(document))})


def put(
    knowledge: KnowledgeStore,
    document: KnowledgeDocument,
    vector: np.ndarray | Callable[[Passage], np.ndarray] | None = None,
) -> list[Passage]:
    """Store ``document`` with its passages, each with ``vector`` (or ``vector(passage)``)."""
    passages = passages_of(document)

    def vector_of(p: Passage) -> np.ndarray:
        if vector is None:
            return vec(1.0)
        return vector(p) if callable(vector) else vector

    knowledge.put_document(document, [StoredPassage(p, vector_of(p)) for p in passages])
    return passages


def search(knowledge: KnowledgeStore, tenant: str = "t1", **query: Any) -> list[PassageCandidate]:
    return knowledge.search_passages(PassageQuery(tenant_id=tenant, **{"limit": EVERYTHING, **query}))


def found_ids(knowledge: KnowledgeStore, tenant: str = "t1", **query: Any) -> set[str]:
    return {c.passage.id for c in search(knowledge, tenant, **query)}


def found_docs(knowledge: KnowledgeStore, tenant: str = "t1", **query: Any) -> set[str]:
    return {c.passage.doc_id for c in search(knowledge, tenant, **query)}


def every_id(knowledge: KnowledgeStore, tenant: str = "t1") -> set[str]:
    """Every passage id of the tenant a vector search can reach."""
    return found_ids(knowledge, tenant, vector=vec(1.0))


def listed(knowledge: KnowledgeStore, tenant: str = "t1") -> list[str]:
    return [d.doc_id for d in knowledge.list_documents(tenant, limit=1000).documents]


def ids(passages: Sequence[Passage]) -> set[str]:
    return {p.id for p in passages}


# --- put, get, list, passages -------------------------------------------------------------------


def test_a_put_document_is_read_back_whole_with_its_passages_in_order(knowledge: KnowledgeStore) -> None:
    # GIVEN
    document = doc("runbook", tags=["ops"], source_uri="https://wiki/runbook", valid_from=date(2026, 1, 1))

    # WHEN
    passages = put(knowledge, document)

    # THEN
    assert knowledge.get_document("t1", "runbook") == document
    assert knowledge.passages("t1", "runbook") == passages
    assert [p.heading_path for p in passages] == [
        ["Runbook"],
        ["Runbook", "Failover"],
        ["Runbook", "Rollback"],
    ]
    assert every_id(knowledge) == ids(passages)


def test_listed_documents_leave_the_text_out_but_get_has_it_whole(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("runbook"))

    # WHEN
    [listed_doc] = knowledge.list_documents("t1").documents
    whole = knowledge.get_document("t1", "runbook")

    # THEN
    assert listed_doc.text == ""
    assert listed_doc == doc("runbook").model_copy(update={"text": ""})
    assert whole is not None and whole.text == RUNBOOK


def test_unknown_documents_read_as_nothing(knowledge: KnowledgeStore) -> None:
    # WHEN / THEN
    assert knowledge.get_document("t1", "nope") is None
    assert knowledge.passages("t1", "nope") == []
    assert knowledge.list_documents("t1").documents == []
    assert knowledge.deleted_at("t1", "nope") is None


def test_a_document_with_no_visible_text_has_no_passages(knowledge: KnowledgeStore) -> None:
    # WHEN
    put(knowledge, doc("empty", "# Only a heading\n\n   \n"))

    # THEN
    assert knowledge.passages("t1", "empty") == []
    assert listed(knowledge) == ["empty"]
    assert found_ids(knowledge, text="heading", vector=vec(1.0)) == set()


def test_a_new_version_replaces_every_passage_of_the_old_one(knowledge: KnowledgeStore) -> None:
    # GIVEN a first version of three passages, each with its own word
    old = put(knowledge, doc("runbook", "# A\nalpha one\n# B\nbravo two\n# C\ncharlie three"))

    # WHEN a second version of two passages, with other words, is put
    new_doc = doc("runbook", "# D\ndelta four\n# E\necho five", version="v2")
    new = put(knowledge, new_doc)

    # THEN only the new passages are stored and found, by vector and by any old or new word
    assert len(old) == 3 and len(new) == 2
    assert knowledge.passages("t1", "runbook") == new
    assert every_id(knowledge) == ids(new)
    assert found_ids(knowledge, text="alpha bravo charlie one two three") == set()
    assert found_ids(knowledge, text="delta echo") == ids(new)
    assert knowledge.get_document("t1", "runbook") == new_doc
    assert listed(knowledge) == ["runbook"]


def test_putting_the_same_version_again_keeps_one_copy_of_each_passage(knowledge: KnowledgeStore) -> None:
    # GIVEN
    first = put(knowledge, doc("runbook"))

    # WHEN
    again = put(knowledge, doc("runbook"))

    # THEN
    assert again == first
    found = search(knowledge, vector=vec(1.0), text="runbook deploy failover rollback")
    assert sorted(c.passage.id for c in found) == sorted(ids(first))


def test_hostile_text_is_kept_exactly_and_found_by_its_words(knowledge: KnowledgeStore) -> None:
    # GIVEN a document made of every hostile piece, between words
    text = "# Heading \u202e\n" + "\n\n".join(f"zulu {piece} yankee" for piece in HOSTILE_PIECES)
    document = doc("hostile", text, title="\"NEAR( *title* ') OR 1=1 --")

    # WHEN
    passages = put(knowledge, document)

    # THEN it reads back exactly, and a word in it finds every passage
    assert knowledge.get_document("t1", "hostile") == document
    assert knowledge.passages("t1", "hostile") == passages
    assert found_ids(knowledge, text="yankee") == ids(passages)


def test_a_put_with_an_invalid_vector_changes_nothing(knowledge: KnowledgeStore) -> None:
    # GIVEN
    old = put(knowledge, doc("runbook"))
    nan = np.full(DIM, np.nan, dtype=np.float32)

    # WHEN a new version with a NaN vector is refused
    with pytest.raises(ValidationFailedError):
        put(knowledge, doc("runbook", "other text", version="v2"), nan)

    # THEN the old version is whole
    assert knowledge.passages("t1", "runbook") == old
    assert every_id(knowledge) == ids(old)


# --- delete -------------------------------------------------------------------------------------------


def test_delete_removes_every_passage_at_once_and_counts_them(knowledge: KnowledgeStore) -> None:
    # GIVEN two documents
    removed = put(knowledge, doc("runbook"))
    kept = put(knowledge, doc("other", "Deploy the other service."))

    # WHEN one is deleted
    count = knowledge.delete_document("t1", "runbook", NOW)

    # THEN its passages are gone from everything, the other's are all there
    assert count == len(removed) == 3
    assert knowledge.get_document("t1", "runbook") is None
    assert knowledge.passages("t1", "runbook") == []
    assert listed(knowledge) == ["other"]
    assert every_id(knowledge) == ids(kept)
    assert found_ids(knowledge, text="deploy failover rollback runbook") == ids(kept)
    assert knowledge.deleted_at("t1", "runbook") == NOW
    assert knowledge.deleted_at("t1", "other") is None


def test_repeated_deletes_keep_the_later_tombstone(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("runbook"))

    # WHEN deleted at a time, then at an earlier one (a late retry), then at a later one
    counts = [knowledge.delete_document("t1", "runbook", at) for at in (NOW, NOW - 60 * SECOND)]
    kept = knowledge.deleted_at("t1", "runbook")
    counts.append(knowledge.delete_document("t1", "runbook", NOW + 60 * SECOND))

    # THEN
    assert counts == [3, 0, 0]
    assert kept == NOW
    assert knowledge.deleted_at("t1", "runbook") == NOW + 60 * SECOND


def test_deleting_an_unknown_document_removes_nothing_and_leaves_a_tombstone(
    knowledge: KnowledgeStore,
) -> None:
    # GIVEN
    other = put(knowledge, doc("other"))

    # WHEN a delete reaches the store before the put it follows
    count = knowledge.delete_document("t1", "runbook", NOW)

    # THEN
    assert count == 0
    assert knowledge.deleted_at("t1", "runbook") == NOW
    assert every_id(knowledge) == ids(other)


def test_a_put_after_a_delete_stores_the_document_again(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("runbook"))
    knowledge.delete_document("t1", "runbook", NOW)

    # WHEN
    again = put(knowledge, doc("runbook", version="v2"))

    # THEN
    assert knowledge.passages("t1", "runbook") == again
    assert every_id(knowledge) == ids(again)


# --- tenants -----------------------------------------------------------------------------------------


def test_another_tenant_never_sees_a_document(knowledge: KnowledgeStore) -> None:
    # GIVEN tenant A's document
    passages = put(knowledge, doc("runbook", tenant="tenant-a"))

    # WHEN tenant B reads, lists, searches, counts hits and deletes by the same id
    seen = (
        knowledge.get_document("tenant-b", "runbook"),
        knowledge.passages("tenant-b", "runbook"),
        knowledge.list_documents("tenant-b").documents,
        search(knowledge, "tenant-b", vector=vec(1.0), text="runbook deploy failover"),
    )
    knowledge.record_document_hits("tenant-b", ["runbook"], NOW)
    removed = knowledge.delete_document("tenant-b", "runbook", NOW)

    # THEN B saw nothing and removed nothing: A's document is whole, searchable and unhit
    assert seen == (None, [], [], [])
    assert removed == 0
    assert knowledge.passages("tenant-a", "runbook") == passages
    assert every_id(knowledge, "tenant-a") == ids(passages)
    assert found_ids(knowledge, "tenant-a", text="failover") == {passages[1].id}
    assert knowledge.deleted_at("tenant-a", "runbook") is None
    document = knowledge.get_document("tenant-a", "runbook")
    assert document is not None and (document.hits, document.last_hit_at) == (0, None)


def test_two_tenants_keep_documents_of_the_same_id_apart(knowledge: KnowledgeStore) -> None:
    # GIVEN both tenants have a document "runbook", with different words
    a = put(knowledge, doc("runbook", "Alpha deploys on Mondays.", tenant="tenant-a"))
    b = put(knowledge, doc("runbook", "Bravo deploys on Fridays.", tenant="tenant-b"))

    # WHEN A deletes its own
    knowledge.delete_document("tenant-a", "runbook", NOW)

    # THEN B's is untouched, and neither search ever returned the other's passage
    assert ids(a) != ids(b)
    assert every_id(knowledge, "tenant-a") == set()
    assert found_ids(knowledge, "tenant-b", text="deploys alpha bravo") == ids(b)
    assert knowledge.passages("tenant-b", "runbook") == b
    assert knowledge.deleted_at("tenant-b", "runbook") is None


def test_another_tenants_better_matches_never_crowd_out_a_tenants_own(knowledge: KnowledgeStore) -> None:
    # GIVEN tenant B has many passages nearer the query and richer in its word than A's one
    for n in range(30):
        put(knowledge, doc(f"b{n}", "deploy deploy deploy.", tenant="tenant-b"), vec(1.0))
    [own] = put(
        knowledge,
        doc("a", "We deploy on Mondays, among many other things.", tenant="tenant-a"),
        at_cosine(0.1),
    )

    # WHEN A searches for one hit of each kind
    found = search(knowledge, "tenant-a", vector=vec(1.0), text="deploy", limit=1)

    # THEN A's passage is found by both
    assert [(c.passage.id, c.lexical is not None) for c in found] == [(own.id, True)]


def test_a_search_during_puts_sees_one_whole_version(knowledge: KnowledgeStore) -> None:
    # GIVEN two versions of one document: three passages, then two
    versions = [
        doc("runbook", "# A\ncommon alpha\n# B\ncommon bravo\n# C\ncommon charlie", version="v1"),
        doc("runbook", "# D\ncommon delta\n# E\ncommon echo", version="v2"),
    ]
    expected = [ids(passages_of(v)) for v in versions]
    put(knowledge, versions[0])
    done = threading.Event()

    def writer() -> None:
        try:
            for n in range(40):
                put(knowledge, versions[(n + 1) % 2])
        finally:
            done.set()

    # WHEN one thread puts the versions in turn while this one searches
    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[set[str]] = []
    while not done.is_set() or not seen:
        seen.append(found_ids(knowledge, vector=vec(1.0)))
        seen.append(found_ids(knowledge, text="common"))
    thread.join()

    # THEN every search saw exactly one version's passages, never both and never none
    assert all(s in expected for s in seen), [s for s in seen if s not in expected][:3]


# --- search ------------------------------------------------------------------------------------------


def test_vector_search_returns_the_nearest_first_with_its_cosine(knowledge: KnowledgeStore) -> None:
    # GIVEN three documents at known cosines to vec(1)
    for doc_id, cosine in (("far", 0.2), ("near", 0.95), ("middle", 0.6)):
        put(knowledge, doc(doc_id, f"Text of {doc_id}."), at_cosine(cosine))

    # WHEN searched by vec(1) scaled (a cosine does not depend on the query's length)
    found = search(knowledge, vector=vec(1.0) * 3)

    # THEN
    assert [c.passage.doc_id for c in found] == ["near", "middle", "far"]
    assert [c.similarity for c in found] == pytest.approx([0.95, 0.6, 0.2], abs=1e-5)
    assert [c.lexical for c in found] == [None, None, None]


def test_vector_search_returns_at_most_limit_and_nothing_for_limit_zero(knowledge: KnowledgeStore) -> None:
    # GIVEN
    for n in range(5):
        put(knowledge, doc(f"d{n}", f"Text {n}."), at_cosine(n / 5))

    # WHEN
    top2 = search(knowledge, vector=vec(1.0), limit=2)
    none = search(knowledge, vector=vec(1.0), text="text", limit=0)

    # THEN
    assert [c.passage.doc_id for c in top2] == ["d4", "d3"]
    assert none == []


@pytest.mark.parametrize(
    ("query", "doc_id"),
    [
        ("deploying", "deploy"),  # stemmed: "deploying" finds "deploy"
        ("Deploys", "deploy"),
        ("KUBERNETES", "titled"),  # a word of the title only
        ("Failover", "headed"),  # a word of a heading only
        ("what is the failover?", "headed"),
    ],
)
def test_lexical_search_finds_stems_titles_and_headings(
    knowledge: KnowledgeStore, query: str, doc_id: str
) -> None:
    # GIVEN
    put(knowledge, doc("deploy", "We deploy every Monday."))
    put(knowledge, doc("titled", "Scale the pods.", title="Kubernetes notes"))
    put(knowledge, doc("headed", "## Failover\nPromote the replica."))

    # WHEN
    found = search(knowledge, text=query)

    # THEN
    assert [c.passage.doc_id for c in found] == [doc_id]
    assert found[0].lexical is not None and found[0].lexical > 0
    assert found[0].similarity is None


def test_a_hit_by_both_searches_is_one_candidate_and_a_word_hit_gets_its_cosine(
    knowledge: KnowledgeStore,
) -> None:
    # GIVEN one passage near the query vector, one far from it that has the query's word
    put(knowledge, doc("near", "Nothing to see."), at_cosine(0.9))
    put(knowledge, doc("worded", "Rotate the certificates."), at_cosine(0.1))

    # WHEN searched with a limit of one hit of each kind
    found = search(knowledge, vector=vec(1.0), text="certificates", limit=1)

    # THEN the vector hit comes first, the word hit after it, with its cosine computed
    assert [c.passage.doc_id for c in found] == ["near", "worded"]
    assert found[1].similarity == pytest.approx(0.1, abs=1e-5)
    assert found[1].lexical is not None
    both = search(knowledge, vector=vec(1.0), text="certificates")
    assert sorted(c.passage.doc_id for c in both) == ["near", "worded"]


def test_a_search_with_neither_vector_nor_words_finds_nothing(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("runbook"))

    # WHEN / THEN
    assert search(knowledge) == search(knowledge, text="  ?! ") == []


@pytest.mark.parametrize("piece", HOSTILE_PIECES)
def test_hostile_query_text_is_only_words(knowledge: KnowledgeStore, piece: str) -> None:
    # GIVEN
    put(knowledge, doc("runbook"))

    # WHEN
    found = found_docs(knowledge, text=f"{piece} failover {piece}")

    # THEN the operators did nothing: the word is found, nothing else broke
    assert found == {"runbook"}


@pytest.mark.parametrize(
    ("on", "expected"),
    [
        (date(2025, 12, 31), {"open"}),
        (date(2026, 1, 1), {"h1", "open"}),
        (date(2026, 6, 30), {"h1", "open"}),
        (date(2026, 7, 1), {"h2", "open"}),
        (date(2099, 1, 1), {"h2", "open"}),
        (None, {"h1", "h2", "open"}),
    ],
)
def test_the_validity_filter_keeps_documents_valid_that_day(
    knowledge: KnowledgeStore, on: date | None, expected: set[str]
) -> None:
    # GIVEN a first half-year, a second one open-ended, and a document with no dates
    put(knowledge, doc("h1", "Policy text.", valid_from=date(2026, 1, 1), valid_until=date(2026, 6, 30)))
    put(knowledge, doc("h2", "Policy text.", valid_from=date(2026, 7, 1)))
    put(knowledge, doc("open", "Policy text."))

    # WHEN / THEN by vector and by word alike
    assert found_docs(knowledge, vector=vec(1.0), on=on) == expected
    assert found_docs(knowledge, text="policy", on=on) == expected


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ((), {"both", "ops", "none"}),
        (("ops",), {"both", "ops"}),
        (("ops", "db"), {"both"}),
        (("db", "ops", "db"), {"both"}),
        (("nope",), set()),
        (("ops", "nope"), set()),
    ],
)
def test_the_tags_filter_requires_every_tag(
    knowledge: KnowledgeStore, tags: tuple[str, ...], expected: set[str]
) -> None:
    # GIVEN
    put(knowledge, doc("both", "Backup text.", tags=["ops", "db"]))
    put(knowledge, doc("ops", "Backup text.", tags=["ops"]))
    put(knowledge, doc("none", "Backup text."))

    # WHEN / THEN
    assert found_docs(knowledge, vector=vec(1.0), tags=tags) == expected
    assert found_docs(knowledge, text="backup", tags=tags) == expected


# --- list_documents pagination --------------------------------------------------------------------------


def test_list_documents_pages_through_by_id(knowledge: KnowledgeStore) -> None:
    # GIVEN five documents of t1 put out of order, and one of t2
    for doc_id in ("d3", "d1", "d5", "d2", "d4"):
        put(knowledge, doc(doc_id, f"Text {doc_id}."))
    put(knowledge, doc("d0", "Not t1's.", tenant="t2"))

    # WHEN paged two at a time
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        page = knowledge.list_documents("t1", cursor=cursor, limit=2)
        pages.append([d.doc_id for d in page.documents])
        cursor = page.next_cursor
        if cursor is None:
            break
        assert len(pages) < 10, "the cursor never ran out"

    # THEN
    assert pages == [["d1", "d2"], ["d3", "d4"], ["d5"]]


def test_an_exactly_full_last_page_ends_the_listing(knowledge: KnowledgeStore) -> None:
    # GIVEN
    for doc_id in ("a", "b"):
        put(knowledge, doc(doc_id, "Text."))

    # WHEN
    page = knowledge.list_documents("t1", limit=2)

    # THEN
    assert [d.doc_id for d in page.documents] == ["a", "b"]
    assert page.next_cursor is None


def test_another_tenants_cursor_never_walks_its_documents(knowledge: KnowledgeStore) -> None:
    # GIVEN a cursor of tenant A, and documents of both tenants
    for doc_id in ("a1", "a2", "a3"):
        put(knowledge, doc(doc_id, "Text.", tenant="tenant-a"))
    put(knowledge, doc("b9", "Text.", tenant="tenant-b"))
    cursor = knowledge.list_documents("tenant-a", limit=1).next_cursor
    assert cursor is not None

    # WHEN tenant B pages on with it
    try:
        page = knowledge.list_documents("tenant-b", cursor=cursor, limit=10)
    except ValidationFailedError:  # SQLite: a cursor is bound to its tenant
        return

    # THEN (if it was not refused) B sees only its own documents
    assert {d.tenant_id for d in page.documents} <= {"tenant-b"}


@pytest.mark.parametrize("cursor", ["garbage", "e30", "!!!", "x" * 5000])
def test_a_forged_cursor_is_refused(knowledge: KnowledgeStore, cursor: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationFailedError):
        knowledge.list_documents("t1", cursor=cursor)


@pytest.mark.parametrize(
    "after", [MISSING, ["d1"], {"a": 1}, 5, None], ids=["missing", "list", "object", "number", "null"]
)
def test_a_forged_cursor_of_the_right_tenant_is_refused_on_sqlite(tmp_path: Path, after: object) -> None:
    # GIVEN an SQLite store with documents, and a cursor forged in its format for the right tenant
    from agent_memory.adapters.sqlite.sqlite_filters import encode_cursor
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore

    sqlite = SqliteMemoryStore(tmp_path / "memory.db", DIM, "contract-model")
    put(sqlite, doc("d1", "Text."))
    payload = {"tenant": "t1", "what": "documents"} | ({} if after is MISSING else {"after": after})

    # WHEN / THEN
    try:
        with pytest.raises(ValidationFailedError):
            sqlite.list_documents("t1", cursor=encode_cursor(payload))
    finally:
        sqlite.close()


# --- hits --------------------------------------------------------------------------------------------------


def test_record_document_hits_counts_each_search_and_keeps_the_last_time(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("a", "Text."))
    put(knowledge, doc("b", "Text."))

    # WHEN one search returned two passages of a and one of b, and a later one returned a again
    knowledge.record_document_hits("t1", ["a", "a", "b"], NOW)
    knowledge.record_document_hits("t1", ["a"], NOW + 60 * SECOND)

    # THEN
    documents = {d.doc_id: d for d in knowledge.list_documents("t1").documents}
    assert (documents["a"].hits, documents["a"].last_hit_at) == (2, NOW + 60 * SECOND)
    assert (documents["b"].hits, documents["b"].last_hit_at) == (1, NOW)
    whole = knowledge.get_document("t1", "a")
    assert whole is not None and (whole.hits, whole.last_hit_at) == (2, NOW + 60 * SECOND)


def test_record_document_hits_is_harmless_for_unknown_ids(knowledge: KnowledgeStore) -> None:
    # GIVEN
    put(knowledge, doc("a", "Text."))

    # WHEN
    knowledge.record_document_hits("t1", ["nope", "also-nope"], NOW)
    knowledge.record_document_hits("t1", [], NOW)
    knowledge.record_document_hits("t9", ["a"], NOW)

    # THEN nothing was made up and a is unhit
    assert listed(knowledge) == ["a"]
    assert knowledge.get_document("t1", "nope") is None
    document = knowledge.get_document("t1", "a")
    assert document is not None and (document.hits, document.last_hit_at) == (0, None)


def test_last_hit_at_is_the_latest_hit_when_records_arrive_out_of_order(
    knowledge: KnowledgeStore, request: pytest.FixtureRequest
) -> None:
    # GIVEN
    put(knowledge, doc("a", "Text."))

    # WHEN a later search's hits are recorded before an earlier one's
    knowledge.record_document_hits("t1", ["a"], NOW + 60 * SECOND)
    knowledge.record_document_hits("t1", ["a"], NOW)

    # THEN both count, and the last hit is the later one
    document = knowledge.get_document("t1", "a")
    assert document is not None and (document.hits, document.last_hit_at) == (2, NOW + 60 * SECOND)
