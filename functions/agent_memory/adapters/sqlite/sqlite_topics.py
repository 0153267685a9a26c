"""`TopicStore` for the local runtime: ``topics.db`` under the data directory.

Its own file, like ``auth.db``: the API thread reads a dictionary on a cache miss and bumps a
proposal's count on a write, and neither should wait behind the writer's long transactions on
``memory.db``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread
from agent_memory.knowledge.rules.topic_dictionary import PROPOSAL_TTL_DAYS, TopicDictionary, TopicProposal
from agent_memory.ports import StoredTopicDictionary

_SCHEMA = """
CREATE TABLE IF NOT EXISTS topic_dictionaries (
    tenant_id  TEXT PRIMARY KEY,
    terms      TEXT NOT NULL,   -- JSON {canonical: [synonyms]}, normalised
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS topic_proposals (
    tenant_id  TEXT NOT NULL,
    topic      TEXT NOT NULL,
    count      INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, topic)
);
"""


class SqliteTopicStore:
    """Dictionaries one row per tenant; proposals one row per (tenant, topic), counted by upsert."""

    def __init__(self, path: Path) -> None:
        self._db = ConnectionPerThread(path, _SCHEMA)

    def get_dictionary(self, tenant_id: str) -> StoredTopicDictionary | None:
        row = (
            self._db.get()
            .execute("SELECT terms, updated_at FROM topic_dictionaries WHERE tenant_id = ?", (tenant_id,))
            .fetchone()
        )
        if row is None:
            return None
        return StoredTopicDictionary(
            TopicDictionary.from_json(row["terms"]), datetime.fromisoformat(row["updated_at"])
        )

    def put_dictionary(self, tenant_id: str, dictionary: TopicDictionary, at: datetime) -> None:
        with self._db.transaction() as conn:
            if not dictionary:
                conn.execute("DELETE FROM topic_dictionaries WHERE tenant_id = ?", (tenant_id,))
                return
            conn.execute(
                "INSERT INTO topic_dictionaries (tenant_id, terms, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (tenant_id) DO UPDATE"
                " SET terms = excluded.terms, updated_at = excluded.updated_at",
                (tenant_id, dictionary.to_json(), at.isoformat()),
            )

    def record_proposals(self, tenant_id: str, counts: Mapping[str, int], at: datetime) -> None:
        if not counts:
            return
        stamp = at.isoformat()
        with self._db.transaction() as conn:
            conn.executemany(
                "INSERT INTO topic_proposals (tenant_id, topic, count, first_seen, last_seen)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, topic) DO UPDATE SET"
                " count = count + excluded.count, last_seen = max(last_seen, excluded.last_seen)",
                [(tenant_id, topic, n, stamp, stamp) for topic, n in sorted(counts.items())],
            )

    def list_proposals(self, tenant_id: str, now: datetime) -> list[TopicProposal]:
        cutoff = (now - timedelta(days=PROPOSAL_TTL_DAYS)).isoformat()
        with self._db.transaction() as conn:
            # Expired ones go now: the local runtime has no TTL sweeper.
            conn.execute(
                "DELETE FROM topic_proposals WHERE tenant_id = ? AND last_seen < ?", (tenant_id, cutoff)
            )
            rows = conn.execute(
                "SELECT topic, count, first_seen, last_seen FROM topic_proposals WHERE tenant_id = ?",
                (tenant_id,),
            ).fetchall()
        return [
            TopicProposal(
                topic=r["topic"],
                count=r["count"],
                first_seen=datetime.fromisoformat(r["first_seen"]),
                last_seen=datetime.fromisoformat(r["last_seen"]),
            )
            for r in rows
        ]

    def close(self) -> None:
        self._db.close()
