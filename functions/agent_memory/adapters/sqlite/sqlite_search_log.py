"""`ports.SearchLog` on the memory store's ``search_days`` table: searches per agent and UTC day.

Counts only, never the query text: the operator console's zero-hit view needs how often an agent's
searches found nothing, not what was asked. Counting is best effort and written behind, once a
second at most (`sqlite_activity`), so a search never waits for it nor writes the file.
"""

from __future__ import annotations

import logging
from datetime import date, datetime

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.ports import SearchDay

logger = logging.getLogger(__name__)


class SqliteSearchLog(SqliteStorePart):
    """`ports.SearchLog` over ``memory.db`` (see the module docstring)."""

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort, written behind (`sqlite_activity`): a search does not write the file."""
        self._activity.search(tenant_id, agent_id, at, hits)

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> list[SearchDay]:
        self._activity.flush()  # read the counts this process gathered
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT day, searches, zero_hits FROM search_days "
                "WHERE tenant_id = ? AND agent_id = ? AND day >= ? ORDER BY day",
                (tenant_id, agent_id, since.isoformat()),
            ).fetchall()
        return [SearchDay(day=date.fromisoformat(d), searches=n, zero_hits=z) for d, n, z in rows]
