"""A tenant's own way of running memory: its models, its retention and ranking, its merging.

Every field is optional: what a tenant does not set is the deployment's default (the operator's
settings and the tenant's subscription plan). A tenant may keep memory for less time than its
plan allows, never for more (`check_within_plan`). The tenant's provider key is not part of these
settings: it is a secret (`ports.tenancy.SecretStore`), set and cleared beside them and only ever
shown as its last four characters.

Pure (no I/O): `tenancy.settings` reads, checks, stores and caches them.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from agent_memory.governance.rules.plans import Retention
from agent_memory.model.grains import Grain
from agent_memory.model.ids import digest
from agent_memory.model.records import MemoryKind
from agent_memory.model.types import Score, TenantId, UtcDatetime
from agent_memory.tenancy.rules.outbound import OutboundPolicy, literal_address

if TYPE_CHECKING:
    from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState

_STRICT = ConfigDict(extra="forbid", frozen=True)
#: The longest a tenant may keep a working memory by default, in days (as a write's ``ttl_days``).
MAX_TTL_DAYS = 36_500
#: The longest provider key accepted, in characters (hosted providers' keys are far shorter).
MAX_PROVIDER_KEY_CHARS = 4_096


class ModelProvider(StrEnum):
    """Where a model runs: Bedrock (the deployment's account), an OpenAI-compatible endpoint
    (a hosted provider or a self-hosted server), or a model bundled with the local runtime."""

    BEDROCK = "bedrock"
    OPENAI = "openai"
    LOCAL = "local"


def check_endpoint(url: str) -> str:
    """An OpenAI-compatible base URL (``https://api.example.com/v1``): HTTPS, or HTTP to this
    machine only (a self-hosted server beside the local runtime); no credentials, query or
    fragment in it (the key is sent as a header, never in a URL that logs would keep). Returned
    normalised (scheme and host in lower case, no trailing slash), so one endpoint is one space.

    Whitespace and control characters are refused outright: the URL parser drops some of them
    silently, and what it checked would not be what is stored."""
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ValueError("endpoint must not contain spaces or control characters")
    if any(mark in url for mark in ("@", "?", "#")):
        raise ValueError("endpoint must not hold credentials, a query or a fragment")
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme.lower() not in ("https", "http") or not host:
        raise ValueError("endpoint must be an https:// URL")
    # An address literal in any form a socket reads is checked here; loopback, and what a name
    # resolves to, by the outbound policy when the settings are stored and on every call.
    address = literal_address(host)
    if parts.scheme.lower() == "http" and not (address is not None and address.is_loopback):
        raise ValueError("endpoint must be https:// (plain http is allowed to localhost only)")
    if address is not None and OutboundPolicy(allow_loopback=True).refusal(address):
        raise ValueError("endpoint must name a public host, not a private or link-local address")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("endpoint has an invalid port") from None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urllib.parse.urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


class ModelChoice(BaseModel):
    """One model: its provider, its id there, and for an OpenAI-compatible provider its endpoint.

    ``dimension`` is an embedding model's output size (Titan v2: 256, 512 or 1024; an
    OpenAI-compatible model: what it returns, or what it is asked for when it can shorten)."""

    model_config = _STRICT

    provider: ModelProvider
    model: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")
    endpoint: str | None = Field(default=None, max_length=2048)
    dimension: int | None = Field(default=None, strict=True, ge=8, le=8192)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return None if value is None else check_endpoint(value)

    @model_validator(mode="after")
    def _endpoint_for_openai_only(self) -> ModelChoice:
        if self.provider is ModelProvider.OPENAI and self.endpoint is None:
            raise ValueError("an openai provider needs its endpoint (the base URL, e.g. https://host/v1)")
        if self.provider is not ModelProvider.OPENAI and self.endpoint is not None:
            raise ValueError(f"endpoint is for the openai provider only, not {self.provider.value}")
        return self

    @property
    def space(self) -> str:
        """The embedding space this model writes into: vectors of two spaces never meet in one
        k-NN query. Stable for the same provider, model, endpoint and dimension."""
        return "sp_" + digest(self.provider.value, self.model, self.endpoint or "", str(self.dimension or 0))


class RankingDefaults(BaseModel):
    """A tenant's ranking defaults; a search's own ``ranking`` still overrides them."""

    model_config = _STRICT

    lexical_weight: Score | None = None
    recency_weight: Score | None = None
    importance_weight: Score | None = None

    def overrides(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class RedactionEngine(StrEnum):
    """Who finds personal data in a write: the local engine of validators and patterns
    (`domain.redaction`), or Amazon Comprehend's DetectPiiEntities as well (in AWS deployments
    that enable it; its findings are added to the local engine's, never instead of them)."""

    LOCAL = "local"
    COMPREHEND = "comprehend"


class RedactionSettings(BaseModel):
    """Redaction on write (off by default): e-mail addresses, phone numbers, card numbers, IBANs,
    IP addresses and secrets replaced by typed placeholders before a write is queued, so the
    original is never embedded, summarized, stored or logged."""

    model_config = _STRICT

    enabled: bool = Field(default=False, strict=True)
    engine: RedactionEngine = RedactionEngine.LOCAL


class TenantSettings(BaseModel):
    """What a tenant chose; an absent field is the deployment's default."""

    model_config = _STRICT

    embedding: ModelChoice | None = None
    summary: ModelChoice | None = None
    #: Hours each grain is kept (null: as long as the plan keeps it); never longer than the plan.
    retention_hours: dict[Grain, StrictInt | None] = Field(default_factory=dict)
    #: Default lifetime of a working memory by kind, in days, when a write names no ``ttl_days``
    #: (null: no expiry for that kind).
    ttl_days: dict[MemoryKind, StrictInt | None] = Field(default_factory=dict)
    #: The most working memories one agent keeps (retention removes the oldest above it); at most
    #: the deployment's own bound.
    max_working_per_agent: int | None = Field(default=None, strict=True, ge=1, le=10_000_000)
    ranking: RankingDefaults = Field(default_factory=RankingDefaults)
    #: Whether a write nearly identical to a stored memory is merged into it (docs/decisions.md).
    merge_near_duplicates: bool = True
    #: Personal data and secrets replaced by placeholders before a write is accepted.
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)

    @field_validator("retention_hours")
    @classmethod
    def _hours(cls, value: dict[Grain, int | None]) -> dict[Grain, int | None]:
        for grain, hours in value.items():
            if hours is not None and not 1 <= hours <= 24 * MAX_TTL_DAYS:
                raise ValueError(f"retention_hours.{grain.value} must be 1..{24 * MAX_TTL_DAYS} or null")
        return value

    @field_validator("ttl_days")
    @classmethod
    def _ttl(cls, value: dict[MemoryKind, int | None]) -> dict[MemoryKind, int | None]:
        for kind, days in value.items():
            if days is not None and not 1 <= days <= MAX_TTL_DAYS:
                raise ValueError(f"ttl_days.{kind.value} must be 1..{MAX_TTL_DAYS} or null")
        return value


class StoredSettings(BaseModel):
    """A tenant's settings as stored: each change a new ``version`` (a write names the version it
    read, so two admins editing at once cannot lose one's change)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant_id: TenantId
    settings: TenantSettings
    version: int = Field(ge=0)
    updated_at: UtcDatetime
    updated_by: str = Field(max_length=128)

    @classmethod
    def after(
        cls, tenant_id: str, settings: TenantSettings, read_version: int, actor: str, at: datetime
    ) -> StoredSettings:
        """The document a change stores: the version after the one it read."""
        return cls(
            tenant_id=tenant_id, settings=settings, version=read_version + 1, updated_at=at, updated_by=actor
        )


class SecretInfo(BaseModel):
    """What may be shown of a secret: its last four characters and when it was set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    last4: str = Field(max_length=4)
    set_at: datetime


@dataclass(frozen=True, slots=True)
class SettingsView:
    """What the admin reads: the settings, their version, the plan's bounds, and of the key only
    its last four characters and when it was set."""

    tenant_id: str
    settings: TenantSettings
    version: int
    updated_at: str | None
    updated_by: str | None
    plan: str
    plan_retention_hours: Retention
    provider_key: SecretInfo | None
    #: The tenant's embedding spaces (which model searches use, the re-embedding's progress).
    embedding: EmbeddingState | None = None


def check_within_plan(settings: TenantSettings, plan: Retention) -> list[str]:
    """What in ``settings`` asks for longer than ``plan`` keeps (empty: nothing)."""
    problems = []
    for grain, hours in settings.retention_hours.items():
        allowed = plan.get(grain)
        if allowed is None:
            continue  # the plan keeps this grain forever: any bound is shorter
        if hours is None or hours > allowed:
            asked = "forever" if hours is None else f"{hours} hours"
            problems.append(
                f"retention_hours.{grain.value}: {asked} is longer than the plan's {allowed} hours"
            )
    return problems


def effective_retention(plan: Retention, settings: TenantSettings | None) -> Retention:
    """How long each grain is kept for the tenant: its own bound where it set one (never longer
    than the plan, even if the plan shrank since), else the plan's."""
    if settings is None:
        return dict(plan)
    out: Retention = dict(plan)
    for grain, hours in settings.retention_hours.items():
        allowed = plan.get(grain)
        if hours is None:
            continue
        out[grain] = hours if allowed is None else min(hours, allowed)
    return out


def changes(before: TenantSettings | None, after: TenantSettings) -> dict[str, Any]:
    """The top-level fields a change touched, each ``{"before": ..., "after": ...}`` (JSON), for
    the audit trail. Settings hold no secret, so the values are safe to record."""
    old = (before or TenantSettings()).model_dump(mode="json")
    new = after.model_dump(mode="json")
    return {k: {"before": old.get(k), "after": v} for k, v in new.items() if old.get(k) != v}
