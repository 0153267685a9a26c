"""`ports.AgentDirectory` on the memory store: which agents have memory, and how much per period.

The summarization dispatcher's and the operator console's reads. `agents_with_records` is the only
read across tenants, and it returns ids only; the others stay within one tenant. All of them read
the partial indexes of live records, never the wide rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from agent_memory.adapters.sqlite.sqlite_database import SqliteStorePart
from agent_memory.adapters.sqlite.sqlite_filters import (
    ELIGIBLE,
    decode_cursor,
    encode_cursor,
    keyset,
    live_filter,
)
from agent_memory.adapters.sqlite.sqlite_rows import to_us
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AgentPage, AgentRef, PeriodScan


class SqliteDirectory(SqliteStorePart):
    """`ports.AgentDirectory` over ``memory.db`` (see the module docstring)."""

    def agents_with_records(self, scan: PeriodScan) -> AgentPage:
        """Every (tenant, agent) with live records of the scan's grain whose span overlaps its period.

        Ordered by (tenant, agent); the cursor holds the last pair of the page and is bound to
        the grain and period it was issued for.
        """
        if scan.page_size < 1:
            raise ValidationFailedError("page_size must be at least 1")
        grain = Grain(scan.grain)
        bound = {"g": grain.value, "s": to_us(scan.start), "e": to_us(scan.end), "tn": scan.tenant_id}
        where = "grain = ? AND deleted_at IS NULL AND span_start < ? AND span_end >= ?"
        params: list[Any] = [grain.value, bound["e"], bound["s"]]
        if scan.tenant_id is not None:
            where += " AND tenant_id = ?"
            params.append(scan.tenant_id)
        if scan.cursor is not None:
            after = keyset(decode_cursor(scan.cursor, bound), ("t", str), ("a", str))
            where += " AND (tenant_id > ? OR (tenant_id = ? AND agent_id > ?))"
            params += [after[0], after[0], after[1]]
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT DISTINCT tenant_id, agent_id FROM records WHERE {where} "
                "ORDER BY tenant_id, agent_id LIMIT ?",
                (*params, scan.page_size + 1),
            ).fetchall()
        agents = [AgentRef(tenant_id=t, agent_id=a) for t, a in rows[: scan.page_size]]
        next_cursor = None
        if len(rows) > scan.page_size:
            last = agents[-1]
            next_cursor = encode_cursor({**bound, "t": last.tenant_id, "a": last.agent_id})
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def list_agents(
        self, tenant_id: str, now: datetime, cursor: str | None = None, limit: int = 100
    ) -> AgentPage:
        """The tenant's agents with live records, by agent id; the cursor holds the last id.

        A skip-scan of the covering index: one probe per agent, however many records each has.
        """
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        bound = {"t": tenant_id, "k": "agents"}
        where = "r.tenant_id = ? AND r.deleted_at IS NULL AND (r.expires_at IS NULL OR r.expires_at > ?)"
        params: list[Any] = [tenant_id, to_us(now)]
        if cursor is not None:
            (after,) = keyset(decode_cursor(cursor, bound), ("a", str))
            where += " AND r.agent_id > ?"
            params.append(after)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT DISTINCT r.agent_id FROM {ELIGIBLE} WHERE {where} ORDER BY r.agent_id LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        agents = [AgentRef(tenant_id=tenant_id, agent_id=row[0]) for row in rows[:limit]]
        next_cursor = encode_cursor({**bound, "a": agents[-1].agent_id}) if len(rows) > limit else None
        return AgentPage(agents=agents, next_cursor=next_cursor)

    def histogram(
        self, tenant_id: str, agent_id: str, grain: Grain, edges: Sequence[datetime], now: datetime
    ) -> list[int]:
        """Counts per ``[edges[i], edges[i + 1])`` of ``occurred_at``: the times are read from
        the covering index (no wide rows) and binned with numpy."""
        bounds = np.asarray([to_us(e) for e in edges], dtype=np.int64)
        if len(bounds) < 2:
            return []
        if np.any(np.diff(bounds) <= 0):
            raise ValidationFailedError("histogram edges must be strictly ascending")
        where, params = live_filter(tenant_id, agent_id, now, (Grain(grain),))
        where += " AND r.occurred_at >= ? AND r.occurred_at < ?"
        params += [int(bounds[0]), int(bounds[-1])]
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                f"SELECT group_concat(r.occurred_at) FROM {ELIGIBLE} WHERE {where}", params
            ).fetchone()
        times = (
            np.fromstring(row[0], dtype=np.int64, sep=",")
            if row is not None and row[0]
            else np.empty(0, dtype=np.int64)
        )
        counts = np.bincount(np.searchsorted(bounds, times, side="right") - 1, minlength=len(bounds) - 1)
        return [int(c) for c in counts[: len(bounds) - 1]]
