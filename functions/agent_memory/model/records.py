"""The memory record: what the service stores, independent of any API or storage shape."""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.limits import (
    MAX_CONTEXT_CHARS,
    MAX_LINKS,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_SUPERSEDES,
    MAX_TAGS,
    MAX_TOPIC_CHARS,
)
from agent_memory.model.types import AgentId, Score, Speaker, Tag, TenantId, UserId, UtcDatetime

Role = Literal["user", "assistant", "system", "tool"]


class MemoryKind(StrEnum):
    """What a memory is about. Retention (default TTLs) and importance scoring key off it."""

    CONVERSATION = "conversation"
    FACT = "fact"
    DECISION = "decision"
    TASK = "task"
    PREFERENCE = "preference"
    EVENT = "event"
    ERROR = "error"
    NOTE = "note"
    SUMMARY = "summary"
    #: Experiences (`experience.rules.confidence`): outcomes with a confidence, and patterns across them.
    SUCCESS = "success"
    FAILURE = "failure"
    INSIGHT = "insight"
    PATTERN = "pattern"
    #: What is known about one person (`derived.rules.profiles`), made from what they said.
    PROFILE = "profile"


#: The kinds of an experience: a memory with a confidence that feedback moves.
EXPERIENCE_KINDS: frozenset[MemoryKind] = frozenset(
    {MemoryKind.SUCCESS, MemoryKind.FAILURE, MemoryKind.INSIGHT, MemoryKind.PATTERN}
)
#: The kinds a pattern is recognised from (a pattern is never a member of another).
MEMBER_KINDS: tuple[MemoryKind, ...] = (MemoryKind.SUCCESS, MemoryKind.FAILURE, MemoryKind.INSIGHT)


class Source(BaseModel):
    """Where a memory came from, so an agent can cite or revisit it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    platform: str | None = Field(default=None, max_length=64)
    channel_id: str | None = Field(default=None, max_length=256)
    thread_id: str | None = Field(default=None, max_length=256)
    message_id: str | None = Field(default=None, max_length=256)
    url: str | None = Field(default=None, max_length=2048)


class Link(BaseModel):
    """A weighted edge from the memory to an entity (a person, a project, a ticket...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entity_type: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    entity_id: str = Field(min_length=1, max_length=256)
    weight: float = Field(default=1.0, ge=0.0, le=1.0)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels, without recursing into hostile depth."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def check_metadata(value: dict[str, Any]) -> dict[str, Any]:
    """Metadata is free-form JSON, bounded in size and depth so it cannot bloat the store."""
    if _deeper_than(value, MAX_METADATA_DEPTH):
        raise ValueError(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels")
    try:
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # NaN / Infinity are not JSON
        raise ValueError("metadata must be plain JSON (no NaN or Infinity)") from exc
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError:
        # A lone surrogate (a JSON "\\ud800" escape without its pair) is no character: measured
        # leniently it would pass here and then fail when the record is serialized (a 500).
        # The message names no key or value: error bodies never echo the input.
        raise ValueError(
            "metadata text must be valid Unicode: it holds a lone surrogate "
            "(a \\uD800-\\uDFFF escape without its pair)"
        ) from None
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is larger than {MAX_METADATA_BYTES} bytes when encoded as JSON")
    return value


def normalise_topic(raw: str | None) -> str | None:
    """Topics are matched case- and space-insensitively; the raw form is kept for display."""
    if raw is None:
        return None
    topic = " ".join(raw.split()).casefold()
    return topic or None


class MergedWrite(BaseModel):
    """A write that was merged into a record: kept whole, so a merge shows what it absorbed and
    can be undone by reading it back (its id stays an alias of the record)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    content: str
    occurred_at: UtcDatetime
    created_at: UtcDatetime


class RecordValidity(BaseModel):
    """A memory's supersession fields, changed together (`ports.RecordStore.set_validity`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None

    def as_fields(self) -> dict[str, Any]:
        """The `MemoryRecord` fields these are, for ``model_copy(update=...)``."""
        return {
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "supersedes": list(self.supersedes),
            "superseded_by": self.superseded_by,
        }


class MemoryRecord(BaseModel):
    """One memory: a working-memory item or a summary of a closed period.

    ``content`` is kept verbatim. ``period_start``/``period_end`` bound what a summary covers
    (half-open); a working-memory record has neither and lives at ``occurred_at``.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    tenant_id: TenantId
    agent_id: AgentId
    user_id: UserId | None = None
    grain: Grain = Grain.WORKING
    time_key: str | None = None
    period_start: UtcDatetime | None = None
    period_end: UtcDatetime | None = None
    kind: MemoryKind = MemoryKind.NOTE
    role: Role | None = None
    speaker: Speaker | None = None
    conversation_id: str | None = None
    content: str
    #: What was said just before this turn in its conversation (speaker-labelled), set by the
    #: writer: embedded and indexed with the turn, never shown as its content.
    context: str | None = Field(default=None, max_length=MAX_CONTEXT_CHARS)
    topic: str | None = Field(default=None, max_length=MAX_TOPIC_CHARS)
    topic_raw: str | None = Field(default=None, max_length=MAX_TOPIC_CHARS)
    importance: Score = 0.5
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    source: Source | None = None
    links: list[Link] = Field(default_factory=list, max_length=MAX_LINKS)
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: Ids of the records a summary was made from (empty for working memory).
    source_ids: list[str] = Field(default_factory=list)
    #: The writes merged into this one (dedup on write), oldest first; ``occurred_at`` stays the
    #: first occurrence and ``last_seen_at`` is the latest (None: never merged).
    merged_from: list[MergedWrite] = Field(default_factory=list)
    last_seen_at: UtcDatetime | None = None
    #: What an experience learned and how sure it is (`experience.rules.confidence`); None for other kinds.
    experience: Experience | None = None
    #: A summary's end users: everyone whose words it folds, however far down (empty for working
    #: memory, whose end user is ``user_id``). Erasing a user re-makes every summary naming them.
    user_ids: list[UserId] = Field(default_factory=list)
    #: Supersession (`supersession.rules.claims`, `supersession.marking`): when what this memory states
    #: began and stopped holding, the older memories whose value it replaced and the newer one that
    #: replaced its value. None / empty: nothing replaced it and it replaced nothing. Neither memory
    #: is deleted or merged: the old one is what was believed until ``valid_to``.
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    supersedes: list[str] = Field(default_factory=list, max_length=MAX_SUPERSEDES)
    superseded_by: str | None = None
    content_hash: str
    access_count: int = Field(default=0, ge=0)
    last_accessed_at: UtcDatetime | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    occurred_at: UtcDatetime
    expires_at: UtcDatetime | None = None
    deleted_at: UtcDatetime | None = None

    @field_validator("metadata")
    @classmethod
    def _metadata_bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(value)

    @property
    def span(self) -> tuple[datetime, datetime]:
        """The instants this record speaks about: its period, or the moment it occurred."""
        if self.period_start is not None and self.period_end is not None:
            return self.period_start, self.period_end
        return self.occurred_at, self.occurred_at

    @property
    def write_ids(self) -> frozenset[str]:
        """Every id this record was written under: its own and those of the writes merged into
        it. A summary, pattern or profile made while an absorbed write was a record of its own
        lists that id, so whatever looks for this record among sources looks for all of them."""
        return frozenset({self.id, *(m.id for m in self.merged_from)})

    @property
    def validity(self) -> RecordValidity:
        return RecordValidity(
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            supersedes=tuple(self.supersedes),
            superseded_by=self.superseded_by,
        )

    def superseded_at(self, at: datetime) -> bool:
        """Whether another memory's value had replaced this one's by ``at``."""
        return self.superseded_by is not None and self.valid_to is not None and self.valid_to <= at

    def is_live(self, now: datetime) -> bool:
        """Not forgotten and not expired: the only records search and get may return."""
        if self.deleted_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now


def display_text(record: MemoryRecord) -> str:
    """The date-prefixed text an LLM reads: ``[2026-11-20] Alice: ...`` or ``[2026-W47] ...``."""
    label = record.time_key or record.occurred_at.date().isoformat()
    speaker = f"{record.speaker}: " if record.speaker else ""
    return f"[{label}] {speaker}{record.content}"
