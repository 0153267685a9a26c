"""How an agent's searches went: how many, and how many found nothing.

A zero-hit search is the plainest sign that an agent could not recall something: the query
fell outside every window, every filter, or every memory. Counts per UTC day are kept by the
store (`MemoryStore.record_search`, best effort); the query text never is, so nothing here
outlives a forget or an erasure.
"""

from __future__ import annotations

from datetime import UTC, timedelta

from agent_memory.model.operator_views import SearchActivity
from agent_memory.ports import Clock, SearchDays

#: The longest look back one request may ask for, in days.
MAX_SEARCH_STATS_DAYS = 400


class SearchStatsService:
    def __init__(self, store: SearchDays, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def stats(self, tenant_id: str, agent_id: str, days: int) -> SearchActivity:
        """The last ``days`` UTC days, today included."""
        since = self._clock.now().astimezone(UTC).date() - timedelta(days=days - 1)
        return SearchActivity(days=days, by_day=self._store.search_days(tenant_id, agent_id, since))
