"""Models of the HTTP contract (v1) for exports, and the export file's format (JSON Lines).

The file is one JSON object per line: a header (``"type": "export"``), one line per memory and
per summary, each with its versions and its audit events, and a trailer (``"type": "end"``) with
the counts, so a reader knows the file is whole. A memory is shown as every route shows one
(`MemoryOut`), with who said it; its versions as the history route shows them.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.contract.v1 import AuditEventOut, MemoryOut
from agent_memory.contract.v1_history import MemoryVersionOut
from agent_memory.governance.rules.export_jobs import ExportItem, ExportScope, ExportState
from agent_memory.model.grains import Grain
from agent_memory.model.types import AgentId, UserId, UtcDatetime

#: The version of the file's format (the header's ``format``).
FORMAT = 1


class ExportRequest(BaseModel):
    """What to export: one end user's memory (every agent of the tenant) or one agent's."""

    model_config = _STRICT

    user_id: UserId | None = Field(
        default=None, description="The end user whose memory to export, in every agent of the tenant."
    )
    agent_id: AgentId | None = Field(default=None, description="The agent whose memory to export.")
    since: UtcDatetime | None = Field(
        default=None,
        description="Only what speaks about this instant or later (a memory's time, a summary's period).",
    )
    until: UtcDatetime | None = Field(
        default=None, description="Only what speaks about this instant or earlier."
    )

    @model_validator(mode="after")
    def _one_subject(self) -> ExportRequest:
        if (self.user_id is None) == (self.agent_id is None):
            raise ValueError("name exactly one of user_id and agent_id")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    def to_scope(self) -> ExportScope:
        return ExportScope(user_id=self.user_id, agent_id=self.agent_id, since=self.since, until=self.until)


class ExportProgressOut(BaseModel):
    memories: int = Field(description="Memories written so far.")
    summaries: int = Field(
        description="Summaries written so far (an end user's: those holding only their words)."
    )
    withheld_summaries: int = Field(
        description="Summaries that hold the end user's words beside another end user's: named, not shown."
    )
    audit_events: int
    bytes: int = Field(description="Size of the file so far (when done: its size).")
    estimated_total: int | None = Field(description="Memories counted when the export began (an estimate).")
    percent: float | None = Field(description="memories / estimated_total, as a percentage (100 when done).")


class ExportOut(BaseModel):
    """An export job: what it holds, how far it is, and where to fetch it when done."""

    id: str
    status: Literal["queued", "running", "done", "failed"]
    user_id: str | None
    agent_id: str | None
    since: datetime | None
    until: datetime | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    progress: ExportProgressOut
    download_url: str | None = Field(
        default=None,
        description="When done: a pre-signed URL valid until download_expires_at (fetch it without the "
        "API key), or this API's own /v1/admin/exports/{id}/download (with the key).",
    )
    download_expires_at: datetime | None = None
    error: str | None = None

    @classmethod
    def of(cls, state: ExportState, url: str | None = None, expires_at: datetime | None = None) -> ExportOut:
        p = state.progress
        percent = 100.0 if state.status == "done" else None
        if percent is None and p.estimated_total:
            percent = round(min(100.0, 100.0 * p.memories / p.estimated_total), 1)
        elif percent is None and p.estimated_total == 0:
            percent = 0.0
        return cls(
            id=state.id,
            status=state.status,
            created_at=state.created_at,
            updated_at=state.updated_at,
            finished_at=state.finished_at,
            progress=ExportProgressOut(**p.model_dump(), percent=percent),
            download_url=url,
            download_expires_at=expires_at,
            error=state.error,
            **state.scope.model_dump(),
        )


class ExportsResponse(BaseModel):
    items: list[ExportOut] = Field(description="The tenant's exports, newest first.")


# --- the file ----------------------------------------------------------------------------------


class ExportedMemory(MemoryOut):
    """A memory as every route shows it, with who said it."""

    speaker: str | None = None


class WithheldSummary(BaseModel):
    """A summary that holds the end user's words beside another end user's: which one, not what."""

    id: str
    agent_id: str
    grain: Grain
    time_key: str | None
    period_start: datetime | None
    period_end: datetime | None


class MemoryLine(BaseModel):
    type: Literal["memory", "summary"]
    memory: ExportedMemory
    versions: list[MemoryVersionOut]
    audit: list[AuditEventOut]


class WithheldLine(BaseModel):
    type: Literal["summary"] = "summary"
    withheld: Literal[True] = True
    reason: str = "it also holds the words of other end users"
    summary: WithheldSummary


class JsonLinesExport:
    """`agent_memory.ports.export_store.ExportLines` as JSON Lines (UTF-8, one object a line)."""

    def header(self, state: ExportState) -> bytes:
        scope = state.scope
        return _line(
            {
                "type": "export",
                "format": FORMAT,
                "id": state.id,
                "user_id": scope.user_id,
                "agent_id": scope.agent_id,
                "since": _iso(scope.since),
                "until": _iso(scope.until),
                "created_at": _iso(state.created_at),
            }
        )

    def item(self, item: ExportItem) -> bytes:
        record = item.record
        if item.withheld:
            summary = WithheldSummary.model_validate(record, from_attributes=True)
            return (WithheldLine(summary=summary).model_dump_json() + "\n").encode("utf-8")
        memory = ExportedMemory.of(record).model_copy(update={"speaker": record.speaker})
        line = MemoryLine(
            type=item.kind,
            memory=memory,  # type: ignore[arg-type]
            versions=[MemoryVersionOut.of(v) for v in item.versions],
            audit=[
                AuditEventOut(
                    record_id=record.id, action=c.action, actor=c.actor, at=c.at, detail=dict(c.detail)
                )
                for c in item.events
            ],
        )
        return (line.model_dump_json() + "\n").encode("utf-8")

    def trailer(self, state: ExportState) -> bytes:
        p = state.progress
        return _line(
            {
                "type": "end",
                "memories": p.memories,
                "summaries": p.summaries,
                "withheld_summaries": p.withheld_summaries,
                "audit_events": p.audit_events,
            }
        )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _line(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
