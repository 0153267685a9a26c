"""Topic dictionaries: an admin sets a tenant's, writes and searches read it through a short cache.

Writes and searches consult the dictionary on every request that names a topic or a query, so
they read it through `TopicCache`: one store read per tenant per ``ttl_s`` on a warm container
(as the authorizer caches keys), and none at all for a write without a topic. What that costs: a
new dictionary reaches the other warm containers within ``ttl_s`` (60 s by default); the
container that stored it sees it at once.

The dictionary is a help to retrieval, never a reason to refuse a write: when the store cannot be
read, the write goes on with the topic as the client sent it (normalised) and no proposal is
counted, and that failure is remembered for a few seconds so an outage does not add a failing
call to every request. Counting proposals is best effort for the same reason.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from agent_memory.errors import AgentMemoryError
from agent_memory.knowledge.rules.topic_dictionary import TopicDictionary, TopicProposal
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Clock, StoredTopicDictionary, TopicStore
from agent_memory.tenancy.tenant_cache import TenantCache

DEFAULT_TTL_S = 60.0
#: How long a failed read is remembered: short, so the dictionary is back soon after the store.
FAILURE_TTL_S = 5.0
DEFAULT_MAX_TENANTS = 1024


class TopicCache:
    """Each tenant's dictionary for ``ttl_s`` (absent ones too), at most ``max_tenants`` of them."""

    def __init__(
        self,
        store: TopicStore,
        ttl_s: float = DEFAULT_TTL_S,
        max_tenants: int = DEFAULT_MAX_TENANTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._cache: TenantCache[TopicDictionary | None] = TenantCache(ttl_s, max_tenants, clock)

    def dictionary(self, tenant_id: str) -> TopicDictionary | None:
        """The tenant's dictionary, or None when it has none (or it cannot be read just now)."""
        hit, cached = self._cache.lookup(tenant_id)
        if hit:
            return cached
        try:
            stored = self.store.get_dictionary(tenant_id)
            dictionary, ttl = (stored.dictionary if stored else None), self._cache.ttl_s
        except AgentMemoryError as exc:
            logger.warning("topic dictionary unavailable", extra={"error": exc.message})
            metrics.add_metric(name="TopicDictionaryErrors", unit=MetricUnit.Count, value=1)
            dictionary, ttl = None, min(FAILURE_TTL_S, self._cache.ttl_s)
        self._cache.remember(tenant_id, dictionary, ttl)
        return dictionary

    def invalidate(self, tenant_id: str) -> None:
        self._cache.forget(tenant_id)

    def expand_query(self, tenant_id: str, text: str | None) -> str | None:
        """The lexical query with the dictionary's groups of the terms it names (`expand_query`)."""
        if not text:
            return text
        dictionary = self.dictionary(tenant_id)
        return dictionary.expand_query(text) if dictionary else text

    def propose(self, tenant_id: str, topics: Iterable[str], clock: Clock) -> None:
        """Count unknown topics (best effort: a failure is logged, the write it came with stands)."""
        counts = Counter(topics)
        if not counts:
            return
        try:
            self.store.record_proposals(tenant_id, counts, clock.now())
        except AgentMemoryError as exc:
            logger.warning("unknown topics not counted", extra={"error": exc.message, "topics": len(counts)})
            metrics.add_metric(name="TopicDictionaryErrors", unit=MetricUnit.Count, value=1)


class TopicsService:
    """The tenant's dictionary (get, replace) and its unknown topics (list)."""

    def __init__(self, cache: TopicCache, clock: Clock) -> None:
        self._cache = cache
        self._store = cache.store
        self._clock = clock

    def get(self, tenant_id: str) -> StoredTopicDictionary | None:
        return self._store.get_dictionary(tenant_id)

    def put(self, tenant_id: str, terms: Mapping[str, Sequence[str]]) -> StoredTopicDictionary | None:
        """Replace the dictionary with ``terms`` (canonical term -> synonyms); none removes it."""
        dictionary = TopicDictionary.build({term: tuple(synonyms) for term, synonyms in terms.items()})
        now = self._clock.now()
        self._store.put_dictionary(tenant_id, dictionary, now)
        self._cache.invalidate(tenant_id)
        logger.info("topic dictionary replaced", extra={"terms": len(dictionary.terms)})
        return StoredTopicDictionary(dictionary, now) if dictionary else None

    def proposals(self, tenant_id: str, limit: int) -> list[TopicProposal]:
        """Unknown topics, most named first; those the current dictionary knows are left out (a
        proposal taken into the dictionary disappears from the list at once)."""
        stored = self._store.get_dictionary(tenant_id)
        known = stored.dictionary if stored else TopicDictionary()
        listed = self._store.list_proposals(tenant_id, self._clock.now())
        proposals = [p for p in listed if known.canonical(p.topic) is None]
        proposals.sort(key=lambda p: (-p.count, -p.last_seen.timestamp(), p.topic))
        return proposals[:limit]
