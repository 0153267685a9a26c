"""The tenant's shared knowledge through the LLM tools: `search_knowledge`, the ``sources`` of
`search_memory`, and passages rendered with the citation a model can quote."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.unit.tools.conftest import NOW, FakeMemoryApi

from agent_memory.contract.v1 import (
    ContextItem,
    ContextRequest,
    ContextResponse,
    PassageRef,
    SearchRequest,
    SearchResponse,
    SearchResult,
)
from agent_memory.model.limits import MAX_RESULTS
from agent_memory.tools import TOOLS_BY_NAME, MemoryTools, anthropic_tools

ID = re.compile(r"\(id (mem_[a-z2-7]+)\)")
DNS = "Fail DNS over to eu-west-2 within five minutes.\nThen page the on-call."


def passage(
    content: str = DNS,
    *,
    doc_id: str = "adr-12",
    title: str = "ADR-12",
    heading_path: tuple[str, ...] = ("Consequences",),
    version: str = "v3",
    source_uri: str | None = "docs/adr/12.md",
) -> SearchResult:
    """A shared passage as the service answers it: a document, no grain, no date."""
    return SearchResult(
        id=f"psg_{doc_id.replace('-', '')}aaaaaaaaaaaaaaaaaaaa", source_tag="shared",
        document=PassageRef(doc_id=doc_id, title=title, version=version, heading_path=list(heading_path),
                            source_uri=source_uri, start=0, end=len(content)),
        grain=None, time_key=None, kind=None, content=content, text=content, score=0.6, similarity=0.7,
        recency=None, importance=None, occurred_at=None, topic=None, user_id=None, conversation_id=None,
        source=None, metadata={}, tags=["ops"],
    )  # fmt: skip


@dataclass
class KnowledgeApi(FakeMemoryApi):
    """`FakeMemoryApi` that also holds shared passages: a search that asks for ``shared`` gets
    them (after the memories it finds, when it asks for both), and a context block frames its
    memories with them, as the service does."""

    passages: list[SearchResult] = field(default_factory=list)

    def search(self, agent_id: str, query: Any = None, **fields: Any) -> SearchResponse:
        request = SearchRequest.model_validate({"query": query, **fields})
        sources = set(request.sources or ["private"])
        memories = super().search(agent_id, query, **fields).results if "private" in sources else []
        if "private" not in sources:
            self.searches.append((agent_id, request))
        shared = self.passages if "shared" in sources and request.query else []
        return SearchResponse(results=[*memories, *shared][: request.max_results])

    def context(self, agent_id: str, query: Any, /, **fields: Any) -> ContextResponse:
        block = super().context(agent_id, query, **fields)
        request = ContextRequest.model_validate({"query": query, **fields})
        if "shared" not in (request.sources or ["private", "shared"]) or not self.passages:
            return block
        lines = [f"[{p.document.title if p.document else ''} · shared] {p.content}" for p in self.passages]
        items = [
            ContextItem(id=p.id, source_tag="shared", grain=None, time_key=None, occurred_at=None,
                        doc_id=p.document.doc_id if p.document else None, score=p.score, tokens=10)
            for p in self.passages
        ]  # fmt: skip
        return block.model_copy(
            update={
                "context": "\n".join([*lines, block.context]).strip(),
                "items": [*items, *block.items],
                "tokens": block.tokens + 10 * len(items),
            }
        )


@pytest.fixture
def knowledge() -> KnowledgeApi:
    return KnowledgeApi(passages=[passage()])


def tools_for(api: FakeMemoryApi, user_id: str | None = "u-7") -> MemoryTools:
    return MemoryTools(api, "support-bot", user_id=user_id, clock=lambda: NOW)


# --- the definitions -----------------------------------------------------------------------------


def test_search_knowledge_is_a_tool_of_every_format_with_a_required_query() -> None:
    # GIVEN
    tool = TOOLS_BY_NAME["search_knowledge"]

    # WHEN
    schema = tool.input_schema

    # THEN it takes a query, how many passages and tags, and nothing else
    assert set(schema["properties"]) == {"query", "max_results", "tags"}
    assert schema["required"] == ["query"]
    assert schema["properties"]["max_results"]["maximum"] == MAX_RESULTS
    assert schema["properties"]["tags"]["type"] == "array"
    Draft202012Validator.check_schema(schema)
    assert "search_knowledge" in [t["name"] for t in anthropic_tools()]
    assert "cite" in tool.description


def test_search_memorys_sources_are_the_contracts_list_of_sources() -> None:
    # GIVEN
    sources = TOOLS_BY_NAME["search_memory"].input_schema["properties"]["sources"]

    # WHEN
    validator = Draft202012Validator({"type": "object", "properties": {"sources": sources}})

    # THEN a list of one or both sources, each named once by the schema's own choices
    assert sources["items"]["enum"] == ["private", "shared"]
    assert (sources["minItems"], sources["maxItems"]) == (1, 2)
    assert validator.is_valid({"sources": ["private", "shared"]})
    assert not validator.is_valid({"sources": "both"})
    assert not validator.is_valid({"sources": []})
    assert "sources" not in TOOLS_BY_NAME["search_memory"].input_schema.get("required", [])


# --- search_knowledge ----------------------------------------------------------------------------


def test_search_knowledge_searches_shared_only_and_cites_each_passage(knowledge: KnowledgeApi) -> None:
    # GIVEN a memory that would match too, and a passage of a document with a path of headings
    tools = tools_for(knowledge)
    tools.call("remember", {"content": "We fail DNS over by hand."})
    knowledge.passages.append(
        passage("Restore from the nightly snapshot.", doc_id="runbooks.restore", title="Restore",
                heading_path=("Databases", "Postgres"), version="2026-11-01", source_uri=None)
    )  # fmt: skip

    # WHEN the model searches shared knowledge
    text, is_error = tools.call("search_knowledge", {"query": "fail over", "tags": ["ops"], "max_results": 5})

    # THEN the service was asked for shared knowledge only, for the tenant (no end user)
    [(agent, request)] = knowledge.searches
    assert (agent, request.sources, request.query) == ("support-bot", ["shared"], "fail over")
    assert (request.tags, request.max_results, request.user_id) == (["ops"], 5, None)
    # AND each passage reads under its citation (title, headings, version), its document last
    assert not is_error
    assert text.splitlines() == [
        "2 passages of shared knowledge for 'fail over' (tags ops), best match first:",
        "[ADR-12 \u203a Consequences, version v3 · shared] Fail DNS over to eu-west-2 within five minutes.",
        "  Then page the on-call. (doc adr-12, docs/adr/12.md)",
        "[Restore \u203a Databases \u203a Postgres, version 2026-11-01 · shared] Restore from the nightly "
        "snapshot. (doc runbooks.restore)",
    ]


def test_search_knowledge_says_when_nothing_was_found(knowledge: KnowledgeApi) -> None:
    # GIVEN
    knowledge.passages.clear()

    # WHEN
    text, is_error = tools_for(knowledge).call("search_knowledge", {"query": "vacation policy"})

    # THEN
    assert not is_error
    assert text == "No shared knowledge found for 'vacation policy'."


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "Invalid arguments for search_knowledge: query: Field required"),
        ({"query": "   "}, "query must say what to look for"),
        ({"query": "x", "sources": ["private"]}, "sources: Extra inputs are not permitted"),
        ({"query": "x", "max_results": MAX_RESULTS + 1}, "max_results:"),
    ],
)
def test_a_search_knowledge_call_without_a_query_or_with_wrong_arguments_is_an_error_result(
    knowledge: KnowledgeApi, arguments: dict[str, Any], expected: str
) -> None:
    # WHEN
    text, is_error = tools_for(knowledge).call("search_knowledge", arguments)

    # THEN
    assert is_error
    assert expected in text
    assert knowledge.searches == []


# --- search_memory over both sources -------------------------------------------------------------


def test_search_memory_over_both_sources_tags_every_line_with_its_source(knowledge: KnowledgeApi) -> None:
    # GIVEN a memory of the bound user and a passage that both match
    tools = tools_for(knowledge)
    stored, _ = tools.call("remember", {"content": "Fail over only after the incident call."})
    [memory_id] = ID.findall(stored)

    # WHEN the model searches both, memory first
    text, is_error = tools.call("search_memory", {"query": "fail over", "sources": ["private", "shared"]})

    # THEN both sources were asked for, the memory for the bound user
    request = knowledge.searches[-1][1]
    assert (request.sources, request.user_id) == (["private", "shared"], "u-7")
    # AND each line says where it comes from: the memory dated, the passage cited
    assert not is_error
    head, memory, cited, continued = text.splitlines()
    assert head == "2 results from memory (grain all, any time) and shared knowledge, best match first:"
    assert (
        memory == f"[2026-11-22 · working · private] Fail over only after the incident call. (id {memory_id})"
    )
    assert cited.startswith("[ADR-12 \u203a Consequences, version v3 · shared] Fail DNS over")
    assert continued.endswith("(doc adr-12, docs/adr/12.md)")


def test_search_memory_of_shared_knowledge_alone_reads_like_search_knowledge(knowledge: KnowledgeApi) -> None:
    # WHEN
    text, _ = tools_for(knowledge).call("search_memory", {"query": "DNS", "sources": ["shared"]})

    # THEN
    assert text.splitlines()[0] == "1 passage of shared knowledge, best match first:"
    assert "· shared]" in text.splitlines()[1]


def test_search_memory_without_sources_sends_none_and_reads_as_before(knowledge: KnowledgeApi) -> None:
    # GIVEN
    tools = tools_for(knowledge)
    tools.call("remember", {"content": "DNS moved to Route 53."})

    # WHEN
    text, _ = tools.call("search_memory", {"query": "DNS"})

    # THEN the request names no sources (the service's default: memory), and no line is tagged
    assert knowledge.searches[-1][1].sources is None
    assert text.splitlines()[1].startswith("[2026-11-22 · working] DNS moved to Route 53. (id mem_")


def test_nothing_found_in_either_source_says_both_were_searched(knowledge: KnowledgeApi) -> None:
    # GIVEN
    knowledge.passages.clear()

    # WHEN
    text, _ = tools_for(knowledge).call(
        "search_memory", {"query": "tax", "sources": ["shared", "private"], "grain": "weekly"}
    )

    # THEN
    assert text == "Nothing found in memory (grain weekly, any time) or in shared knowledge."


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        (["everything"], "sources:"),
        (["shared", "shared"], "sources must not repeat a source"),
        ([], "sources:"),
    ],
)
def test_wrong_sources_are_error_results(knowledge: KnowledgeApi, sources: list[str], expected: str) -> None:
    # WHEN
    text, is_error = tools_for(knowledge).call("search_memory", {"query": "x", "sources": sources})

    # THEN
    assert is_error
    assert expected in text


# --- recall_context with shared passages ---------------------------------------------------------


def test_recall_context_counts_the_shared_passages_that_frame_the_memories(knowledge: KnowledgeApi) -> None:
    # GIVEN a memory about the failover, and a passage the service puts first
    tools = tools_for(knowledge)
    tools.call("remember", {"content": "The failover drill is on Friday."})

    # WHEN
    text, is_error = tools.call("recall_context", {"query": "failover drill"})

    # THEN the head line counts each source, passages first as in the block
    assert not is_error
    head, *block = text.splitlines()
    assert head.startswith(
        "Context for 'failover drill': 1 passage of shared knowledge, then 1 memory, oldest first ("
    )
    assert block[0].startswith("[ADR-12 · shared] Fail DNS over")
    assert block[-1] == "[2026-11-22 · working] The failover drill is on Friday."


def test_recall_context_of_shared_passages_alone_names_no_memories(knowledge: KnowledgeApi) -> None:
    # WHEN
    text, _ = tools_for(knowledge).call("recall_context", {"query": "DNS"})

    # THEN
    assert text.splitlines()[0].startswith("Context for 'DNS': 1 passage of shared knowledge (")


def test_a_passage_without_its_document_still_reads(knowledge: KnowledgeApi) -> None:
    # GIVEN an answer that lost the passage's document (an older or broken service)
    knowledge.passages = [passage().model_copy(update={"document": None})]

    # WHEN
    text, is_error = tools_for(knowledge).call("search_knowledge", {"query": "DNS"})

    # THEN
    assert not is_error
    assert text.splitlines()[1].startswith("[shared] Fail DNS over")


def test_a_private_result_of_a_mixed_search_keeps_its_summaries(knowledge: KnowledgeApi) -> None:
    # GIVEN a weekly summary found beside the passage
    knowledge.summaries = [
        SearchResult(
            id="sum_abcdefghijklmnopqrstuvwxyz", grain="weekly", time_key="2026-W47", kind="summary",
            content="Failover drill planned.", text="", score=0.5, similarity=None, recency=0.5,
            importance=0.5, occurred_at=datetime(2026, 11, 16, tzinfo=UTC), topic=None, user_id=None,
            conversation_id=None, source=None, metadata={}, tags=[],
        )
    ]  # fmt: skip

    # WHEN
    text, _ = tools_for(knowledge).call("search_memory", {"query": "drill", "sources": ["private", "shared"]})

    # THEN
    assert "[2026-W47 · weekly · private] Failover drill planned. (id sum_abcdefghijklmnopqrstuvwxyz)" in text
