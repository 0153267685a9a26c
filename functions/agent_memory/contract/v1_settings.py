"""Models of the HTTP contract (v1) for a tenant's settings (``/v1/admin/settings``).

The settings document is the domain's `TenantSettings` as is: its validation is the contract's.
The provider key travels in the request only (``provider_key``, write-only) and comes back as
its last four characters and when it was set, never more.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from agent_memory.governance.rules.plans import Retention
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.tenant_settings import (
    MAX_PROVIDER_KEY_CHARS,
    ModelChoice,
    SecretInfo,
    SettingsView,
    TenantSettings,
)


class SettingsUpdate(BaseModel):
    """``PUT /v1/admin/settings``: the whole settings document, the version it was read at, and
    optionally a new provider key (or ``clear_provider_key``)."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(
        strict=True, ge=0, description="The version read (GET); 0 when none is stored. A stale one: 409."
    )
    settings: TenantSettings
    provider_key: SecretStr | None = Field(
        default=None,
        description="The tenant's own model provider key (write-only: never returned, never logged).",
    )
    clear_provider_key: bool = Field(default=False, strict=True)

    @field_validator("provider_key")
    @classmethod
    def _key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        raw = value.get_secret_value()
        # The messages name no part of the key: error bodies never echo a secret.
        if not raw.strip() or len(raw) > MAX_PROVIDER_KEY_CHARS:
            raise ValueError(f"provider_key must be 1..{MAX_PROVIDER_KEY_CHARS} characters")
        if any(c.isspace() or not c.isprintable() for c in raw):
            raise ValueError("provider_key must be printable characters without spaces")
        return value


class ProviderKeyOut(BaseModel):
    last4: str = Field(description="The key's last four characters.")
    set_at: datetime

    @classmethod
    def of(cls, info: SecretInfo | None) -> ProviderKeyOut | None:
        return None if info is None else cls(last4=info.last4, set_at=info.set_at)


class EmbeddingProgress(BaseModel):
    """Which embedding model the tenant's searches use, and the re-embedding under way."""

    active: ModelChoice | None = Field(description="The model searches use (null: the deployment's).")
    target: ModelChoice | None = Field(
        description="The model the tenant's memories are being re-embedded with (null: the "
        "deployment's, when the phase is not steady)."
    )
    phase: Literal["steady", "re-embedding", "switching"] = Field(
        description="steady: nothing moving; re-embedding: memories being embedded with the target "
        "model (searches use the active one); switching: every memory is embedded, searches move to "
        "the target within the settings cache's lifetime."
    )
    embedded: int = Field(description="Memories embedded with the target model so far.")
    remaining: int | None = Field(description="Memories left to embed when last counted (null: not yet).")
    started_at: datetime | None
    switched_at: datetime | None = Field(description="When searches last moved to another model.")

    @classmethod
    def of(cls, state: EmbeddingState | None) -> EmbeddingProgress:
        state = state or EmbeddingState()
        phase: Literal["steady", "re-embedding", "switching"] = (
            "steady" if not state.moving else "switching" if state.remaining == 0 else "re-embedding"
        )
        return cls(
            active=state.active,
            target=state.target,
            phase=phase,
            embedded=state.embedded if state.moving else 0,
            remaining=state.remaining if state.moving else 0,
            started_at=state.started_at,
            switched_at=state.switched_at,
        )


class SettingsResponse(BaseModel):
    tenant_id: str
    version: int = Field(description="Send it back with a change (optimistic concurrency).")
    settings: TenantSettings
    updated_at: str | None
    updated_by: str | None = Field(description="The key id that made the last change.")
    plan: str
    plan_retention_hours: Retention = Field(
        description="Hours each grain is kept on the plan (null: forever): the most retention_hours may ask."
    )
    provider_key: ProviderKeyOut | None = Field(description="Set key's last four characters (null: none).")
    embedding: EmbeddingProgress = Field(
        description="The embedding model in force and the re-embedding a change of it started."
    )

    @classmethod
    def of(cls, view: SettingsView) -> SettingsResponse:
        return cls(
            tenant_id=view.tenant_id,
            version=view.version,
            settings=view.settings,
            updated_at=view.updated_at,
            updated_by=view.updated_by,
            plan=view.plan,
            plan_retention_hours=view.plan_retention_hours,
            provider_key=ProviderKeyOut.of(view.provider_key),
            embedding=EmbeddingProgress.of(view.embedding),
        )
