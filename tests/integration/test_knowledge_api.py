"""Shared knowledge through the API handler and the writer, on the real wiring: a tenant publishes
documents, an agent gets one list with its own memories and the documents' passages, each tagged;
another tenant gets neither; a delete takes every passage out of search at once."""

from __future__ import annotations

import json
from typing import Any

from tests.integration.conftest import call_api, drain_writes
from tests.payloads import load_event

from agent_memory.knowledge.rules.passages import CITATION_SEPARATOR

RUNBOOK = """# Database runbook

## Failover
To fail over the primary database, promote the replica in the standby region and flip the
writer endpoint. The failover takes about four minutes.

## Backups
Backups run nightly at 02:00 UTC and are kept for 35 days.
"""

ADR = """# ADR-12: Queue per tenant

## Decision
Every tenant gets its own FIFO message group so one writer touches a slice at a time.
"""

PUBLISHER = {"scopes": "knowledge read"}
AGENT_KEY = {"scopes": "read write", "agents": "support-bot"}


def request(
    method: str, path: str, body: Any = None, *, tenant: str = "acme", scopes: str = "read", agents: str = ""
) -> tuple[int, dict[str, Any]]:
    """One API call as API Gateway would hand it over, with the authorizer's context for a key of
    ``tenant`` with ``scopes`` (bound to ``agents``, space-separated, when given)."""
    event = load_event("api_search.json", path=path, httpMethod=method)
    event["body"] = None if body is None else json.dumps(body)
    event["requestContext"]["authorizer"].update(tenant_id=tenant, scopes=scopes, agents=agents)
    return call_api(event)


def put(
    doc_id: str, text: str, version: str = "v1", *, tenant: str = "acme", **fields: Any
) -> tuple[int, Any]:
    body = {"version": version, "title": text.splitlines()[0].lstrip("# "), "text": text, **fields}
    return request("PUT", f"/v1/knowledge/documents/{doc_id}", body, tenant=tenant, **PUBLISHER)


def search(query: str, *, tenant: str = "acme", sources: list[str] | None = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"query": query, "max_results": 20}
    if sources is not None:
        body["sources"] = sources
    status, answer = request(
        "POST", "/v1/agents/support-bot/memories/search", body, tenant=tenant, **AGENT_KEY
    )
    assert status == 200, answer
    return answer["results"]  # type: ignore[no-any-return]


def write_memory(content: str, *, tenant: str = "acme") -> None:
    status, _ = request(
        "POST",
        "/v1/agents/support-bot/memories",
        {"items": [{"content": content}]},
        tenant=tenant,
        **AGENT_KEY,
    )
    assert status == 202


def test_one_list_blends_memory_and_documents_each_tagged_and_another_tenant_sees_neither(
    local_env: object,
) -> None:
    # GIVEN a tenant that published two documents and an agent that remembers something
    assert put("db-runbook", RUNBOOK)[0] == 202
    assert put("adr-12", ADR)[0] == 202
    write_memory("Dana said their database runs in eu-west-1 and fails over to eu-central-1.")
    write_memory("globex secret: the database password rotates on Mondays.", tenant="globex")
    drain_writes()

    # WHEN the agent asks a question answered half by its memory and half by the runbook
    both = search("how do we fail over Dana's database?", sources=["private", "shared"])
    private_only = search("how do we fail over Dana's database?")
    other_tenant = search("how do we fail over the database?", tenant="globex", sources=["private", "shared"])

    # THEN one list holds both, each tagged, the passage with its document and heading
    tags = {r["source_tag"] for r in both}
    assert tags == {"private", "shared"}
    passage = next(r for r in both if r["source_tag"] == "shared")
    assert passage["document"]["doc_id"] == "db-runbook"
    assert passage["document"]["heading_path"] == ["Failover"]
    assert passage["document"]["version"] == "v1"
    assert passage["grain"] is None and passage["text"].startswith(
        f"[Database runbook{CITATION_SEPARATOR}Failover]"
    )
    assert "promote the replica" in passage["content"]
    memory = next(r for r in both if r["source_tag"] == "private")
    assert "Dana" in memory["content"] and memory["document"] is None
    # the default search is private only, as it always was
    assert {r["source_tag"] for r in private_only} == {"private"}
    # another tenant sees its own memory and none of acme's
    assert all(r["source_tag"] == "private" and "globex" in r["content"] for r in other_tenant)
    assert request("GET", "/v1/knowledge/documents", tenant="globex")[1]["documents"] == []
    assert request("GET", "/v1/knowledge/documents/db-runbook", tenant="globex")[0] == 404
    assert request("GET", "/v1/knowledge/documents/db-runbook/passages", tenant="globex")[0] == 404


def test_context_keeps_a_share_for_each_source_and_says_what_it_cut(local_env: object) -> None:
    # GIVEN documents and memories that all match, more than a small budget holds
    for i in range(6):
        assert put(f"runbook-{i}", RUNBOOK.replace("four minutes", f"{i + 4} minutes"))[0] == 202
        write_memory(
            f"Failover drill {i}: the database failed over to the standby region in {i + 3} minutes."
        )
    drain_writes()

    # WHEN the agent asks for a block of 200 tokens (both sources by default)
    status, block = request(
        "POST",
        "/v1/agents/support-bot/context",
        {"query": "database failover standby region minutes", "token_budget": 200},
        **AGENT_KEY,
    )

    # THEN each source got its share, the passages come first, and the cuts are reported
    assert status == 200
    by_source = {s["source"]: s for s in block["sources"]}
    assert set(by_source) == {"private", "shared"}
    assert by_source["shared"]["budget"] + by_source["private"]["budget"] == 200
    assert by_source["shared"]["lines"] >= 1 and by_source["private"]["lines"] >= 1
    assert by_source["shared"]["dropped"] + by_source["private"]["dropped"] == block["dropped"] > 0
    assert block["tokens"] <= 200
    tags = [item["source_tag"] for item in block["items"]]
    assert tags == sorted(tags, key=lambda t: t != "shared")
    assert (
        block["context"]
        .splitlines()[0]
        .startswith(f"[Database runbook{CITATION_SEPARATOR}Failover · shared]")
    )


def test_deleting_a_document_removes_every_passage_from_search_at_once(local_env: object) -> None:
    # GIVEN a stored document
    put("db-runbook", RUNBOOK)
    drain_writes()
    assert any(r["source_tag"] == "shared" for r in search("backups nightly", sources=["shared"]))

    # WHEN it is deleted (nothing drained after)
    status, body = request("DELETE", "/v1/knowledge/documents/db-runbook", **PUBLISHER)

    # THEN none of its passages is found, and it cannot be read
    assert status == 200 and body["passages_removed"] == 2
    assert search("backups nightly failover replica", sources=["shared"]) == []
    assert request("GET", "/v1/knowledge/documents/db-runbook")[0] == 404


def test_a_put_still_queued_when_its_document_is_deleted_is_not_stored(local_env: object) -> None:
    # GIVEN a document accepted but not yet stored
    assert put("db-runbook", RUNBOOK)[0] == 202

    # WHEN it is deleted before the writer gets to it, then the writer runs
    request("DELETE", "/v1/knowledge/documents/db-runbook", **PUBLISHER)
    drain_writes()

    # THEN it never appears
    assert request("GET", "/v1/knowledge/documents/db-runbook")[0] == 404
    assert search("backups nightly failover replica", sources=["shared"]) == []
    # and a later put of it is stored as usual
    put("db-runbook", RUNBOOK, version="v2")
    drain_writes()
    assert request("GET", "/v1/knowledge/documents/db-runbook")[1]["version"] == "v2"


def test_puts_are_idempotent_by_id_and_version_and_a_new_version_replaces_the_passages(
    local_env: object,
) -> None:
    # GIVEN a stored version
    put("adr-12", ADR)
    drain_writes()

    # WHEN the same version is put again, then with other content, then a new version
    same = put("adr-12", ADR)
    clash = put("adr-12", ADR + "\nAn afterthought.")
    newer = put("adr-12", "# ADR-12: Queue per tenant\n\n## Status\nSuperseded by ADR-19.\n", version="v2")
    drain_writes()

    # THEN: unchanged, conflict, and the new version's passages alone are found
    assert same == (200, {"doc_id": "adr-12", "version": "v1", "status": "unchanged", "passages": 1})
    assert clash[0] == 409 and clash[1]["error"]["code"] == "conflict"
    assert newer[0] == 202 and newer[1]["status"] == "accepted"
    passages = request("GET", "/v1/knowledge/documents/adr-12/passages")[1]
    assert passages["version"] == "v2"
    assert [p["heading_path"] for p in passages["passages"]] == [["Status"]]
    found = search("FIFO message group writer slice superseded", sources=["shared"])
    assert {r["document"]["version"] for r in found} == {"v2"}


def test_agents_read_shared_knowledge_but_never_write_it(local_env: object) -> None:
    # GIVEN a stored document
    put("adr-12", ADR)
    drain_writes()

    # WHEN a key bound to one agent, with read and write but not knowledge, tries every route
    listed = request("GET", "/v1/knowledge/documents", **AGENT_KEY)
    read = request("GET", "/v1/knowledge/documents/adr-12", **AGENT_KEY)
    written = request(
        "PUT", "/v1/knowledge/documents/adr-12", {"version": "v9", "title": "x", "text": "y"}, **AGENT_KEY
    )
    deleted = request("DELETE", "/v1/knowledge/documents/adr-12", **AGENT_KEY)

    # THEN it reads, and is refused writing and deleting
    assert listed[0] == 200 and [d["doc_id"] for d in listed[1]["documents"]] == ["adr-12"]
    assert listed[1]["documents"][0]["text"] is None
    assert read[0] == 200 and read[1]["text"] == ADR
    assert written[0] == 403 and deleted[0] == 403
    assert request("GET", "/v1/knowledge/documents/adr-12")[1]["version"] == "v1"


def test_another_tenant_cannot_delete_or_overwrite_a_document_by_its_id(local_env: object) -> None:
    # GIVEN acme's document
    put("adr-12", ADR)
    drain_writes()

    # WHEN globex, with the knowledge scope, deletes and puts the same id
    deleted = request("DELETE", "/v1/knowledge/documents/adr-12", tenant="globex", **PUBLISHER)
    put("adr-12", "# Globex ADR\n\nSomething else entirely.", version="v1", tenant="globex")
    drain_writes()

    # THEN acme's document is untouched, and each tenant reads its own
    assert deleted == (200, {"doc_id": "adr-12", "passages_removed": 0})
    assert request("GET", "/v1/knowledge/documents/adr-12")[1]["text"] == ADR
    assert request("GET", "/v1/knowledge/documents/adr-12", tenant="globex")[1]["title"] == "Globex ADR"


def test_bad_documents_get_a_clear_error_and_nothing_is_queued(local_env: object) -> None:
    # WHEN documents that break the contract are put
    cases = {
        "bad id": request(
            "PUT",
            "/v1/knowledge/documents/..%2Fetc",
            {"version": "v1", "title": "t", "text": "x"},
            **PUBLISHER,
        ),
        "unknown field": put("d", "# T\nx", colour="red"),
        "blank title": request(
            "PUT", "/v1/knowledge/documents/d", {"version": "v1", "title": " ", "text": "x"}, **PUBLISHER
        ),
        "bad version": put("d", "# T\nx", version="v 1"),
        "validity inside out": put("d", "# T\nx", valid_from="2026-02-01", valid_until="2026-01-01"),
        "too long": put("d", "# T\n" + "word " * 50_000),
        "too many tags": put("d", "# T\nx", tags=[f"t{i}" for i in range(30)]),
    }

    # THEN each is a 400 in the error shape, and nothing reaches the store
    assert {name: status for name, (status, _) in cases.items()} == dict.fromkeys(cases, 400)
    assert all(body["error"]["code"] == "validation_error" for _, body in cases.values())
    drain_writes()
    assert request("GET", "/v1/knowledge/documents")[1] == {
        "documents": [],
        "next_cursor": None,
        "pending": 0,
    }


def test_a_document_outside_its_validity_is_not_found(local_env: object) -> None:
    # GIVEN a document valid only in January 2026
    put(
        "jan-policy",
        "# January policy\n\nRefunds are doubled this month.",
        valid_from="2026-01-01",
        valid_until="2026-01-31",
    )
    drain_writes()

    # WHEN it is searched as of a day inside and a day after
    def found(as_of: str) -> list[str]:
        body = {"query": "refunds doubled", "sources": ["shared"], "as_of": as_of}
        status, answer = request("POST", "/v1/agents/support-bot/memories/search", body, **AGENT_KEY)
        assert status == 200
        return [r["document"]["doc_id"] for r in answer["results"]]

    # THEN only inside
    assert found("2026-01-15T12:00:00Z") == ["jan-policy"]
    assert found("2026-02-15T12:00:00Z") == []
