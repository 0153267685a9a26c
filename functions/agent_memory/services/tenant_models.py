"""The models a tenant chose, made once per settings version: its summary model today.

A tenant's `TenantSettings.summary` names a model (Bedrock, an OpenAI-compatible endpoint, or a
bundled one); without one, the deployment's summarizer serves it. The summarizer is built from
the choice and the tenant's own provider key (read from the secret store, never from the
operator's settings) and kept until the tenant's settings change (every change, a new key
included, is a new version). A key the provider refuses surfaces as `ProviderKeyRejectedError`
from the model call: there is no fallback to the deployment's model or key.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_memory.domain.tenant_settings import ModelChoice, ModelProvider
from agent_memory.ports import Summarizer
from agent_memory.ports.tenancy import SecretStore
from agent_memory.services.tenant_configuration import SettingsCache

#: Builds a summarizer for a choice and the tenant's key (None: it set none).
SummarizerFactory = Callable[[ModelChoice, str | None], Summarizer]


class TenantSummarizers:
    """``for_tenant(tenant_id)``: the summarizer a tenant's jobs use."""

    def __init__(
        self, default: Summarizer, cache: SettingsCache, secrets: SecretStore, build: SummarizerFactory
    ) -> None:
        self._default = default
        self._cache = cache
        self._secrets = secrets
        self._build = build
        self._built: dict[str, tuple[int, Summarizer]] = {}
        self._lock = threading.Lock()

    @property
    def default(self) -> Summarizer:
        return self._default

    def for_tenant(self, tenant_id: str) -> Summarizer:
        stored = self._cache.stored(tenant_id)
        choice = stored.settings.summary if stored is not None else None
        if stored is None or choice is None:
            return self._default
        with self._lock:
            made = self._built.get(tenant_id)
        if made is not None and made[0] == stored.version:
            return made[1]
        key = self._secrets.get_secret(tenant_id) if choice.provider is ModelProvider.OPENAI else None
        summarizer = self._build(choice, key)
        with self._lock:
            self._built[tenant_id] = (stored.version, summarizer)
        return summarizer


def summarizer_of(summarizers: TenantSummarizers | None, default: Summarizer, tenant_id: str) -> Summarizer:
    """The summarizer of ``tenant_id``'s jobs: its own model when a resolver is given, else ``default``."""
    return summarizers.for_tenant(tenant_id) if summarizers is not None else default
