"""API keys of the local runtime, in ``auth.db`` under the data directory.

`agent-memory keys create` and a running `agent-memory serve` share the file, so a key created
while the server runs works at once.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_util import open_private
from agent_memory.domain.caller import Caller
from agent_memory.domain.keys import KeyInfo, NewKey, hash_api_key

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash   TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL UNIQUE,
    tenant_id  TEXT NOT NULL,
    plan       TEXT NOT NULL,
    scopes     TEXT NOT NULL,
    agents     TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"""


class LocalKeyStore:
    """`KeyStore` in SQLite (``auth.db``)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        with self._connect() as db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = open_private(self._path, timeout=10)
        db.execute("PRAGMA busy_timeout = 10000")
        return db

    def create(self, new: NewKey) -> tuple[str, str]:
        """Store a new key (or the given one) and return ``(key_id, key)``; the key is not kept."""
        issued = new.issue(datetime.now(UTC))
        info = issued.info
        with self._connect() as db:
            db.execute(
                "INSERT INTO api_keys (key_hash, key_id, tenant_id, plan, scopes, agents, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    issued.key_hash,
                    info.key_id,
                    info.tenant_id,
                    info.plan,
                    info.scopes,
                    info.agents,
                    info.created_at,
                ),
            )
        return info.key_id, issued.key

    def ensure(self, key: str, tenant_id: str, plan: str, admin: bool) -> None:
        """Register ``key`` unless it already is (the development key at every start)."""
        if self.lookup(key) is None:
            self.create(NewKey(tenant_id, plan, admin=admin, key=key))

    def lookup(self, key: str) -> Caller | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT key_id, tenant_id, plan, scopes, agents FROM api_keys"
                " WHERE key_hash = ? AND revoked_at IS NULL",
                (hash_api_key(key),),
            ).fetchone()
        if row is None:
            return None
        key_id, tenant_id, plan, scopes, agents = row
        return Caller(
            tenant_id=tenant_id,
            key_id=key_id,
            plan=plan,
            scopes=frozenset(scopes.split()),
            agents=frozenset(agents.split()),
        )

    def list(self) -> list[KeyInfo]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT key_id, tenant_id, plan, scopes, agents, created_at, revoked_at"
                " FROM api_keys ORDER BY created_at"
            ).fetchall()
        return [KeyInfo(*row) for row in rows]

    def revoke(self, key_id: str) -> bool:
        with self._connect() as db:
            cur = db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (datetime.now(UTC).isoformat(), key_id),
            )
        return cur.rowcount == 1
