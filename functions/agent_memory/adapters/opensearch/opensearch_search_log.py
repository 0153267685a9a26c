"""`agent_memory.ports.SearchLog` on OpenSearch: searches counted per agent and UTC day.

Its own module so the search-count port reads on its own. One document per agent and day in the
events index (`opensearch_documents.search_day_doc_id`), made and counted by a scripted upsert
(`opensearch_scripts.SEARCH_COUNT_SCRIPT`): counts only, never the query text.
"""

from __future__ import annotations

import logging
from datetime import date, datetime

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_documents import owned, search_day_doc_id
from agent_memory.adapters.opensearch.opensearch_events import search_day, search_days_body, utc_day
from agent_memory.adapters.opensearch.opensearch_responses import hits_of
from agent_memory.adapters.opensearch.opensearch_scripts import search_count_body
from agent_memory.ports import SearchDay

logger = logging.getLogger(__name__)


class OpenSearchSearchLog(OpenSearchBase):
    """`agent_memory.ports.SearchLog` (see the module docstring)."""

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort, never raises: a scripted upsert of the agent's day document in the
        events index."""
        day = utc_day(at)
        body = search_count_body(tenant_id, agent_id, day, hits)
        _id = search_day_doc_id(tenant_id, agent_id, day.date())
        try:
            with os_errors("counting a search", self.events_alias):
                self._client.update(
                    index=self.events_alias,
                    id=_id,
                    body=body,
                    params={
                        **self._route(tenant_id, agent_id),
                        **self._bookkeeping_refresh(),
                        "retry_on_conflict": 3,
                    },
                )
        except Exception as exc:  # best effort by contract: a search must not fail on its bookkeeping
            logger.warning("record_search skipped for %s/%s: %s", tenant_id, agent_id, exc)

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> list[SearchDay]:
        """The agent's day documents from ``since`` on, oldest first, in one routed search."""
        body = search_days_body(tenant_id, agent_id, since)
        response = self._search_events(body, "reading search counts", tenant_id, agent_id)
        return [
            search_day(h["_source"]) for h in hits_of(response) if owned(h["_source"], tenant_id, agent_id)
        ]
