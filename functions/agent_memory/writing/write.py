"""Accepting writes: validate, normalise into records, enqueue on the agent's working-memory group.

The API answers 202 as soon as the queue has the messages. Embedding and storing happen in the
writer, one group (``tenant:agent:working``) at a time, which is what makes dedup-on-write safe.

Two things are decided here, at accept time, so a retry of the same body makes the same record:
an item without ``importance`` is scored from its words and kind (`writing.rules.importance`), and a
topic is mapped to the tenant's canonical term when the tenant has a topic dictionary
(`domain.topics`; unknown topics are then counted as proposals). The dictionary is read through
a per-tenant cache (`knowledge.topics.TopicCache`), and only when an item names a topic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from agent_memory.experience.rules.confidence import Experience
from agent_memory.knowledge.rules.topic_dictionary import TopicDictionary
from agent_memory.knowledge.topics import TopicCache
from agent_memory.model.caller import Caller
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import Grain
from agent_memory.model.ids import content_hash, memory_id
from agent_memory.model.queries import NewMemory
from agent_memory.model.records import EXPERIENCE_KINDS, MemoryKind, MemoryRecord, normalise_topic
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Clock, PendingWrites, WriteQueue
from agent_memory.tenancy.settings import SettingsCache
from agent_memory.writing.enqueue import command_messages, send_pending
from agent_memory.writing.rules.importance import score_importance

#: A kind's default lifetime in days when a write names no ``ttl_days`` (None: no expiry).
DefaultTtl = Callable[[MemoryKind], int | None]


class WriteService:
    """``default_ttl_days`` gives a lifetime to writes that name none, by kind (routine
    conversation fades in a week, a decision lasts a quarter); without it, and for kinds it
    maps to None, a write never expires and only retention removes it. ``topics`` gives
    topics their tenant's canonical terms; without it a topic is only normalised."""

    def __init__(
        self,
        queue: WriteQueue,
        pending: PendingWrites,
        clock: Clock,
        default_ttl_days: DefaultTtl | None = None,
        topics: TopicCache | None = None,
        settings: SettingsCache | None = None,
    ) -> None:
        self._queue = queue
        self._pending = pending
        self._clock = clock
        self._default_ttl_days = default_ttl_days
        self._topics = topics
        #: A tenant's own TTLs by kind (`TenantSettings.ttl_days`) come before the defaults.
        self._settings = settings

    def accept(self, caller: Caller, agent_id: str, items: Sequence[NewMemory]) -> list[str]:
        """Queue ``items`` on the agent's working-memory group; their record ids, in order."""
        now = self._clock.now()
        dictionary = self._dictionary(caller.tenant_id, items)
        ttls = self._settings.settings(caller.tenant_id).ttl_days if self._settings is not None else {}
        records = [self._to_record(caller.tenant_id, agent_id, item, now, dictionary, ttls) for item in items]
        messages = command_messages([WriteCommand(op="remember", record=r) for r in records])
        ids = [r.id for r in records]
        send_pending(self._queue, self._pending, caller.tenant_id, agent_id, ids, messages)
        if dictionary and self._topics is not None:  # a dictionary at all: then unknown is news
            unknown = [r.topic for r in records if r.topic and dictionary.canonical(r.topic) is None]
            self._topics.propose(caller.tenant_id, unknown, self._clock)
        metrics.add_metric(name="WritesAccepted", unit=MetricUnit.Count, value=len(records))
        logger.info("writes accepted", extra={"agent_id": agent_id, "count": len(records)})
        return ids

    def _dictionary(self, tenant_id: str, items: Sequence[NewMemory]) -> TopicDictionary | None:
        """The tenant's dictionary, read only when some item names a topic."""
        if self._topics is None or not any(item.topic for item in items):
            return None
        return self._topics.dictionary(tenant_id)

    def _to_record(
        self,
        tenant_id: str,
        agent_id: str,
        item: NewMemory,
        now: datetime,
        dictionary: TopicDictionary | None,
        ttls: Mapping[MemoryKind, int | None],
    ) -> MemoryRecord:
        occurred = item.occurred_at or now
        default_kind = MemoryKind.CONVERSATION if item.role else MemoryKind.NOTE
        kind = item.kind or default_kind
        parts = [
            tenant_id,
            agent_id,
            item.user_id or "",
            item.conversation_id or "",
            item.role or "",
            occurred.isoformat(),
            item.content,
        ]
        if kind in EXPERIENCE_KINDS and item.experience is not None:
            # Two outcomes of one finding (another run, another result) are two pieces of
            # evidence, not a retry of one write: they must not share an id.
            e = item.experience
            parts += [kind.value, e.run_id or "", e.outcome or "", e.context or ""]
        said = _said(item, kind if kind is not default_kind else None)
        if said:
            # A resend of the same words that says something else about them (kind, tags,
            # metadata, importance...) is another write, not a retry of the first: under the
            # first one's id the writer would take it for a replay and store nothing of it.
            parts.append(said)
        record_id = memory_id(*parts)
        ttl_days = item.ttl_days
        if ttl_days is None and kind in ttls:
            ttl_days = ttls[kind]
        elif ttl_days is None and self._default_ttl_days is not None:
            ttl_days = self._default_ttl_days(kind)
        return MemoryRecord(
            id=record_id,
            tenant_id=tenant_id,
            agent_id=agent_id,
            user_id=item.user_id,
            grain=Grain.WORKING,
            kind=kind,
            role=item.role,
            speaker=item.speaker,
            conversation_id=item.conversation_id,
            content=item.content,
            topic=dictionary.resolve(item.topic)[0] if dictionary else normalise_topic(item.topic),
            topic_raw=item.topic,
            importance=score_importance(item.content, kind) if item.importance is None else item.importance,
            tags=list(dict.fromkeys(item.tags)),
            source=item.source,
            links=list(item.links),
            metadata=dict(item.metadata),
            experience=(item.experience or Experience()) if kind in EXPERIENCE_KINDS else None,
            content_hash=content_hash(item.content),
            created_at=now,
            updated_at=now,
            occurred_at=occurred,
            expires_at=now + timedelta(days=ttl_days) if ttl_days else None,
        )


def _said(item: NewMemory, kind: MemoryKind | None) -> str:
    """What a write says about its words beyond who said them and when, in one canonical form
    (empty when it says nothing more, so a plain write keeps the id it always had). ``kind``:
    the kind it named, None for the default of its role."""
    given = {
        "kind": kind.value if kind is not None else None,
        "tags": list(dict.fromkeys(item.tags)) or None,
        "metadata": dict(item.metadata) or None,
        "importance": item.importance,
        "topic": item.topic,
        "speaker": item.speaker,
        "ttl_days": item.ttl_days,
        "source": item.source.model_dump(mode="json") if item.source is not None else None,
        "links": [link.model_dump(mode="json") for link in item.links] or None,
    }
    present = {name: value for name, value in given.items() if value is not None}
    return json.dumps(present, sort_keys=True, ensure_ascii=False, default=str) if present else ""
