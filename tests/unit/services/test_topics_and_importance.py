"""Write-time importance and topic canonicalisation, query expansion, and access counts on search."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tests.fakes import FixedClock, SteppingClock
from tests.unit.services.conftest import World

from agent_memory.adapters.sqlite.sqlite_topics import SqliteTopicStore
from agent_memory.contract.v1 import SearchRequest, TopicDictionaryResponse, WriteRequest
from agent_memory.errors import DependencyError
from agent_memory.knowledge.rules.topic_dictionary import TopicDictionary, TopicProposal
from agent_memory.knowledge.topics import FAILURE_TTL_S, TopicCache, TopicsService
from agent_memory.model.caller import Caller
from agent_memory.model.commands import WriteCommand
from agent_memory.model.records import MemoryRecord
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import StoredTopicDictionary
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.writing.write import WriteService

ACME = Caller("acme", key_id="key_a")
GLOBEX = Caller("globex", key_id="key_g")
LAUNCH = {"launch date": ["release date", "go-live"], "kickoff": ["project start", "inception"]}


class CountingTopics:
    """A real SQLite topic store that counts dictionary reads, and can be made to fail."""

    def __init__(self, path: Path) -> None:
        self.inner = SqliteTopicStore(path)
        self.reads = 0
        self.failing = False

    def get_dictionary(self, tenant_id: str) -> StoredTopicDictionary | None:
        self.reads += 1
        if self.failing:
            raise DependencyError("topics table unavailable")
        return self.inner.get_dictionary(tenant_id)

    def put_dictionary(self, tenant_id: str, dictionary: TopicDictionary, at: datetime) -> None:
        self.inner.put_dictionary(tenant_id, dictionary, at)

    def record_proposals(self, tenant_id: str, counts: Mapping[str, int], at: datetime) -> None:
        if self.failing:
            raise DependencyError("topics table unavailable")
        self.inner.record_proposals(tenant_id, counts, at)

    def list_proposals(self, tenant_id: str, now: datetime) -> list[TopicProposal]:
        return self.inner.list_proposals(tenant_id, now)


@pytest.fixture(autouse=True)
def _no_metrics_left_behind() -> Iterator[None]:
    """Services emit metrics no handler flushes here: drop them, or they pile up for later tests."""
    yield
    discard_unpublished_metrics()


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def topics(tmp_path: Path) -> CountingTopics:
    return CountingTopics(tmp_path / "topics.db")


@pytest.fixture
def cache(topics: CountingTopics, tick: SteppingClock) -> TopicCache:
    return TopicCache(topics, ttl_s=60, clock=tick)


@pytest.fixture
def service(cache: TopicCache, clock: FixedClock) -> TopicsService:
    return TopicsService(cache, clock)


@pytest.fixture
def write(world: World, cache: TopicCache) -> WriteService:
    return WriteService(world.queue, world.pending, world.clock, topics=cache)


def _accept(write: WriteService, caller: Caller, *items: dict[str, object]) -> list[MemoryRecord]:
    """Accept ``items`` and return the records as queued, taking them off the queue."""
    request = WriteRequest.model_validate({"items": list(items)})
    ids = write.accept(caller, "bot", request.to_new_memories())
    queue = write._queue  # the test world's local FIFO queue
    batch = queue.receive(10)  # type: ignore[attr-defined]
    queue.ack(m.receipt_handle for m in batch)  # type: ignore[attr-defined]
    queued = {r.id: r for r in (WriteCommand.model_validate_json(m.body).record for m in batch)}
    return [queued[i] for i in ids]


# --- importance ---------------------------------------------------------------------------------


def test_importance_is_scored_when_the_client_gives_none_and_kept_when_it_does(world: World) -> None:
    # GIVEN writes of each class, one with its own importance
    items = [
        {"content": "Remember this: the vault code is 4417.", "role": "user"},
        {"content": "thanks!", "role": "user"},
        {"content": "We decided to move the launch to March 3.", "kind": "decision"},
        {"content": "thank you!", "role": "user", "importance": 0.9},
    ]
    request = WriteRequest.model_validate({"items": items})

    # WHEN they are accepted and stored
    ids = world.write.accept(ACME, "bot", request.to_new_memories())
    world.drain()

    # THEN the explicit request is 1.0, small talk is low, a decision high, and the client's own wins
    stored = [world.store.get("acme", "bot", i) for i in ids]
    assert [r.importance for r in stored if r is not None] == [1.0, 0.1, 0.95, 0.9]


def test_every_returned_hit_counts_an_access_and_the_others_do_not(world: World) -> None:
    # GIVEN two stored memories
    request = WriteRequest.model_validate(
        {"items": [{"content": "The vault code is 4417."}, {"content": "Lunch options near the office."}]}
    )
    vault, lunch = world.write.accept(ACME, "bot", request.to_new_memories())
    world.drain()

    # WHEN a search returns only the first, twice
    for _ in range(2):
        world.clock.advance(minutes=5)
        found = world.search.search(
            "acme", "bot", SearchRequest(query="vault code", max_results=1).to_query()
        )
        assert [r.id for r in found] == [vault]

    # THEN its access count is 2 and it was last accessed at the second search; the other is untouched
    hit, other = world.store.get("acme", "bot", vault), world.store.get("acme", "bot", lunch)
    assert hit is not None and other is not None
    assert (hit.access_count, hit.last_accessed_at) == (2, world.clock.now())
    assert (other.access_count, other.last_accessed_at) == (0, None)


# --- topics on write ----------------------------------------------------------------------------


def test_without_a_dictionary_a_topic_is_normalised_and_no_proposal_is_counted(
    write: WriteService, service: TopicsService
) -> None:
    # GIVEN
    [record] = _accept(write, ACME, {"content": "x", "topic": "  Hiring   PLAN "})
    # WHEN / THEN
    assert (record.topic, record.topic_raw) == ("hiring plan", "Hiring   PLAN")
    assert service.proposals("acme", 100) == []


def test_with_a_dictionary_synonyms_become_canonical_and_unknown_topics_are_proposed(
    write: WriteService, service: TopicsService, clock: FixedClock
) -> None:
    # GIVEN acme's dictionary
    service.put("acme", LAUNCH)

    # WHEN acme writes a synonym, a canonical term, and an unknown topic twice
    records = _accept(
        write,
        ACME,
        {"content": "a", "topic": "Go-Live"},
        {"content": "b", "topic": "launch date"},
        {"content": "c", "topic": "Hiring Plan"},
        {"content": "d", "topic": "hiring plan"},
        {"content": "e"},
    )

    # THEN the raw topic is kept and the canonical one stored
    assert [(r.topic, r.topic_raw) for r in records] == [
        ("launch date", "Go-Live"),
        ("launch date", "launch date"),
        ("hiring plan", "Hiring Plan"),
        ("hiring plan", "hiring plan"),
        (None, None),
    ]
    # AND the unknown topic is a proposal, counted twice, seen now
    [proposal] = service.proposals("acme", 100)
    assert (proposal.topic, proposal.count, proposal.last_seen) == ("hiring plan", 2, clock.now())


def test_one_tenants_dictionary_never_applies_to_another(write: WriteService, service: TopicsService) -> None:
    # GIVEN
    service.put("acme", LAUNCH)
    [record] = _accept(write, GLOBEX, {"content": "x", "topic": "Go-Live"})
    # WHEN / THEN
    assert record.topic == "go-live"
    assert service.get("globex") is None
    assert service.proposals("globex", 100) == []  # globex has no dictionary: nothing proposed


def test_a_write_without_topics_reads_no_dictionary_and_writes_with_topics_share_the_cache(
    write: WriteService, topics: CountingTopics, tick: SteppingClock
) -> None:
    # GIVEN
    _accept(write, ACME, {"content": "no topic here"})
    # WHEN / THEN
    assert topics.reads == 0
    _accept(write, ACME, {"content": "a", "topic": "x"})
    _accept(write, ACME, {"content": "b", "topic": "y"})
    assert topics.reads == 1  # the second write was served by the cache
    tick.now += 61
    _accept(write, ACME, {"content": "c", "topic": "z"})
    assert topics.reads == 2  # the entry expired


def test_replacing_the_dictionary_is_seen_at_once_by_the_same_process(
    write: WriteService, service: TopicsService
) -> None:
    # GIVEN a cached absence of a dictionary
    assert _accept(write, ACME, {"content": "a", "topic": "Go-Live"})[0].topic == "go-live"
    # WHEN the admin sets one through the service sharing the cache
    service.put("acme", LAUNCH)
    # THEN the next write uses it
    assert _accept(write, ACME, {"content": "b", "topic": "Go-Live"})[0].topic == "launch date"


def test_an_unreadable_dictionary_never_fails_a_write_and_is_retried_soon(
    write: WriteService, service: TopicsService, topics: CountingTopics, tick: SteppingClock
) -> None:
    service.put("acme", LAUNCH)
    topics.failing = True

    # WHEN the store fails, THEN the write is accepted with the normalised raw topic
    [record] = _accept(write, ACME, {"content": "a", "topic": "Go-Live"})
    assert (record.topic, record.topic_raw) == ("go-live", "Go-Live")
    _accept(write, ACME, {"content": "b", "topic": "Go-Live"})
    assert topics.reads == 1  # the failure is remembered briefly, not retried on every request

    # AND once the store is back and the short failure TTL has passed, the dictionary applies again
    topics.failing = False
    tick.now += FAILURE_TTL_S + 0.1
    assert _accept(write, ACME, {"content": "c", "topic": "Go-Live"})[0].topic == "launch date"


def test_a_failure_to_count_proposals_does_not_fail_the_write(
    write: WriteService, service: TopicsService, topics: CountingTopics, cache: TopicCache
) -> None:
    # GIVEN
    service.put("acme", LAUNCH)
    # WHEN / THEN
    assert cache.dictionary("acme")  # cached before the store fails
    topics.failing = True
    [record] = _accept(write, ACME, {"content": "a", "topic": "Unknown Thing"})
    assert record.topic == "unknown thing"
    topics.failing = False
    assert service.proposals("acme", 100) == []


# --- the admin service ---------------------------------------------------------------------------


def test_proposals_are_listed_most_named_first_without_those_the_dictionary_now_knows(
    write: WriteService, service: TopicsService, clock: FixedClock
) -> None:
    service.put("acme", LAUNCH)
    _accept(write, ACME, {"content": "a", "topic": "office move"})
    clock.advance(hours=1)
    _accept(write, ACME, *({"content": f"b{i}", "topic": "Hiring Plan"} for i in range(3)))
    _accept(write, ACME, {"content": "c", "topic": "budget"})
    listed = service.proposals("acme", 100)
    assert [(p.topic, p.count) for p in listed] == [("hiring plan", 3), ("budget", 1), ("office move", 1)]
    assert [p.topic for p in service.proposals("acme", 1)] == ["hiring plan"]

    # WHEN the admin takes "hiring plan" into the dictionary as a synonym
    service.put("acme", {**LAUNCH, "recruiting": ["hiring plan"]})

    # THEN it is no longer proposed
    assert [p.topic for p in service.proposals("acme", 100)] == ["budget", "office move"]


def test_get_put_and_remove_a_dictionary(service: TopicsService, clock: FixedClock) -> None:
    # WHEN / THEN (as the routes answer: TopicDictionaryResponse.of the stored dictionary)
    def answered(stored: StoredTopicDictionary | None) -> TopicDictionaryResponse:
        return TopicDictionaryResponse.of(stored)

    assert answered(service.get("acme")) == TopicDictionaryResponse(terms={}, updated_at=None)
    put = answered(service.put("acme", {"Launch Date": ["Go-Live"]}))
    assert put.terms == {"launch date": ["go-live"]} and put.updated_at == clock.now()
    assert answered(service.get("acme")) == put
    removed = answered(service.put("acme", {}))
    assert removed.terms == {} and service.get("acme") is None


# --- topics on search ---------------------------------------------------------------------------


def test_a_query_naming_a_synonym_finds_the_memory_filed_under_the_canonical_topic(
    world: World, write: WriteService, service: TopicsService, cache: TopicCache
) -> None:
    # GIVEN a memory filed under "inception" (canonical: "kickoff"), and an unrelated one
    service.put("acme", LAUNCH)
    request = WriteRequest.model_validate(
        {
            "items": [
                {"content": "Meeting with the vendor on Monday.", "topic": "Inception"},
                {"content": "Lunch options near the office."},
            ]
        }
    )
    meeting, _ = write.accept(ACME, "bot", request.to_new_memories())
    world.drain()
    stored = world.store.get("acme", "bot", meeting)
    assert stored is not None and stored.topic == "kickoff"
    expanding = SearchService(world.store, world.embedder, world.clock, RankingWeights(), topics=cache)
    query = SearchRequest(query="project start", max_results=2)

    # WHEN the query names another synonym of that topic
    found = expanding.search("acme", "bot", query.to_query())
    plain = world.search.search("acme", "bot", query.to_query())

    # THEN the memory comes first, found by its topic's words, which the plain search cannot use
    assert found[0].id == meeting
    assert found[0].score > next((r.score for r in plain if r.id == meeting), 0.0)
    # AND another tenant's identical query is not expanded by acme's dictionary
    assert cache.expand_query("globex", "project start") == "project start"
    assert cache.expand_query("acme", None) is None


def test_the_cache_is_bounded(topics: CountingTopics, tick: SteppingClock) -> None:
    # GIVEN
    small = TopicCache(topics, ttl_s=60, max_tenants=2, clock=tick)
    # WHEN
    for tenant in ("a", "b", "c", "a"):
        small.dictionary(tenant)
    # THEN
    assert topics.reads == 4  # "a" was evicted by "c" and read again


def test_cache_entries_expire(
    service: TopicsService, cache: TopicCache, topics: CountingTopics, tick: SteppingClock
) -> None:
    # GIVEN
    cache.dictionary("acme")
    # WHEN
    # another process replaces the dictionary: this cache keeps its answer until the TTL
    topics.put_dictionary("acme", TopicDictionary.build(LAUNCH), datetime.now() - timedelta(seconds=1))
    # THEN
    assert cache.dictionary("acme") is None
    tick.now += 60.1
    assert cache.dictionary("acme") == TopicDictionary.build(LAUNCH)
