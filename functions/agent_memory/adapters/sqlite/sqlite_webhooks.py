"""`WebhookStore` for the local runtime: ``webhooks.db`` under the data directory (0600, like
every file there), one row per tenant, the secret with it."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread
from agent_memory.feed.rules.events import ChangeType
from agent_memory.feed.rules.webhook_config import WebhookConfig

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
    tenant_id       TEXT PRIMARY KEY,
    url             TEXT NOT NULL,
    secret          TEXT NOT NULL,
    event_types     TEXT,              -- JSON list, NULL: every type
    include_content INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    updated_by      TEXT NOT NULL
);
"""


class SqliteWebhookStore:
    def __init__(self, path: Path) -> None:
        self._db = ConnectionPerThread(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def get_webhook(self, tenant_id: str) -> WebhookConfig | None:
        row = self._db.get().execute("SELECT * FROM webhooks WHERE tenant_id = ?", (tenant_id,)).fetchone()
        if row is None:
            return None
        types = (
            None
            if row["event_types"] is None
            else tuple(ChangeType(t) for t in json.loads(row["event_types"]))
        )
        return WebhookConfig(
            tenant_id=tenant_id,
            url=row["url"],
            secret=row["secret"],
            event_types=types,
            include_content=bool(row["include_content"]),
            created_at=datetime.fromisoformat(row["created_at"]),
            updated_at=datetime.fromisoformat(row["updated_at"]),
            updated_by=row["updated_by"],
        )

    def put_webhook(self, config: WebhookConfig) -> None:
        types = None if config.event_types is None else json.dumps([t.value for t in config.event_types])
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO webhooks (tenant_id, url, secret, event_types, include_content, created_at,"
                " updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,"
                " event_types = excluded.event_types, include_content = excluded.include_content,"
                " created_at = excluded.created_at, updated_at = excluded.updated_at,"
                " updated_by = excluded.updated_by",
                (
                    config.tenant_id,
                    config.url,
                    config.secret,
                    types,
                    int(config.include_content),
                    config.created_at.isoformat(),
                    config.updated_at.isoformat(),
                    config.updated_by,
                ),
            )

    def delete_webhook(self, tenant_id: str) -> bool:
        with self._db.transaction() as conn:
            return conn.execute("DELETE FROM webhooks WHERE tenant_id = ?", (tenant_id,)).rowcount > 0
