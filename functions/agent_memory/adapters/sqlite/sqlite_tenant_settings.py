"""`TenantSettingsStore` and `EmbeddingStateStore` for the local runtime: ``tenant_settings.db``
under the data directory.

Its own file, like ``topics.db``: a settings read on a cache miss never waits behind the
writer's long transactions on ``memory.db``. A change is one conditional UPDATE on the version it
read (or an INSERT for the first), so two admins editing at once cannot lose one's change.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread
from agent_memory.errors import ConflictError
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.tenant_settings import StoredSettings, TenantSettings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tenant_settings (
    tenant_id  TEXT PRIMARY KEY,
    settings   TEXT NOT NULL,   -- JSON of TenantSettings
    version    INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_states (
    tenant_id TEXT PRIMARY KEY,
    state     TEXT NOT NULL,    -- JSON of EmbeddingState
    version   INTEGER NOT NULL
);
"""


class SqliteTenantSettingsStore:
    def __init__(self, path: Path) -> None:
        self._db = ConnectionPerThread(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def get_settings(self, tenant_id: str) -> StoredSettings | None:
        row = (
            self._db.get()
            .execute(
                "SELECT settings, version, updated_at, updated_by FROM tenant_settings WHERE tenant_id = ?",
                (tenant_id,),
            )
            .fetchone()
        )
        if row is None:
            return None
        return StoredSettings(
            tenant_id=tenant_id,
            settings=TenantSettings.model_validate_json(row["settings"]),
            version=row["version"],
            updated_at=datetime.fromisoformat(row["updated_at"]),
            updated_by=row["updated_by"],
        )

    def put_settings(
        self, tenant_id: str, settings: TenantSettings, expected_version: int, actor: str, at: datetime
    ) -> StoredSettings:
        stored = StoredSettings.after(tenant_id, settings, expected_version, actor, at)
        values = (settings.model_dump_json(), stored.version, stored.updated_at.isoformat(), actor)
        with self._db.transaction() as conn:
            if expected_version == 0:
                done = conn.execute(
                    "INSERT INTO tenant_settings (settings, version, updated_at, updated_by, tenant_id)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id) DO NOTHING",
                    (*values, tenant_id),
                ).rowcount
            else:
                done = conn.execute(
                    "UPDATE tenant_settings SET settings = ?, version = ?, updated_at = ?, updated_by = ?"
                    " WHERE tenant_id = ? AND version = ?",
                    (*values, tenant_id, expected_version),
                ).rowcount
        if done != 1:
            raise ConflictError("the settings changed since they were read: read them again and retry")
        return stored

    def get_embedding_state(self, tenant_id: str) -> EmbeddingState | None:
        row = (
            self._db.get()
            .execute("SELECT state, version FROM embedding_states WHERE tenant_id = ?", (tenant_id,))
            .fetchone()
        )
        if row is None:
            return None
        return EmbeddingState.model_validate_json(row["state"]).model_copy(update={"version": row["version"]})

    def put_embedding_state(
        self, tenant_id: str, state: EmbeddingState, expected_version: int
    ) -> EmbeddingState:
        stored = state.model_copy(update={"version": expected_version + 1})
        with self._db.transaction() as conn:
            if expected_version == 0:
                done = conn.execute(
                    "INSERT INTO embedding_states (tenant_id, state, version) VALUES (?, ?, ?) "
                    "ON CONFLICT (tenant_id) DO NOTHING",
                    (tenant_id, stored.model_dump_json(), stored.version),
                ).rowcount
            else:
                done = conn.execute(
                    "UPDATE embedding_states SET state = ?, version = ? WHERE tenant_id = ? AND version = ?",
                    (stored.model_dump_json(), stored.version, tenant_id, expected_version),
                ).rowcount
        if done != 1:
            raise ConflictError("the tenant's embedding state changed since it was read")
        return stored
