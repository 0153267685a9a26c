"""Hostile search text, tags and cursors must reach the store as values, never as syntax.

SQLite: the lexical query is built from user text (`query_terms`, `fts_match`); FTS5 has its own
query language (``"`` ``*`` ``^`` ``:`` ``NEAR()`` ``AND OR NOT``, column filters). Whatever the
text, the search must not raise and must match only records that share a word with it. Tags
are compared as exact values (no ``LIKE``, no wildcards). Cursors are opaque: a forged or garbled
one is a 400 or a page of the caller's own records, nothing else.

OpenSearch: the request body is recorded by the transport double of
`test_opensearch_requests.py`. Hostile text may only ever appear as the words of a
``multi_match`` (analysed text, not ``query_string`` syntax) and tags only as ``terms`` values; the
structure of the request never changes with the input.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opensearchpy import OpenSearch
from tests.fakes import FixedClock
from tests.payloads import memory_record
from tests.strategies import HOSTILE_PIECES, hostile
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    Cluster,
    RecordingConnection,
    search_response,
)

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.opensearch.opensearch_client import client_options
from agent_memory.adapters.opensearch.opensearch_cursors import decode_cursor
from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.contract.v1 import SearchRequest
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import StoredRecord, StoreQuery
from agent_memory.recall.memories import MemoriesService
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.settings import Settings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TENANT, AGENT = "acme", "corpus"
VOCABULARY = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
#: (content, topic): every record is a few vocabulary words, so which records a query *may*
#: match is known from the words alone.
CORPUS = [
    ("alpha bravo", None),
    ("charlie delta", None),
    ("echo foxtrot", "golf"),
    ("hotel", None),
    ("bravo charlie", None),
    ("café naïve", None),
]
#: Records that hostile text must never reach: another tenant's, and another agent's.
OUTSIDERS = [("other-tenant", AGENT), (TENANT, "other-agent")]
TAGS = [
    "%",
    "*",
    "_",
    "a%",
    "' OR '1'='1",
    '["x"]',
    'x","y',
    "NULL",
    "\u202etag",
    "TAG",
    "tag",
    "tenant_id:*",
    "\\",
    "é",
    "e\u0301",
]

T = TypeVar("T")
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _record(
    tenant: str, agent: str, content: str, topic: str | None = None, tags: list[str] | None = None
) -> MemoryRecord:
    return memory_record(
        "mem_" + uuid.uuid4().hex[:26].translate(str.maketrans("0189", "abcd")),
        content,
        tenant=tenant,
        agent=agent,
        at=NOW - timedelta(days=1),
        topic=topic,
        topic_raw=topic,
        tags=tags or [],
        content_hash=uuid.uuid4().hex,
    )


class Corpus:
    def __init__(self, path: Path) -> None:
        self.embedder = HashingEmbedder(64)
        self.store = SqliteMemoryStore(path / "memory.db", dimension=64, model_id=self.embedder.model_id)
        self.pending = LocalPendingWrites(path / "queue.db")
        self.records: dict[str, MemoryRecord] = {}
        self.tagged: dict[str, MemoryRecord] = {}
        rows = [_record(TENANT, AGENT, content, topic) for content, topic in CORPUS]
        self.records = {r.id: r for r in rows}
        # Outsiders hold every word and every tag: any leak past the scope would show.
        everything = " ".join(VOCABULARY) + " café naïve"
        rows += [_record(t, a, everything, "golf", TAGS[:20]) for t, a in OUTSIDERS]
        # One record per tag, one with two, in an agent of their own.
        for i, tag in enumerate(TAGS):
            row = _record(TENANT, "tagged", f"tagged record {i}", tags=[tag])
            self.tagged[row.id] = row
        both = _record(TENANT, "tagged", "tagged twice", tags=["tag", "TAG"])
        self.tagged[both.id] = both
        rows += list(self.tagged.values())
        vectors = self.embedder.embed([r.content for r in rows])
        self.store.put([StoredRecord(r, v) for r, v in zip(rows, vectors, strict=True)])

    def lexical(self, text: str, agent: str = AGENT) -> set[str]:
        query = StoreQuery(tenant_id=TENANT, agent_id=agent, now=NOW, text=text, limit=100)
        return {c.record.id for c in self.store.search(query)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    yield Corpus(tmp_path_factory.mktemp("corpus"))


def _tokens(text: str) -> list[str]:
    """How FTS5's unicode61 tokenizer cuts ASCII text: runs of letters and digits, lower-cased."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _expected_ascii(corpus: Corpus, query: str) -> set[str]:
    """The records an ASCII query must match, derived from the documented contract alone.

    The query's words (``\\w+`` runs, operator words included: they are quoted) are each searched
    as a phrase; a record matches when its content or topic holds any of those phrases. A query
    without a word is no query: the newest records come back.
    """
    words = [w.lower() for w in re.findall(r"\w+", query, re.ASCII)]
    if not words:  # nothing to search for: the newest records of the window, as documented
        return set(corpus.records)
    phrases = [p for p in (_tokens(w) for w in dict.fromkeys(words)) if p]
    hits = set()
    for record in corpus.records.values():
        for field in (record.content, record.topic or ""):
            toks = _tokens(field)
            if any(toks[i : i + len(p)] == p for p in phrases for i in range(len(toks))):
                hits.add(record.id)
    return hits


ascii_pieces = st.one_of(
    st.sampled_from(VOCABULARY),
    st.sampled_from([p for p in HOSTILE_PIECES if p.isascii()]),
    st.sampled_from(["AND", "OR", "NOT", "NEAR", "and", "near", "_", "-", "+", "alpha_bravo", "bravo*", "5"]),
)
ascii_queries = st.lists(st.tuples(ascii_pieces, st.sampled_from(["", " ", "  ", "\t"])), max_size=10).map(
    lambda parts: "".join(p + sep for p, sep in parts)
)


def _queries(*queries: str) -> Callable[[T], T]:
    """``@example(query=...)`` for each of ``queries``: what every run tries before its own."""

    def add(test: T) -> T:
        for query in reversed(queries):
            test = example(query=query)(test)
        return test

    return add


@FUZZ
@given(query=ascii_queries)
@_queries(
    "content:alpha OR topic:*",
    '"alpha" OR "bravo"',
    "NEAR(alpha bravo, 1)",
    "alpha AND NOT bravo",
    "{content topic}: hotel",
    "^alpha + -bravo",
    "* OR *",
    "') OR 1=1 --",
    '" OR ""="',
    "alpha_bravo",
    "_",
)
def test_fts5_syntax_in_a_query_is_searched_as_words(corpus: Corpus, query: str) -> None:
    # WHEN a query full of FTS5 operators is searched lexically
    hits = corpus.lexical(query)

    # THEN it neither raises nor widens: exactly the records sharing one of its words match
    assert hits == _expected_ascii(corpus, query)


@FUZZ
@given(
    query=st.lists(st.one_of(st.sampled_from(VOCABULARY), hostile(max_pieces=3)), max_size=8).map(" ".join)
)
@_queries("caf\u00e9 na\u00efve", "alpha\x00bravo", "\u202ealpha", "alpha\ud800")
def test_any_unicode_query_matches_only_records_sharing_a_word(corpus: Corpus, query: str) -> None:
    # WHEN
    hits = corpus.lexical(query)
    # THEN
    assert hits <= set(corpus.records)  # never another tenant's or agent's
    if not re.search(r"\w", query):
        return  # no word at all: the newest records, as documented
    folded = query.casefold()
    for record_id in hits:
        # every hit is in scope and holds a word that the query holds too
        record = corpus.records[record_id]
        words = _tokens(record.content) + _tokens(record.topic or "") + record.content.casefold().split()
        assert any(w in folded for w in words), (query, record.content)


@FUZZ
@given(query=st.one_of(hostile(surrogates=False), st.sampled_from(VOCABULARY)))
def test_the_search_service_scopes_hostile_queries_to_the_callers_agent(corpus: Corpus, query: str) -> None:
    # GIVEN
    service = SearchService(corpus.store, corpus.embedder, FixedClock(NOW), RankingWeights())
    request = SearchRequest.model_validate({"query": query, "max_results": 100, "grain": "all"})
    # WHEN
    try:
        results = service.search(TENANT, AGENT, request.to_query())
    finally:
        discard_unpublished_metrics()  # many examples in one test: no handler flushes between them
    # THEN
    # vector search returns neighbours for any text; none of them may come from outside the agent
    assert {r.id for r in results} <= set(corpus.records)


@pytest.mark.parametrize("tag", [*TAGS, "%%", "tag ", "x", "' OR 1=1 --"])
def test_a_tag_filter_matches_that_exact_value_only(corpus: Corpus, tag: str) -> None:
    # GIVEN records tagged with operator-laden and look-alike tags
    wanted = SearchRequest.model_validate({"tags": [tag]}).tags[0]  # trimmed, as the API does
    query = StoreQuery(tenant_id=TENANT, agent_id="tagged", now=NOW, tags=(wanted,), limit=100)

    # WHEN filtering by one of them (no text: newest first)
    hits = {c.record.id for c in corpus.store.search(query)}

    # THEN exactly the records carrying that very value: no wildcard, no case folding, no LIKE
    assert hits == {rid for rid, r in corpus.tagged.items() if wanted in r.tags}


# --- cursors are opaque ---------------------------------------------------------------------------

cursor_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from([TENANT, AGENT, "other-tenant", "other-agent", "working"]),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def forged_cursors(draw: st.DrawFn) -> str:
    keys = ["t", "a", "g", "o", "i", "tenant_id", "x"]
    payload = draw(st.dictionaries(st.sampled_from(keys), cursor_values, max_size=6))
    if draw(st.booleans()):  # mostly well-bound, so the position fields get exercised
        payload |= {"t": draw(st.sampled_from([TENANT, "other-tenant"])), "a": AGENT, "g": None}
    raw = json.dumps(payload).encode()
    encoded = base64.urlsafe_b64encode(raw).decode()
    return draw(
        st.sampled_from([encoded, encoded.rstrip("="), encoded[:-2], encoded + "A", encoded.swapcase()])
    )


@FUZZ
@given(cursor=st.one_of(forged_cursors(), st.text(max_size=40), hostile(max_pieces=4)))
def test_a_forged_or_garbled_cursor_is_refused_or_pages_the_callers_own_records(
    corpus: Corpus, cursor: str
) -> None:
    # GIVEN
    service = MemoriesService(corpus.store, corpus.pending, FixedClock(NOW))
    # WHEN / THEN
    try:
        page = service.list(TENANT, AGENT, None, 100, cursor)
    except ValidationFailedError as exc:
        assert exc.status == 400 and "cursor" in exc.message
        return
    assert {item.id for item in page.records} <= set(corpus.records)


@FUZZ
@given(cursor=st.one_of(forged_cursors(), st.text(max_size=40), hostile(max_pieces=4)))
def test_opensearch_cursors_decode_to_their_own_scope_or_are_refused(cursor: str) -> None:
    # GIVEN
    expected = {"t": TENANT, "a": AGENT, "g": None}
    # WHEN / THEN
    try:
        payload = decode_cursor(cursor, expected)
    except ValidationFailedError as exc:
        assert exc.status == 400
        return
    assert {k: payload.get(k) for k in expected} == expected


# --- OpenSearch: values, never syntax ---------------------------------------------------------------

FORBIDDEN_QUERIES = {
    "query_string",
    "simple_query_string",
    "wildcard",
    "regexp",
    "prefix",
    "fuzzy",
    "script",
    "script_score",
    "intervals",
    "match_phrase_prefix",
}


def _opensearch() -> tuple[OpenSearchStore, Cluster]:
    cluster = Cluster()
    options = client_options(Settings(store="sqlite"))
    options["connection_class"] = RecordingConnection
    client = OpenSearch(hosts=[{"host": "cluster.test", "port": 9200}], cluster=cluster, **options)
    return OpenSearchStore(client, "mem", 8, "test-model", check=False), cluster


def _paths(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(key path, leaf) pairs; list positions collapse to ``[]`` so lengths do not matter."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, f"{prefix}.{key}")
    elif isinstance(value, list):
        for child in value:
            yield from _paths(child, f"{prefix}[]")
    else:
        yield prefix, value


def _sent_search(text: str, tags: tuple[str, ...]) -> list[dict[str, Any]]:
    store, cluster = _opensearch()
    empty = {**search_response(), "status": 200}
    cluster.reply({"took": 1, "responses": [empty, empty]})
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    query = StoreQuery(
        tenant_id=TENANT,
        agent_id=AGENT,
        now=NOW,
        grains=(Grain.WORKING,),
        vector=vector,
        text=text,
        kinds=(MemoryKind.NOTE,),
        tags=tags,
        user_id="u-7",
        limit=10,
    )
    assert store.search(query) == []
    [sent] = cluster.sent
    assert (sent.method, sent.path) == ("POST", "/_msearch")
    return sent.lines


BASELINE = {path for line in _sent_search("launch date", ("launch",)) for path, _ in _paths(line)}
hostile_tag_values = st.lists(
    st.one_of(st.sampled_from(TAGS), hostile(surrogates=False, max_pieces=3).map(str.strip).filter(bool)),
    min_size=1,
    max_size=4,
)


@FUZZ
@given(text=hostile(surrogates=False).filter(lambda t: re.search(r"\w", t)), tags=hostile_tag_values)
@example(text="content:* OR tenant_id:other", tags=("*",))
@example(text='{"query_string": {"query": "*"}}', tags=('{"wildcard": "*"}',))
@example(text="alpha~2 AND bravo^10 /regex/", tags=("tenant_id:*",))
def test_opensearch_requests_carry_hostile_text_only_as_analysed_words_and_tags_as_terms(
    text: str, tags: list[str]
) -> None:
    lines = _sent_search(text, tuple(tags))
    paths = [pair for line in lines for pair in _paths(line)]

    # WHEN / THEN the request has exactly the baseline's structure: input never adds a key or a clause
    assert {path for path, _ in paths} <= BASELINE
    assert not FORBIDDEN_QUERIES & {part for path, _ in paths for part in re.split(r"[.\[\]]+", path)}
    # AND the text arrives only as lower-cased words of a multi_match, the tags only as terms values
    words = " ".join(dict.fromkeys(w.lower() for w in re.findall(r"\w+", text)))
    assert [v for p, v in paths if p.endswith("multi_match.query")] == [words]
    tag_paths = {p for p, v in paths if v in tags and v != words}  # a tag may equal the text's word
    assert all(p.endswith(".terms.tags[]") for p in tag_paths if p), tag_paths
    for line in lines:
        for clause in line.get("query", {}).get("bool", {}).get("filter", []) + (
            line.get("query", {})
            .get("knn", {})
            .get("vector", {})
            .get("filter", {})
            .get("bool", {})
            .get("filter", [])
        ):
            if "terms" in clause and "tags" in clause["terms"]:
                assert clause["terms"]["tags"] == list(tags)
            if "term" in clause:
                assert clause["term"] in ({"tenant_id": TENANT}, {"agent_id": AGENT}, {"user_id": "u-7"})
