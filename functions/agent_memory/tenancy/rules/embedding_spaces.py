"""Which embedding space a tenant's memories are searched in, and the move from one to another.

Vectors of two models are not comparable, so each model has its own *space* (`ModelChoice.space`;
``""`` is the deployment's own model) and a k-NN query only ever reads one. A tenant that
chooses another model does not switch at once: its records are embedded into the new space by a
background job first, while searches go on in the old one, and the switch happens when the new
space holds every record. `EmbeddingState` is that move, kept per tenant beside its settings
(server-managed: an admin changes ``settings.embedding``, the service and the job change this).

The phases, each safe against functions that read the state through a cache up to ``ttl`` old:

1. *Filling*: ``moving``, towards ``target`` (None: back to the deployment's model). Writers
   embed into ``active`` and ``target`` both; the job
   embeds every record that has no ``target`` vector. Searches read ``active``.
2. *Switch*: when nothing is missing, and the fill started more than ``ttl`` ago (so no writer
   still reads the state from before it and writes ``active`` alone), ``target`` becomes
   ``active``. Searches read the new space as soon as their cache expires; until then the old
   space is still complete, because writers still fill both.
3. *Retire*: ``ttl`` after the switch, nobody reads the old space any more; its vectors are
   dropped (``retiring``), so a tenant that left a model keeps no vectors of it.

Pure (no I/O): `services.embedding_spaces` runs the phases.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.model.types import TenantId, UtcDatetime
from agent_memory.tenancy.rules.tenant_settings import ModelChoice

#: The deployment's own embedding space (its configured model).
DEFAULT_SPACE = ""


def space_of(choice: ModelChoice | None) -> str:
    """The space a model writes into (None: the deployment's model)."""
    return DEFAULT_SPACE if choice is None else choice.space


class EmbeddingState(BaseModel):
    """A tenant's embedding spaces: the one searched, the one being filled, the one retiring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The model searches use (None: the deployment's).
    active: ModelChoice | None = None
    #: Whether a move is under way, and the model being filled by it (None: the deployment's).
    moving: bool = False
    target: ModelChoice | None = None
    #: When the current fill started (the switch waits until a cache lifetime after it).
    started_at: UtcDatetime | None = None
    #: Records embedded into ``target`` by the job so far, and how many were missing when last counted.
    embedded: int = Field(default=0, ge=0)
    remaining: int | None = Field(default=None, ge=0)
    #: Spaces no longer read, with when they stopped being written: dropped a cache lifetime later.
    retiring: dict[str, UtcDatetime] = Field(default_factory=dict)
    switched_at: UtcDatetime | None = None
    #: Compare-and-set counter: the job and an admin's change never overwrite each other.
    version: int = Field(default=0, ge=0)

    @property
    def active_space(self) -> str:
        return space_of(self.active)

    @property
    def target_space(self) -> str | None:
        return space_of(self.target) if self.moving else None

    def writes_to(self) -> list[ModelChoice | None]:
        """The models a write is embedded with: the active one, and the target during a fill."""
        return [self.active, self.target] if self.moving else [self.active]

    def choose(self, wanted: ModelChoice | None, now: datetime) -> EmbeddingState:
        """The state after an admin chose ``wanted``: a fill towards it (restarted if it was
        filling towards another), nothing when it is already the active model (a fill under way
        is abandoned and its partial space retired)."""
        wanted_space = space_of(wanted)
        retiring = dict(self.retiring)
        retiring.pop(wanted_space, None)  # a space being refilled must not be dropped under it
        if self.moving and self.target_space != wanted_space:
            retiring[space_of(self.target)] = now  # written until now: drop it later
        fill = wanted_space != self.active_space
        if fill and self.moving and self.target_space == wanted_space:
            return self.model_copy(update={"retiring": retiring})
        return self.model_copy(
            update={
                "moving": fill,
                "target": wanted if fill else None,
                "started_at": now if fill else None,
                "embedded": 0,
                "remaining": None,
                "retiring": retiring,
            }
        )

    def may_switch(self, now: datetime, ttl: timedelta) -> bool:
        """Whether every function now writes the target too (the fill began a cache lifetime ago)."""
        return self.moving and self.started_at is not None and now >= self.started_at + ttl

    def switched(self, now: datetime) -> EmbeddingState:
        """``target`` made active; the old active space retiring from now."""
        assert self.moving
        retiring = {**self.retiring, self.active_space: now}
        retiring.pop(space_of(self.target), None)
        return self.model_copy(
            update={
                "active": self.target,
                "moving": False,
                "target": None,
                "started_at": None,
                "remaining": 0,
                "retiring": retiring,
                "switched_at": now,
            }
        )

    def due_for_drop(self, now: datetime, ttl: timedelta) -> list[str]:
        """Retiring spaces nobody reads or writes any more (retired more than ``ttl`` ago)."""
        return sorted(space for space, since in self.retiring.items() if now >= since + ttl)

    def dropped(self, spaces: list[str]) -> EmbeddingState:
        kept = {s: t for s, t in self.retiring.items() if s not in spaces}
        return self.model_copy(update={"retiring": kept})


class ReembedJob(BaseModel):
    """The job message that moves a tenant's records between spaces (one per tenant at a time
    locally: its key is its queue group). It carries nothing but the tenant: what to do is read
    from the tenant's `EmbeddingState` and the store, so a redelivered or duplicated job
    resumes where the last run stopped."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    job: Literal["reembed"] = "reembed"
    tenant_id: TenantId

    @property
    def key(self) -> str:
        return f"{self.tenant_id}:reembed"
