"""An export: everything the service keeps of one end user or one agent, as a file to hand over.

The twin of erasure (`governance.forget`): "a user's records" means the same here as there, the
live records whose ``user_id`` is the user's, in every agent of the tenant, and the summaries
whose ``user_ids`` name them. An export is a job (`ExportState`), started by a tenant's admin,
run in the background a bounded slice at a time, and read back by its unguessable id; every read
is scoped to the tenant that started it.

A run writes lines and, every so often, a checkpoint: where it stands in its walk (the phase, the
store's cursor, the last agent done) and the file writer's own position (`ExportCheckpoint.sink`,
opaque here). A run that stops at its time budget, or dies, is continued by the next from the
last checkpoint; nothing after it is counted twice, because the writer goes back to that
position too. A lease (``lease_until``) keeps two deliveries of the same job from writing at once.

Pure (no I/O): `governance.export` runs it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_memory.governance.rules.versions import Change, Version
from agent_memory.model.caller import Caller
from agent_memory.model.records import MemoryRecord
from agent_memory.model.types import AgentId, TenantId, UserId, UtcDatetime

#: An export's id: a prefix and 130 random bits in lowercase base32 (unguessable, path-safe).
EXPORT_ID_PATTERN = r"^exp_[a-z2-7]{26}$"
#: A run that keeps failing is given up after this many failures (the export is then ``failed``).
MAX_FAILURES = 3

ExportStatus = Literal["queued", "running", "done", "failed"]
ExportPhase = Literal["records", "summaries"]


def new_export_id() -> str:
    """A fresh export id (`EXPORT_ID_PATTERN`)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    return "exp_" + "".join(secrets.choice(alphabet) for _ in range(26))


class ExportScope(BaseModel):
    """What an export holds: one end user's memory (every agent of the tenant) or one agent's,
    optionally only what speaks about a time in ``[since, until]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: UserId | None = None
    agent_id: AgentId | None = None
    since: UtcDatetime | None = None
    until: UtcDatetime | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> ExportScope:
        if (self.user_id is None) == (self.agent_id is None):
            raise ValueError("name exactly one of user_id and agent_id")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self


class ExportProgress(BaseModel):
    """What has been written so far; ``estimated_total`` is the memories counted at the start
    (an estimate: memories written or forgotten meanwhile move it)."""

    model_config = ConfigDict(extra="forbid")

    memories: int = Field(default=0, ge=0)
    summaries: int = Field(default=0, ge=0)
    withheld_summaries: int = Field(default=0, ge=0)
    audit_events: int = Field(default=0, ge=0)
    bytes: int = Field(default=0, ge=0)
    estimated_total: int | None = Field(default=None, ge=0)


class ExportCheckpoint(BaseModel):
    """Where a run may go on from: the walk's position and the writer's (``sink``), and the
    progress as it was there."""

    model_config = ConfigDict(extra="forbid")

    phase: ExportPhase = "records"
    #: The store's cursor (records), or the agent listing's cursor of the page being walked
    #: (summaries); None: from the start of the phase.
    cursor: str | None = None
    #: Summaries: the last agent whose summaries are written (None: none of that page yet).
    agent_id: str | None = None
    progress: ExportProgress = Field(default_factory=ExportProgress)
    sink: dict[str, Any] = Field(default_factory=dict)


class ExportState(BaseModel):
    """One export job, as kept beside its file and shown to its tenant's admin."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=EXPORT_ID_PATTERN)
    tenant_id: TenantId
    scope: ExportScope
    status: ExportStatus = "queued"
    requested_by: str
    created_at: UtcDatetime
    updated_at: UtcDatetime
    finished_at: UtcDatetime | None = None
    progress: ExportProgress = Field(default_factory=ExportProgress)
    checkpoint: ExportCheckpoint = Field(default_factory=ExportCheckpoint)
    #: A run is writing until then (None: no run holds it).
    lease_until: UtcDatetime | None = None
    failures: int = Field(default=0, ge=0)
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    def leased(self, now: datetime) -> bool:
        return self.lease_until is not None and self.lease_until > now

    def claimed(self, now: datetime, lease: timedelta) -> ExportState:
        """Held by a run from ``now``; progress back at the checkpoint it goes on from."""
        return self.model_copy(
            update={
                "status": "running",
                "lease_until": now + lease,
                "updated_at": now,
                "progress": self.checkpoint.progress.model_copy(),
            }
        )

    def visible_to(self, caller: Caller) -> bool:
        """Whether ``caller`` may see it: its own tenant's, and for a key bound to agents, an
        export of one of those agents."""
        if self.tenant_id != caller.tenant_id:
            return False
        return not caller.agents or self.scope.agent_id in caller.agents


class ExportJob(BaseModel):
    """The job queue's message: run (or go on with) one export."""

    model_config = ConfigDict(extra="forbid")

    job: Literal["export"] = "export"
    tenant_id: TenantId
    export_id: str = Field(pattern=EXPORT_ID_PATTERN)

    @property
    def key(self) -> str:
        return f"export:{self.tenant_id}:{self.export_id}"


@dataclass(frozen=True, slots=True)
class ExportItem:
    """One memory or summary of an export, with its versions and audit trail; a summary that
    also folds other end users' words is ``withheld``: named, its text and trail left out."""

    kind: Literal["memory", "summary"]
    record: MemoryRecord
    versions: tuple[Version, ...] = ()
    events: tuple[Change, ...] = ()
    withheld: bool = False


def summary_is_only_theirs(summary: MemoryRecord, user_id: str) -> bool:
    """Whether every end user a summary folds is ``user_id`` (its text is then theirs alone)."""
    return set(summary.user_ids) <= {user_id}


def overlaps(record: MemoryRecord, since: datetime | None, until: datetime | None) -> bool:
    """Whether the record's span meets the window ``[since, until]`` (an open end: no bound)."""
    start, end = record.span
    if since is not None and (end < since or (record.period_end is not None and end == since)):
        return False  # a period ends before its end instant: one ending at ``since`` is before it
    return until is None or start <= until
