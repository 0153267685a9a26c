"""Accepting writes: validate, normalise into records, enqueue on the agent's working-memory group.

The API answers 202 as soon as the queue has the messages: one message per acceptance, and the
agent's pending marks around the send (`send_pending`; the feedback, history, pattern and
document use cases queue their work for the writer the same way, so a caller may wait for it:
``stats.pending_writes``). Embedding and storing happen in the writer (`writing.writer`), one
group (``tenant:agent:working``) at a time, which is what makes dedup-on-write safe.

Two things are decided here, at accept time, so a retry of the same body makes the same record:
an item without ``importance`` is scored from its words and kind (`writing.rules.importance`), and a
topic is mapped to the tenant's canonical term when the tenant has a topic dictionary
(`domain.topics`; unknown topics are then counted as proposals). The dictionary is read through
a per-tenant cache (`knowledge.topics.TopicCache`), and only when an item names a topic.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from agent_memory.errors import DependencyError
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
from agent_memory.ports import Clock, PendingWrites, QueueMessage, WriteQueue
from agent_memory.tenancy.settings import SettingsCache
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


def dedup_id(record_id: str) -> str:
    """One per acceptance, so the queue never drops a write it was given (SQS allows 128 characters).

    A deduplication id made from the content alone let the queue's five-minute window swallow
    a write that was accepted again after the first one was forgotten: answered 202, never
    stored; one made from the content and the time of acceptance did the same for two
    acceptances within one clock tick. A random nonce makes each acceptance its own message,
    while a transport retry of the same send (the same message) is still dropped by SQS. The
    writer, not the queue, makes repeats harmless: the same content has the same record id, and
    a live record is confirmed, not stored twice. Retries of one request that must come back
    with the first answer carry an ``Idempotency-Key``.
    """
    return hashlib.sha256(f"{record_id}\x00{uuid.uuid4().hex}".encode()).hexdigest()


def command_messages(commands: Sequence[WriteCommand]) -> list[QueueMessage]:
    """Each command as its own message on its record's group."""
    return [
        QueueMessage(group_id=c.group_id, dedup_id=dedup_id(c.record.id), body=c.model_dump_json())
        for c in commands
    ]


def send_pending(
    queue: WriteQueue,
    pending: PendingWrites,
    tenant_id: str,
    agent_id: str,
    ids: Sequence[str],
    messages: Sequence[QueueMessage],
) -> None:
    """Mark ``ids`` pending for the agent, send, then hold the marks; a send that fails takes
    the marks back.

    Pending first, so a fast writer can never mark done before the mark was made. The first mark
    is a short lease: a crash before the send (or before `PendingWrites.queued`) leaves marks that
    expire within it, where a mark made to last would count for days with nothing queued. Once
    sent, the marks hold until the writer clears them. Failing to hold them does not fail the
    accepted write: its marks count for the lease, and the writer clears them either way.
    """
    pending.add(tenant_id, agent_id, ids)
    try:
        queue.send(messages)
    except DependencyError:
        pending.discard(tenant_id, agent_id, ids)
        raise
    hold(pending, tenant_id, agent_id, ids)


def hold(pending: PendingWrites, tenant_id: str, agent_id: str, ids: Sequence[str]) -> None:
    """The messages of ``ids`` are queued: their marks hold past the lease. A failure here does
    not fail what was queued; its marks count for the lease only (logged)."""
    try:
        pending.queued(tenant_id, agent_id, ids)
    except DependencyError:
        logger.warning("pending marks not held past their lease", extra={"agent_id": agent_id})
