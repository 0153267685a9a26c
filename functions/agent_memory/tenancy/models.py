"""The models a tenant chose, made once per settings version: its summary and embedding models.

A tenant's `TenantSettings.summary` names a model (Bedrock, an OpenAI-compatible endpoint, or a
bundled one); without one, the deployment's summarizer serves it. The summarizer is built from
the choice and the tenant's own provider key (read from the secret store, never from the
operator's settings) and kept until the tenant's settings change (every change, a new key
included, is a new version). A key the provider refuses surfaces as `ProviderKeyRejectedError`
from the model call: there is no fallback to the deployment's model or key.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from agent_memory.model.records import MemoryRecord
from agent_memory.ports import Embedder, Summarizer, Vector
from agent_memory.ports.tenancy import SecretStore
from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider
from agent_memory.tenancy.settings import SettingsCache
from agent_memory.writing.rules.contextual import (
    SETTING_WEIGHT,
    context_parts,
    dedup_text,
    setting_text,
    vector_texts,
)

M = TypeVar("M")
#: Builds a summarizer for a choice and the tenant's key (None: it set none).
SummarizerFactory = Callable[[ModelChoice, str | None], Summarizer]
#: Builds an embedder likewise.
EmbedderFactory = Callable[[ModelChoice, str | None], Embedder]


class Models(Generic[M]):
    """A tenant's models, each made once per settings version (a new key is a new version) with
    the tenant's own key, read from the secret store only for a model that takes one."""

    def __init__(
        self, cache: SettingsCache, secrets: SecretStore, build: Callable[[ModelChoice, str | None], M]
    ) -> None:
        self._cache = cache
        self._secrets = secrets
        self._build = build
        self._made: dict[tuple[str, str], tuple[int, M]] = {}
        self._lock = threading.Lock()

    def get(self, tenant_id: str, choice: ModelChoice, version: int) -> M:
        slot = (tenant_id, choice.space)
        with self._lock:
            made = self._made.get(slot)
        if made is not None and made[0] == version:
            return made[1]
        key = self._secrets.get_secret(tenant_id) if choice.provider is ModelProvider.OPENAI else None
        model = self._build(choice, key)
        with self._lock:
            self._made[slot] = (version, model)
        return model


class TenantSummarizers:
    """``for_tenant(tenant_id)``: the summarizer a tenant's jobs use."""

    def __init__(
        self, default: Summarizer, cache: SettingsCache, secrets: SecretStore, build: SummarizerFactory
    ) -> None:
        self._default = default
        self._cache = cache
        self._made = Models(cache, secrets, build)

    @property
    def default(self) -> Summarizer:
        return self._default

    def for_tenant(self, tenant_id: str) -> Summarizer:
        stored = self._cache.stored(tenant_id)
        choice = stored.settings.summary if stored is not None else None
        if stored is None or choice is None:
            return self._default
        return self._made.get(tenant_id, choice, stored.version)


def summarizer_of(summarizers: TenantSummarizers | None, default: Summarizer, tenant_id: str) -> Summarizer:
    """The summarizer of ``tenant_id``'s jobs: its own model when a resolver is given, else ``default``."""
    return summarizers.for_tenant(tenant_id) if summarizers is not None else default


def record_vectors(embedder: Embedder, records: Sequence[MemoryRecord]) -> list[Vector]:
    """One embedding call for the batch, each distinct text once (`writing.rules.contextual.vector_texts`),
    and each record's vector composed from them: the self vector is the normalised sum of its own
    words and its setting, and a record with a context is stored as the normalised sum of that and
    the normalised mean of its context's turns (the earlier turns' words, then its self vector).
    The writer and the re-embedding job both embed this way, so a record re-embedded into a new
    space is the vector its writer would have made."""
    texts = list(dict.fromkeys(t for r in records for t in vector_texts(r)))
    vectors = dict(zip(texts, np.asarray(embedder.embed(texts), dtype=np.float32), strict=True))
    return [_composed(r, vectors) for r in records]


def _composed(record: MemoryRecord, vectors: dict[str, Vector]) -> Vector:
    own = vectors[dedup_text(record)]
    setting = setting_text(record)
    mine = own if setting is None else _unit(SETTING_WEIGHT * vectors[setting] + own)
    earlier = [vectors[p] for p in context_parts(record.context)]
    if not record.context:
        return mine
    turns = _unit(np.sum([*earlier, mine], axis=0))
    return _unit(mine + turns)


def _unit(vector: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


@dataclass(frozen=True, slots=True)
class SpaceEmbedder:
    """A model and the space its vectors are in."""

    space: str
    embedder: Embedder


@dataclass(frozen=True, slots=True)
class TenantSpaces:
    """Which model a tenant's searches embed with, and which its writes embed with (the active
    one, and during a re-embedding the target one too: `tenancy.rules.embedding_spaces`)."""

    search: SpaceEmbedder
    writes: tuple[SpaceEmbedder, ...]

    @property
    def deployment_only(self) -> bool:
        return all(w.space == DEFAULT_SPACE for w in self.writes)


class TenantEmbedders:
    """``for_tenant(tenant_id)``: the embedders of a tenant's writes and searches, by its
    embedding state (read through the settings cache) and its key."""

    def __init__(
        self, default: Embedder, cache: SettingsCache, secrets: SecretStore, build: EmbedderFactory
    ) -> None:
        self._default = SpaceEmbedder(DEFAULT_SPACE, default)
        self._cache = cache
        self._made = Models(cache, secrets, build)

    @property
    def default(self) -> Embedder:
        return self._default.embedder

    def for_tenant(self, tenant_id: str) -> TenantSpaces:
        state = self._cache.embedding(tenant_id)
        if state.active is None and not state.moving:
            return TenantSpaces(self._default, (self._default,))
        writes = tuple(self.of_choice(tenant_id, choice) for choice in state.writes_to())
        return TenantSpaces(writes[0], writes)

    def of_choice(self, tenant_id: str, choice: ModelChoice | None) -> SpaceEmbedder:
        """The embedder of ``choice`` with the tenant's key (None: the deployment's), made once
        per settings version (a new key is a new version)."""
        if choice is None:
            return self._default
        stored = self._cache.stored(tenant_id)
        version = stored.version if stored is not None else 0
        return SpaceEmbedder(choice.space, self._made.get(tenant_id, choice, version))


def spaces_of(embedders: TenantEmbedders | None, default: Embedder, tenant_id: str) -> TenantSpaces:
    """A tenant's spaces when a resolver is given, else the deployment's model alone."""
    if embedders is not None:
        return embedders.for_tenant(tenant_id)
    only = SpaceEmbedder(DEFAULT_SPACE, default)
    return TenantSpaces(only, (only,))
