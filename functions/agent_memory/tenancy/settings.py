"""A tenant's settings: read and changed by its admin, read by every function through a cache.

The admin reads and replaces the whole document (`SettingsService`): a change names the
version it read, is checked against the tenant's plan (memory is never kept longer than the plan
allows), is stored, and is recorded in the audit trail with who made it and each changed field
before and after. The provider key is set or cleared beside the settings and stored as a secret;
the trail says only that it was set or cleared, never any of it.

Everything else reads settings through `SettingsCache` (one per process, like the topic cache):
a search or a write pays no extra round trip, and a change is in force everywhere within the
cache's lifetime (``AGENT_MEMORY_TENANT_SETTINGS_CACHE_S``, 60 s by default; the process that
made the change sees it at once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime

from agent_memory.errors import AgentMemoryError, ValidationFailedError
from agent_memory.governance.rules.plans import Retention, hours_of
from agent_memory.model.caller import Caller
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import AuditAction, AuditEvent, AuditLog, AuditPage, AuditQuery, Clock
from agent_memory.ports.tenancy import EmbeddingStateStore, ReembedStarter, SecretStore, TenantSettingsStore
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.outbound import OutboundGuard, OutboundRefusedError
from agent_memory.tenancy.rules.tenant_settings import (
    ModelChoice,
    ModelProvider,
    RedactionEngine,
    SettingsView,
    StoredSettings,
    TenantSettings,
    changes,
    check_within_plan,
)
from agent_memory.tenancy.tenant_cache import TenantCache

#: The audit trail's "agent" for tenant-level events: no agent id can start with "_".
TENANT_AUDIT_AGENT = "_tenant"
SETTINGS_RECORD = "settings"
DEFAULT_TTL_S = 60.0
DEFAULT_MAX_TENANTS = 10_000


class SettingsCache:
    """Each tenant's stored settings for ``ttl_s`` (absent ones too), at most ``max_tenants``."""

    def __init__(
        self,
        store: TenantSettingsStore,
        ttl_s: float = DEFAULT_TTL_S,
        max_tenants: int = DEFAULT_MAX_TENANTS,
        clock: Callable[[], float] = time.monotonic,
        states: EmbeddingStateStore | None = None,
    ) -> None:
        self.store = store
        self.states = states
        self.ttl_s = ttl_s
        self._cache: TenantCache[StoredSettings | None] = TenantCache(ttl_s, max_tenants, clock)
        self._states: TenantCache[EmbeddingState | None] = TenantCache(ttl_s, max_tenants, clock)

    def stored(self, tenant_id: str) -> StoredSettings | None:
        """The tenant's stored settings, or None (never set). A store that cannot be read raises:
        a tenant that chose its own models must never be served by the operator's instead."""
        hit, cached = self._cache.lookup(tenant_id)
        return cached if hit else self._read(tenant_id)

    def _read(self, tenant_id: str) -> StoredSettings | None:
        """The stored settings read now (counted when the store fails), kept as this process's copy."""
        try:
            stored = self.store.get_settings(tenant_id)
        except AgentMemoryError:
            metrics.add_metric(name="TenantSettingsErrors", unit=MetricUnit.Count, value=1)
            raise
        self.remember(tenant_id, stored)
        return stored

    def settings(self, tenant_id: str) -> TenantSettings:
        """The tenant's settings (the defaults when it never set any)."""
        stored = self.stored(tenant_id)
        return stored.settings if stored is not None else TenantSettings()

    def current(self, tenant_id: str) -> TenantSettings:
        """The tenant's settings as stored now, whatever this process cached: for the decisions
        that must hold from the moment a change is acknowledged on any process (redaction).

        A change is answered by one process; the others hold their copy for ``ttl_s``, so a
        privacy control read through the cache stayed off on them for up to a minute after its
        PUT answered 200. One read of one small item per call (SQLite: a primary-key lookup;
        DynamoDB: a consistent GetItem), which also refreshes this process's copy."""
        stored = self._read(tenant_id)
        return stored.settings if stored is not None else TenantSettings()

    def remember(self, tenant_id: str, stored: StoredSettings | None) -> None:
        self._cache.remember(tenant_id, stored)

    def embedding(self, tenant_id: str) -> EmbeddingState:
        """The tenant's embedding spaces (which one searches read, which one is being filled),
        as of at most the cache's lifetime ago; the deployment's space when it never chose."""
        if self.states is None:
            return EmbeddingState()
        hit, cached = self._states.lookup(tenant_id)
        if not hit:
            try:
                cached = self.states.get_embedding_state(tenant_id)
            except AgentMemoryError:
                metrics.add_metric(name="TenantSettingsErrors", unit=MetricUnit.Count, value=1)
                raise
            self._states.remember(tenant_id, cached)
        return cached if cached is not None else EmbeddingState()

    def remember_embedding(self, tenant_id: str, state: EmbeddingState) -> None:
        self._states.remember(tenant_id, state)


class SettingsService:
    def __init__(
        self,
        cache: SettingsCache,
        secrets: SecretStore,
        audit: AuditLog,
        clock: Clock,
        plans: Mapping[str, Retention],
        max_working_per_agent: int,
        summary_models: Mapping[ModelProvider, frozenset[str] | None] | None = None,
        embedding_models: Mapping[ModelProvider, frozenset[str] | None] | None = None,
        reembedding: ReembedStarter | None = None,
        comprehend_available: bool = False,
        outbound: OutboundGuard | None = None,
    ) -> None:
        self._cache = cache
        #: Where an OpenAI-compatible endpoint may point (`tenancy.rules.outbound`): checked, resolved,
        #: when the settings are stored (its client checks again on every call).
        self._outbound = outbound
        #: Whether this deployment may call Amazon Comprehend (`TenantSettings.redaction.engine`).
        self._comprehend = comprehend_available
        self._secrets = secrets
        self._audit = audit
        self._clock = clock
        self._plans = plans
        self._max_working = max_working_per_agent
        #: What a tenant may choose as its summary model, per provider (None: any; absent: none).
        self._summary_models = summary_models or {}
        #: Likewise for the embedding model; a change of it starts a re-embedding (None: refused).
        self._embedding_models = embedding_models or {}
        self._reembedding = reembedding

    def view(self, caller: Caller) -> SettingsView:
        stored = self._cache.store.get_settings(caller.tenant_id)  # the admin reads its latest
        return self._view(caller, stored)

    def update(
        self,
        caller: Caller,
        settings: TenantSettings,
        expected_version: int,
        provider_key: str | None = None,
        clear_provider_key: bool = False,
    ) -> SettingsView:
        """Replace the caller's tenant's settings (and set or clear its key); the new view."""
        problems = check_within_plan(settings, self._plan(caller.plan))
        if settings.max_working_per_agent is not None and settings.max_working_per_agent > self._max_working:
            problems.append(
                f"max_working_per_agent: {settings.max_working_per_agent} is more than this "
                f"deployment keeps per agent ({self._max_working})"
            )
        problems += self._model_problems(settings)
        if provider_key is not None and clear_provider_key:
            problems.append("provider_key and clear_provider_key cannot both be given")
        if problems:
            raise ValidationFailedError("; ".join(problems))
        tenant, now = caller.tenant_id, self._clock.now()
        before = self._cache.store.get_settings(tenant)
        stored = self._cache.store.put_settings(tenant, settings, expected_version, caller.key_id, now)
        self._cache.remember(tenant, stored)
        detail: dict[str, object] = {
            "version": stored.version,
            "changes": changes(before.settings if before else None, settings),
        }
        if provider_key is not None:
            self._secrets.put_secret(tenant, provider_key)
            detail["provider_key"] = "set"
        elif clear_provider_key and self._secrets.delete_secret(tenant):
            detail["provider_key"] = "cleared"
        if self._reembedding is not None:
            # After the key: the job's first model call must find the key this change set.
            self._reembedding.start(tenant, settings.embedding)
        self._record(tenant, AuditAction.SETTINGS_CHANGED, caller.key_id, now, detail)
        metrics.add_metric(name="TenantSettingsChanged", unit=MetricUnit.Count, value=1)
        logger.info(
            "tenant settings changed",
            extra={"version": stored.version, "provider_key": detail.get("provider_key", "unchanged")},
        )
        return self._view(caller, stored)

    def record_key_rejected(self, tenant_id: str, job: str) -> None:
        """The tenant's provider refused its key for ``job``: said in the settings history, where
        its admin looks, since the job itself only fails (and is dead-lettered after retries)."""
        self._record(tenant_id, AuditAction.KEY_REJECTED, "provider", self._clock.now(), {"job": job})
        metrics.add_metric(name="ProviderKeyRejected", unit=MetricUnit.Count, value=1)
        logger.warning("the tenant's provider refused its key", extra={"job": job})

    def _record(
        self, tenant_id: str, action: str, actor: str, at: datetime, detail: dict[str, object]
    ) -> None:
        """One event of the tenant's settings history (the trail `history` reads)."""
        self._audit.append_audit(
            [AuditEvent(tenant_id, TENANT_AUDIT_AGENT, SETTINGS_RECORD, action, actor, at, detail)]
        )

    def history(self, caller: Caller, limit: int, cursor: str | None) -> AuditPage:
        """The tenant's settings changes, newest first: who changed which field, from what to what."""
        return self._audit.audit_events(
            AuditQuery(
                caller.tenant_id, TENANT_AUDIT_AGENT, record_id=SETTINGS_RECORD, limit=limit, cursor=cursor
            )
        )

    def _model_problems(self, settings: TenantSettings) -> list[str]:
        problems = _choice_problems("summary", settings.summary, self._summary_models)
        choice = settings.embedding
        if choice is not None and self._reembedding is None:
            problems.append("embedding: a tenant's own embedding model is not available in this deployment")
        elif choice is not None:
            problems += _choice_problems("embedding", choice, self._embedding_models)
            problems += embedding_dimension_problems(choice)
        if settings.redaction.engine is RedactionEngine.COMPREHEND and not self._comprehend:
            problems.append("redaction.engine: comprehend is not enabled in this deployment (use local)")
        for name, model in (("summary", settings.summary), ("embedding", settings.embedding)):
            if self._outbound is not None and model is not None and model.endpoint is not None:
                try:
                    self._outbound.target(model.endpoint)
                except OutboundRefusedError as exc:
                    problems.append(f"{name}.endpoint: {exc}")
        return problems

    def _plan(self, plan: str) -> Retention:
        return hours_of(self._plans, plan)

    def _view(self, caller: Caller, stored: StoredSettings | None) -> SettingsView:
        return SettingsView(
            tenant_id=caller.tenant_id,
            settings=stored.settings if stored else TenantSettings(),
            version=stored.version if stored else 0,
            updated_at=stored.updated_at.isoformat() if stored else None,
            updated_by=stored.updated_by if stored else None,
            plan=caller.plan,
            plan_retention_hours=self._plan(caller.plan),
            provider_key=self._secrets.secret_info(caller.tenant_id),
            embedding=self._reembedding.state(caller.tenant_id) if self._reembedding is not None else None,
        )


def _choice_problems(
    name: str, choice: ModelChoice | None, enabled_models: Mapping[ModelProvider, frozenset[str] | None]
) -> list[str]:
    if choice is None:
        return []
    if choice.provider not in enabled_models:
        return [f"{name}: provider {choice.provider.value} is not enabled here"]
    enabled = enabled_models[choice.provider]
    if enabled is not None and choice.model not in enabled:
        names = ", ".join(sorted(enabled)) or "none"
        model = f"{choice.provider.value} model {choice.model}"
        return [f"{name}: {model} is not enabled here (enabled: {names})"]
    return []


#: The sizes Titan Text Embeddings v2 gives; MiniLM gives 384 only.
_TITAN_DIMENSIONS = (256, 512, 1024)
_MINILM_DIMENSION = 384


def embedding_dimension_problems(choice: ModelChoice) -> list[str]:
    """An embedding model's size must be known before its first vector: it sizes the space."""
    if choice.provider is ModelProvider.OPENAI and choice.dimension is None:
        return ["embedding: an openai model needs its dimension (the length of the vectors it returns)"]
    if choice.provider is ModelProvider.BEDROCK and choice.dimension not in (None, *_TITAN_DIMENSIONS):
        return [f"embedding: bedrock dimension must be one of {', '.join(map(str, _TITAN_DIMENSIONS))}"]
    if choice.model == "minilm" and choice.dimension not in (None, _MINILM_DIMENSION):
        return [f"embedding: minilm gives {_MINILM_DIMENSION} dimensions"]
    return []
