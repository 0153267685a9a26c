"""API keys of the local runtime, in ``auth.db`` under the data directory.

`agent-memory keys create` and a running `agent-memory serve` share the file, so a key created
while the server runs works at once.
"""

from __future__ import annotations

import builtins
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_util import open_private
from agent_memory.model.caller import Caller
from agent_memory.tenancy.rules.keys import KeyInfo, NewKey, hash_api_key

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
-- Read access an admin granted: keys bound to ``reader`` may read ``owner``'s memory.
CREATE TABLE IF NOT EXISTS read_grants (
    tenant_id TEXT NOT NULL,
    reader    TEXT NOT NULL,
    owner     TEXT NOT NULL,
    PRIMARY KEY (tenant_id, reader, owner)
) WITHOUT ROWID;
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
        bound = agents.split()
        reads: set[str] = set()
        if bound:
            with self._connect() as db:
                marks = ", ".join("?" * len(bound))
                reads = {
                    r[0]
                    for r in db.execute(
                        f"SELECT owner FROM read_grants WHERE tenant_id = ? AND reader IN ({marks})",
                        (tenant_id, *bound),
                    )
                }
        return Caller(
            tenant_id=tenant_id,
            key_id=key_id,
            plan=plan,
            scopes=frozenset(scopes.split()),
            agents=frozenset(bound),
            reads=frozenset(reads),
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

    def grant_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        with self._connect() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO read_grants (tenant_id, reader, owner) VALUES (?, ?, ?)",
                (tenant_id, reader, owner),
            )
        return cur.rowcount == 1

    def revoke_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        with self._connect() as db:
            cur = db.execute(
                "DELETE FROM read_grants WHERE tenant_id = ? AND reader = ? AND owner = ?",
                (tenant_id, reader, owner),
            )
        return cur.rowcount == 1

    def readers_of(self, tenant_id: str, owner: str) -> builtins.list[str]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT reader FROM read_grants WHERE tenant_id = ? AND owner = ? ORDER BY reader",
                (tenant_id, owner),
            ).fetchall()
        return [r[0] for r in rows]
