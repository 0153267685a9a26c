"""The history of one memory and the restore of a version (`governance.rules.versions`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from agent_memory.governance.rules.versions import Version
from agent_memory.model.records import MemoryRecord


class MemoryVersionOut(BaseModel):
    """What the memory said and whether it held, after one change."""

    version: int = Field(description="1 is the first write; each change makes the next.")
    at: datetime = Field(description="When the change happened.")
    change: str = Field(
        description="What changed it: written, merged, superseded, supersession_undone, feedback, "
        "restored, forget, erase, retention (and, for summaries, stale and remade)."
    )
    actor: str = Field(description="Who or what made the change: an API key's id, the writer, a job.")
    content: str | None = Field(
        description="What the memory said at this version; null once it was forgotten or erased "
        "(its text survives in no version)."
    )
    current: bool = Field(description="Whether what it stated still held at this version.")
    valid_from: datetime | None
    valid_to: datetime | None
    supersedes: list[str]
    superseded_by: str | None
    confidence: float | None = Field(default=None, description="An experience's confidence at this version.")
    detail: dict[str, Any] = Field(description="The change's audit detail (ids and fields, never text).")

    @classmethod
    def of(cls, version: Version) -> MemoryVersionOut:
        return cls(
            version=version.number,
            at=version.at,
            change=version.change,
            actor=version.actor,
            content=version.content,
            current=version.validity.superseded_by is None,
            confidence=version.confidence,
            detail=dict(version.detail),
            **version.validity.as_fields(),
        )


class MemoryHistoryResponse(BaseModel):
    id: str
    forgotten: bool = Field(description="The memory was forgotten or erased: no version holds its text.")
    versions: list[MemoryVersionOut] = Field(description="Oldest first; the last is the memory as it is.")

    @classmethod
    def of(cls, record: MemoryRecord, versions: list[Version]) -> MemoryHistoryResponse:
        return cls(
            id=record.id,
            forgotten=record.deleted_at is not None,
            versions=[MemoryVersionOut.of(v) for v in versions],
        )


class RestoreResponse(BaseModel):
    id: str
    restored: int = Field(description="The version brought back.")
    version: MemoryVersionOut = Field(description="The version the restore made (the memory's latest).")
    text_pending: bool = Field(
        description="The restored text is being stored by the writer (searchable within a second); "
        "whether it held is changed already."
    )
