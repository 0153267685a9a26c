"""`ports.SearchLog` on the memory store's ``search_days`` table: searches per agent and UTC day.

Counts only, never the query text: the operator console's zero-hit view needs how often an agent's
searches found nothing, not what was asked. Counting is best effort, so a busy store skips a count
rather than failing the search it counts.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime

from agent_memory.adapters.sqlite.sqlite_database import ACCESS_BUSY_TIMEOUT_MS, SqliteStorePart
from agent_memory.errors import DependencyError
from agent_memory.ports import SearchDay

logger = logging.getLogger(__name__)


class SqliteSearchLog(SqliteStorePart):
    """`ports.SearchLog` over ``memory.db`` (see the module docstring)."""

    def record_search(self, tenant_id: str, agent_id: str, at: datetime, hits: int) -> None:
        """Best effort, as `record_access`: a busy store skips the count rather than the search."""
        day = at.astimezone(UTC).date().isoformat()
        try:
            with self._db.transaction(write=True, busy_timeout_ms=ACCESS_BUSY_TIMEOUT_MS) as conn:
                conn.execute(
                    "INSERT INTO search_days (tenant_id, agent_id, day, searches, zero_hits) "
                    "VALUES (?, ?, ?, 1, ?) ON CONFLICT (tenant_id, agent_id, day) DO UPDATE SET "
                    "searches = searches + 1, zero_hits = zero_hits + excluded.zero_hits",
                    (tenant_id, agent_id, day, 1 if hits == 0 else 0),
                )
        except DependencyError as exc:
            logger.warning("record_search skipped for %s/%s: %s", tenant_id, agent_id, exc)

    def search_days(self, tenant_id: str, agent_id: str, since: date) -> list[SearchDay]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT day, searches, zero_hits FROM search_days "
                "WHERE tenant_id = ? AND agent_id = ? AND day >= ? ORDER BY day",
                (tenant_id, agent_id, since.isoformat()),
            ).fetchall()
        return [SearchDay(day=date.fromisoformat(d), searches=n, zero_hits=z) for d, n, z in rows]
