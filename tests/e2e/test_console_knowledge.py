"""The console's shared knowledge in a real browser (headless Chromium) against the local runtime:
the tenant's documents listed, one opened to its passages, deleted behind a confirm, and shared
passages in the search view with their source tag and citation.

Documents are put through the public API (``PUT /v1/knowledge/documents/{id}``) and read back
until stored; the browser then does what an operator does. The browser fixtures are the console
suite's own (`tests.e2e.test_console_browser`), so both suites run, or skip, on the same terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats, unique, wait_until
from tests.e2e.test_console_browser import browser, connect, page, pick, shot  # noqa: F401

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

SEP = " \u203a "
ADR = (
    "# ADR-12: Regions\n\nWe run in two regions, eu-west-1 and eu-west-2.\n\n"
    "## Consequences\n\nFail DNS over to eu-west-2 within five minutes when eu-west-1 is down.\n\n"
    "## Costs\n\nThe second region doubles the database bill.\n"
)
RUNBOOK = "# Restore\n\nRestore the database from the nightly snapshot, then replay the binlog.\n"
MEMORY = "Carol said the DNS failover drill is on Friday."


@dataclass(frozen=True)
class Published:
    tenant: str
    key: str
    agent: str


def _stored(api: Api, key: str, doc_ids: set[str]) -> bool:
    status, body = api("GET", "/v1/knowledge/documents", key=key)
    assert status == 200, body
    return body["pending"] == 0 and {d["doc_id"] for d in body["documents"]} >= doc_ids


@pytest.fixture(scope="module")
def published(api: Api, runtime: LocalRuntime) -> Published:
    """Two documents of one tenant, stored; an agent of it with one memory about the same thing."""
    tenant = unique("kn")
    _, key = runtime.keys.create(NewKey(tenant, "pro", admin=True))
    documents = {
        "adr-12": {"version": "v3", "title": "ADR-12: Regions", "text": ADR, "tags": ["ops", "adr"],
                   "source_uri": "docs/adr/12.md", "valid_from": "2026-01-01"},
        "runbooks.restore": {"version": "2026-11-01", "title": "Restore", "text": RUNBOOK,
                             "format": "markdown"},
    }  # fmt: skip
    for doc_id, body in documents.items():
        status, answer = api("PUT", f"/v1/knowledge/documents/{doc_id}", body, key=key)
        assert status == 202, answer
    agent = "ops-bot"
    status, answer = api("POST", f"/v1/agents/{agent}/memories", {"items": [{"content": MEMORY}]}, key=key)
    assert status == 202, answer
    wait_until(lambda: _stored(api, key, set(documents)), timeout_s=10)
    settled_stats(api, key, agent)
    return Published(tenant, key, agent)


def open_knowledge(page: Any, runtime: LocalRuntime, key: str) -> None:  # noqa: F811
    connect(page, runtime, key)
    page.click("#knowledge-link")
    page.wait_for_selector("table.documents tbody tr")


def test_the_operator_lists_the_documents_and_reads_one_passage_by_passage(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    published: Published,
) -> None:
    # GIVEN the console connected, on the shared knowledge page
    open_knowledge(page, runtime, published.key)

    # WHEN the list is read
    rows = page.locator("table.documents tbody tr")

    # THEN each document has its row: id, title, version, passages, hits, tags, validity
    assert rows.count() == 2
    adr = page.locator("table.documents tr[data-doc='adr-12']")
    cells = adr.locator("td").all_inner_texts()
    assert cells[:4] == ["adr-12", "ADR-12: Regions", "v3", "3"]
    assert "#ops #adr" in cells[6] and "2026-01-01" in cells[7]
    headers = page.locator("table.documents th").all_inner_texts()
    assert headers[:8] == ["id", "title", "version", "passages", "hits", "last hit", "tags", "valid"]
    assert page.url.endswith("#knowledge")
    assert "null" not in page.inner_text("#knowledge-view")

    # WHEN one is opened
    adr.get_by_role("button", name="adr-12").click()
    page.wait_for_selector("#document [data-passages='adr-12'] .record")

    # THEN its passages are listed in order, each under its heading path, with its offsets
    passages = page.locator("#document [data-passages='adr-12'] .record")
    assert passages.count() == 3
    second = passages.nth(1)
    assert second.locator(".heading-path").inner_text() == f"ADR-12: Regions{SEP}Consequences"
    assert "Fail DNS over to eu-west-2" in second.locator(".text").inner_text()
    start = ADR.index("Fail DNS")
    assert (
        second.locator("[data-offsets]").get_attribute("data-offsets")
        == f"{start}-{ADR.index('.', start) + 1}"
    )
    assert "docs/adr/12.md" in page.inner_text("#document .meta")
    assert page.url.endswith("#knowledge=adr-12")
    shot(page, "console-knowledge")


def test_search_tags_each_result_with_its_source_and_cites_shared_passages(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    published: Published,
) -> None:
    # GIVEN the agent's search view
    connect(page, runtime, published.key)
    pick(page, published.agent)
    page.click(".tabs [data-tab='search']")

    # WHEN the operator searches memory and shared knowledge together
    page.fill("#query", "DNS failover to eu-west-2")
    page.select_option("#search-sources", "both")
    page.click("#search button[type='submit']")
    page.wait_for_selector("table.results tbody tr[data-source='shared']")

    # THEN the passage is tagged shared and cited by title, headings and version
    shared = page.locator("table.results tbody tr[data-source='shared']").first
    assert shared.locator("[data-source-tag]").inner_text() == "shared"
    citation = shared.locator("[data-citation='adr-12']").inner_text()
    assert citation == f"per ADR-12: Regions{SEP}Consequences · version v3"
    assert shared.locator("[data-col='recency']").inner_text() == "\u2013"  # no recency
    # AND the memory is tagged private, with its grain
    private = page.locator("table.results tbody tr[data-source='private']")
    assert private.count() == 1
    assert private.locator("[data-source-tag]").inner_text() == "private"
    assert MEMORY in private.inner_text()
    shot(page, "console-search-both")

    # WHEN the passage's document is opened from the result
    shared.get_by_role("button", name="Open document").click()

    # THEN the knowledge page shows it
    page.wait_for_selector("#document [data-passages='adr-12']")
    assert not page.is_visible("#agent-view")


def test_a_document_is_deleted_only_behind_the_switch_and_a_confirm(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    published: Published,
    api: Api,
) -> None:
    # GIVEN the knowledge page: read-only until forgetting is allowed
    open_knowledge(page, runtime, published.key)
    row = page.locator("table.documents tr[data-doc='runbooks.restore']")
    assert not row.locator("button.delete-document").is_visible()
    page.check("#allow-forget")

    # WHEN the operator deletes a document, cancelling first, then confirming
    row.locator("button.delete-document").click()
    assert "Restore (runbooks.restore, version 2026-11-01)" in page.inner_text("#confirm-delete-text")
    page.click("#confirm-delete-cancel")
    assert row.count() == 1
    row.locator("button.delete-document").click()
    page.click("#confirm-delete-ok")

    # THEN it is gone from the page and from the API
    page.wait_for_selector("#notice:has-text('Deleted runbooks.restore: 1 passage gone from search.')")
    wait_until(lambda: page.locator("table.documents tr[data-doc='runbooks.restore']").count() == 0)
    status, _ = api("GET", "/v1/knowledge/documents/runbooks.restore", key=published.key)
    assert status == 404


def test_a_key_without_the_knowledge_scope_cannot_delete(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    published: Published,
    api: Api,
) -> None:
    # GIVEN a key that may read and forget, but not publish
    _, reader = runtime.keys.create(NewKey(published.tenant, "pro", scopes=frozenset({"read", "forget"})))
    open_knowledge(page, runtime, reader)

    # WHEN it tries to delete a document
    page.check("#allow-forget")
    page.locator("table.documents tr[data-doc='adr-12'] button.delete-document").click()
    page.click("#confirm-delete-ok")

    # THEN it is refused, and the document stays
    page.wait_for_selector("#notice.error")
    assert "403" in page.inner_text("#notice")
    status, _ = api("GET", "/v1/knowledge/documents/adr-12", key=published.key)
    assert status == 200


def test_a_tenant_without_documents_is_told_so(page: Any, runtime: LocalRuntime) -> None:  # noqa: F811
    # GIVEN a tenant that published nothing
    _, key = runtime.keys.create(NewKey(unique("empty"), "pro"))
    connect(page, runtime, key)

    # WHEN its operator opens the shared knowledge page
    page.click("#knowledge-link")

    # THEN
    page.wait_for_selector("[data-no-documents='true']")
    assert page.inner_text("#documents-count") == "0 documents"
    assert "published no documents" in page.inner_text("#documents")
