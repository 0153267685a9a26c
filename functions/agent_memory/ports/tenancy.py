"""Ports of a tenant's own configuration: its settings, its provider key, its embedding spaces.

Kept apart from the memory ports: neither is read on the hot path except through a short
per-tenant cache (`tenancy.settings.SettingsCache`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, SecretInfo, StoredSettings, TenantSettings


class TenantSettingsStore(Protocol):
    """Each tenant's settings document, versioned."""

    def get_settings(self, tenant_id: str) -> StoredSettings | None:
        """The tenant's stored settings, or None when it never set any. `DependencyError` when
        the store cannot be read."""
        ...

    def put_settings(
        self, tenant_id: str, settings: TenantSettings, expected_version: int, actor: str, at: datetime
    ) -> StoredSettings:
        """Store ``settings`` as version ``expected_version + 1`` if the stored version is still
        ``expected_version`` (0: none stored yet); else `ConflictError`, nothing written."""
        ...


class SecretStore(Protocol):
    """A tenant's provider key, encrypted at rest (Secrets Manager in AWS, a file only its owner
    can read locally). Implementations never log a value, never put one in an error message,
    and list nothing: a key is read by its tenant id only."""

    def put_secret(self, tenant_id: str, value: str) -> SecretInfo:
        """Set (or replace) the tenant's key; what may be shown of it."""
        ...

    def get_secret(self, tenant_id: str) -> str | None:
        """The tenant's key, or None when it has none."""
        ...

    def secret_info(self, tenant_id: str) -> SecretInfo | None:
        """The last four characters of the tenant's key and when it was set (no value read)."""
        ...

    def delete_secret(self, tenant_id: str) -> bool:
        """Remove the tenant's key at once (no recovery window); whether there was one."""
        ...


class EmbeddingStateStore(Protocol):
    """Each tenant's embedding spaces (`agent_memory.tenancy.rules.embedding_spaces.EmbeddingState`),
    changed by the settings service and the re-embedding job, never by an admin directly."""

    def get_embedding_state(self, tenant_id: str) -> EmbeddingState | None:
        """The tenant's state, or None (it never chose a model: the deployment's, nothing moving)."""
        ...

    def put_embedding_state(
        self, tenant_id: str, state: EmbeddingState, expected_version: int
    ) -> EmbeddingState:
        """Store ``state`` as version ``expected_version + 1`` if the stored one is still
        ``expected_version`` (0: none yet); else `ConflictError`, nothing written."""
        ...


class TenantConfigurationStore(TenantSettingsStore, EmbeddingStateStore, Protocol):
    """Both, as each adapter implements them over one table (one file locally)."""


class ReembedStarter(Protocol):
    """What the settings service needs of the re-embedding (`tenancy.reembed.ReembedService`)."""

    def start(self, tenant_id: str, wanted: ModelChoice | None) -> EmbeddingState: ...

    def state(self, tenant_id: str) -> EmbeddingState: ...
