"""The client's shared-knowledge calls over the scripted transport: the documents' routes, and the
``sources`` of search and context (sent only when given, so an older server sees no change)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from pydantic import ValidationError
from tests.unit.client.test_client import CONTEXT, RESULT, error, make, ok

from agent_memory.client import ConflictError, NotFoundError

DOC_ID = "runbooks.failover"


def document(doc_id: str = DOC_ID, version: str = "v1", **changes: Any) -> dict[str, Any]:
    return {
        "doc_id": doc_id, "version": version, "title": "Failover", "format": "markdown",
        "source_uri": "runbooks/failover.md", "tags": ["ops"], "valid_from": None, "valid_until": None,
        "passages": 3, "created_at": "2026-11-20T00:00:00Z", "updated_at": "2026-11-21T00:00:00Z",
        "hits": 4, "last_hit_at": "2026-11-22T09:00:00Z", "text": None, **changes,
    }  # fmt: skip


PASSAGE_RESULT = {
    **RESULT, "id": "psg_aaaaaaaaaaaaaaaaaaaaaaaaaa", "source_tag": "shared", "grain": None, "kind": None,
    "recency": None, "importance": None, "occurred_at": None, "topic": None,
    "content": "Fail DNS over to eu-west-2.", "text": "[Failover \u203a DNS] Fail DNS over to eu-west-2.",
    "document": {"doc_id": DOC_ID, "title": "Failover", "version": "v1", "heading_path": ["DNS"],
                 "source_uri": "runbooks/failover.md", "start": 12, "end": 39},
}  # fmt: skip


# --- documents -------------------------------------------------------------------------------------


def test_put_document_sends_the_contract_body_to_the_documents_path() -> None:
    # GIVEN a service that accepts the document
    client, transport, _ = make(
        ok({"doc_id": DOC_ID, "version": "v1", "status": "accepted", "passages": 3}, 202)
    )

    # WHEN a document is put with every field
    put = client.put_document(
        DOC_ID, version="v1", title="Failover", text="# Failover\n\nFail DNS over.",
        source_uri="runbooks/failover.md", tags=("ops", "dns"), valid_from=date(2026, 1, 1),
        valid_until="2026-12-31",
    )  # fmt: skip

    # THEN it went as a PUT of the contract's body, dates as days, tags as a list
    [sent] = transport.sent
    assert (sent.method, sent.path) == ("PUT", f"/prod/v1/knowledge/documents/{DOC_ID}")
    assert sent.json() == {
        "version": "v1", "title": "Failover", "text": "# Failover\n\nFail DNS over.", "format": "markdown",
        "source_uri": "runbooks/failover.md", "tags": ["ops", "dns"], "valid_from": "2026-01-01",
        "valid_until": "2026-12-31",
    }  # fmt: skip
    assert (put.status, put.passages) == ("accepted", 3)


def test_put_document_leaves_out_what_was_not_given_and_reads_unchanged() -> None:
    # GIVEN a service that has this version already
    client, transport, _ = make(
        ok({"doc_id": "notes", "version": "abc123", "status": "unchanged", "passages": 1})
    )

    # WHEN a plain-text document is put with only what is required
    put = client.put_document("notes", version="abc123", title="Notes", text="One line.", format="text")

    # THEN no null went out, and the answer says nothing changed
    assert transport.sent[0].json() == {
        "version": "abc123", "title": "Notes", "text": "One line.", "format": "text", "tags": [],
    }  # fmt: skip
    assert put.status == "unchanged"


def test_a_document_the_contract_refuses_fails_before_anything_is_sent() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="version"):
        client.put_document(DOC_ID, version="has space", title="t", text="x")
    with pytest.raises(ValidationError, match="valid_until"):
        client.put_document(
            DOC_ID, version="v1", title="t", text="x", valid_from="2026-02-01", valid_until="2026-01-01"
        )
    with pytest.raises(ValueError, match="doc_id"):
        client.put_document("", version="v1", title="t", text="x")
    assert transport.sent == []


def test_the_same_version_with_other_content_is_a_conflict() -> None:
    # GIVEN
    client, transport, sleeps = make(error(409, "conflict"))

    # WHEN / THEN the 409 is typed, and not retried
    with pytest.raises(ConflictError):
        client.put_document(DOC_ID, version="v1", title="Failover", text="other text")
    assert len(transport.sent) == 1
    assert sleeps == []


def test_documents_are_listed_page_by_page_following_the_cursor() -> None:
    # GIVEN three documents, served two a page
    client, transport, _ = make(
        ok({"documents": [document("a"), document("b")], "next_cursor": "c1", "pending": 1}),
        ok({"documents": [document("c")], "next_cursor": None, "pending": 0}),
        ok({"documents": [], "next_cursor": None, "pending": 0}),
    )

    # WHEN every document is iterated, then one page asked for
    ids = [d.doc_id for d in client.iter_documents(page_size=2)]
    page = client.list_documents(cursor="c9", limit=10)

    # THEN the cursor went out as the query string, and the documents came back typed
    assert ids == ["a", "b", "c"]
    assert [s.query for s in transport.sent] == [
        {"limit": ["2"]},
        {"limit": ["2"], "cursor": ["c1"]},
        {"cursor": ["c9"], "limit": ["10"]},
    ]
    assert {s.path for s in transport.sent} == {"/prod/v1/knowledge/documents"}
    assert page.pending == 0


def test_one_document_its_passages_and_its_deletion() -> None:
    # GIVEN
    client, transport, _ = make(
        ok(document(text="# Failover\n\nFail DNS over.")),
        ok({"doc_id": DOC_ID, "version": "v1", "passages": [
            {"id": "psg_aaaaaaaaaaaaaaaaaaaaaaaaaa", "ordinal": 0, "heading_path": ["DNS"],
             "text": "Fail DNS over.", "start": 12, "end": 26}]}),
        ok({"doc_id": DOC_ID, "passages_removed": 3}),
    )  # fmt: skip

    # WHEN
    whole = client.get_document(DOC_ID)
    passages = client.document_passages(DOC_ID)
    deleted = client.delete_document(DOC_ID)

    # THEN
    assert [(s.method, s.path) for s in transport.sent] == [
        ("GET", f"/prod/v1/knowledge/documents/{DOC_ID}"),
        ("GET", f"/prod/v1/knowledge/documents/{DOC_ID}/passages"),
        ("DELETE", f"/prod/v1/knowledge/documents/{DOC_ID}"),
    ]
    assert whole.text == "# Failover\n\nFail DNS over."
    assert whole.last_hit_at == datetime(2026, 11, 22, 9, tzinfo=UTC)
    assert [(p.heading_path, p.start, p.end) for p in passages.passages] == [(["DNS"], 12, 26)]
    assert deleted.passages_removed == 3


def test_a_document_id_is_quoted_into_the_path() -> None:
    # GIVEN
    client, transport, _ = make(error(404, "not_found"))

    # WHEN / THEN
    with pytest.raises(NotFoundError):
        client.get_document("../admin")
    assert transport.sent[0].path == "/prod/v1/knowledge/documents/..%2Fadmin"


def test_waiting_for_documents_polls_each_until_its_version_is_stored() -> None:
    # GIVEN one document not stored yet, then an older version, then the new one; another at once
    client, transport, sleeps = make(
        error(404, "not_found"),
        ok(document("b", "v2")),
        ok(document("a", "v1")),
        ok(document("a", "v2")),
    )

    # WHEN
    stored = client.wait_until_documents_stored({"a": "v2", "b": "v2"}, interval_s=0.05)

    # THEN each was asked for until it matched, and no more
    assert {d: doc.version for d, doc in stored.items()} == {"a": "v2", "b": "v2"}
    assert [s.path.rsplit("/", 1)[1] for s in transport.sent] == ["a", "b", "a", "a"]
    assert sleeps == [0.05, 0.05]


def test_waiting_for_documents_gives_up_at_the_deadline_naming_them() -> None:
    # GIVEN
    client, _, _ = make(ok(document("a", "v1")))

    # WHEN / THEN
    with pytest.raises(TimeoutError, match=r"1 document.*: a"):
        client.wait_until_documents_stored({"a": "v2"}, timeout_s=0)


# --- sources of search and context ----------------------------------------------------------------


def test_search_sends_sources_only_when_given_and_reads_shared_results() -> None:
    # GIVEN
    client, transport, _ = make(
        ok({"results": [PASSAGE_RESULT, RESULT]}), ok({"results": []}), ok({"results": []})
    )

    # WHEN a search names its sources, a second uses the shorthand, a third names none
    found = client.search(
        "bot", "how do we fail over?", sources=["shared", "private"], ranking={"shared_weight": 0.5}
    )
    client.search("bot", "x", sources="both")
    client.search("bot", "x")

    # THEN the sources went out as given, and a search without them sends no such field
    first, second, third = (s.json() for s in transport.sent)
    assert first["sources"] == ["shared", "private"]
    assert first["ranking"] == {"shared_weight": 0.5}
    assert second["sources"] == ["private", "shared"]
    assert "sources" not in third
    # AND a shared result carries its document, with no grain, recency or importance
    passage, memory = found.results
    assert (passage.source_tag, memory.source_tag) == ("shared", "private")
    assert passage.document is not None and passage.document.heading_path == ["DNS"]
    assert (passage.grain, passage.recency, passage.importance, passage.occurred_at) == (
        None,
        None,
        None,
        None,
    )


def test_context_sends_sources_and_shared_share_only_when_given() -> None:
    # GIVEN
    shared_block = {
        **CONTEXT,
        "items": [{"id": "psg_aaaaaaaaaaaaaaaaaaaaaaaaaa", "source_tag": "shared", "grain": None,
                   "time_key": None, "occurred_at": None, "doc_id": DOC_ID, "score": 0.6, "tokens": 15}],
        "sources": [{"source": "shared", "budget": 200, "tokens": 15, "lines": 1, "dropped": 0,
                     "truncated": False},
                    {"source": "private", "budget": 300, "tokens": 0, "lines": 0, "dropped": 2,
                     "truncated": False}],
    }  # fmt: skip
    client, transport, _ = make(ok(shared_block), ok(CONTEXT))

    # WHEN
    block = client.context("bot", "failover", token_budget=500, sources="both", shared_share=0.5)
    client.context("bot", "failover")

    # THEN
    assert transport.sent[0].json()["sources"] == ["private", "shared"]
    assert transport.sent[0].json()["shared_share"] == 0.5
    assert not {"sources", "shared_share"} & set(transport.sent[1].json())
    assert [(i.source_tag, i.doc_id) for i in block.items] == [("shared", DOC_ID)]
    assert {s.source: s.budget for s in block.sources} == {"shared": 200, "private": 300}


def test_sources_the_contract_refuses_fail_before_anything_is_sent() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="sources"):
        client.search("bot", "x", sources=["private", "private"])
    with pytest.raises(ValidationError, match="sources"):
        client.search("bot", "x", sources="everything")
    with pytest.raises(ValidationError, match="shared_share"):
        client.context("bot", "x", shared_share=1.5)
    assert transport.sent == []
