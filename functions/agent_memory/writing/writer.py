"""Storing writes: the consumer side of the FIFO queue.

One writer at a time handles a ``tenant:agent:grain`` group, so the read-then-write of
dedup-on-write cannot race. Every step is idempotent: SQS delivers at least once, and a replayed
message finds its record already stored (ids are deterministic) and only confirms it.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

import numpy as np
from pydantic import ValidationError

from agent_memory.cascade.rules.periods import local_date, local_midnight
from agent_memory.derived.lifecycle import (
    hidden_since,
    remade_event,
    remake_job,
    trail_hides_since,
    version_outdated,
)
from agent_memory.errors import DependencyError
from agent_memory.experience.rules.confidence import Experience
from agent_memory.feed.rules.events import (
    ChangeEvent,
    memory_created,
    record_words,
    summary_made,
    updated,
)
from agent_memory.model.commands import DocumentCommand, FeedbackCommand, WriteCommand, parse_command
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    AuditQuery,
    Clock,
    DeadLetters,
    Embedder,
    JobQueue,
    NearestQuery,
    Neighbourhood,
    PendingWrites,
    QueueMessage,
    StoredRecord,
    UpdateJudge,
    Vector,
    WritableMemory,
)
from agent_memory.ports.change_feed import ChangeFeed, publish
from agent_memory.supersession.marking import MarkingService
from agent_memory.supersession.rules.claims import Relation, relate
from agent_memory.tenancy.models import TenantEmbedders, spaces_of
from agent_memory.tenancy.settings import SettingsCache
from agent_memory.writing.memo_embedder import Memos
from agent_memory.writing.rules.contextual import context_text, dedup_text
from agent_memory.writing.rules.dedup import DedupScope, may_merge, merge
from agent_memory.writing.write_vectors import Pending, RecordVectors, WriteVectors

#: How far back in a record's audit trail a redelivered write's merge is looked for.
REPLAY_WINDOW = 50
#: How often a write is decided again when the record it read changed before its put (a forget,
#: a stale mark or a delete landed in between); then it fails and the queue redelivers it.
PUT_TRIES = 5


class WriteOutcome(StrEnum):
    INSERTED = "inserted"
    MERGED = "merged"
    UPSERTED = "upserted"
    REPLAYED = "replayed"
    SUPERSEDED = "superseded"
    DEAD_LETTERED = "dead_lettered"


@dataclass(frozen=True, slots=True)
class Prepared:
    """A message parsed (or found to be poison) and, when the batch embedding worked, embedded
    (``made``: its vectors, or their future while a pipelined batch is still embedding them).
    A document of the tenant's knowledge (``document``) is stored by `KnowledgeWriter`, a
    feedback on an experience (``feedback``) counted by `experience.feedback.FeedbackApplier`."""

    command: WriteCommand | None
    made: Pending | None = None
    poison_reason: str | None = None
    document: DocumentCommand | None = None
    feedback: FeedbackCommand | None = None

    @property
    def vector(self) -> RecordVectors | None:
        """The write's vectors, waiting for them if its part of the batch is still embedding
        (None: the batch embedding failed for it, and `WriterService.apply` embeds it alone)."""
        return self.made.result() if isinstance(self.made, Future) else self.made

    @property
    def tenant_id(self) -> str | None:
        """Whose write or document this is (None: poison or feedback)."""
        if self.command is not None:
            return self.command.record.tenant_id
        return self.document.document.tenant_id if self.document is not None else None


class WriterService:
    def __init__(
        self,
        store: WritableMemory,
        embedder: Embedder,
        pending: PendingWrites,
        dead_letters: DeadLetters,
        clock: Clock,
        dedup_threshold: float = 0.92,
        context_turns: int = 2,
        *,
        dedup_scope: DedupScope = DedupScope.CONVERSATION,
        timezone: str = "UTC",
        settings: SettingsCache | None = None,
        embedders: TenantEmbedders | None = None,
        feed: ChangeFeed | None = None,
        jobs: JobQueue | None = None,
        judge: UpdateJudge | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        #: Where the re-make of a derived record hidden right after its put is queued
        #: (`_hide_if_source_forgotten`); without it the record stays hidden until its next job.
        self._jobs = jobs
        #: Each distinct text embedded once (`embedding_memo`): a batch's texts in one call.
        self._memos = Memos()
        #: A tenant may embed with its own model (`tenancy.rules.embedding_spaces`).
        self._embedders = embedders
        self._pending = pending
        self._dead_letters = dead_letters
        self._clock = clock
        self._threshold = dedup_threshold
        self._context_turns = context_turns
        self._scope = dedup_scope
        self._tz = timezone
        #: A tenant may turn near-duplicate merging off (`TenantSettings.merge_near_duplicates`).
        self._settings = settings
        #: Every memory stored, merged or superseded and every summary stored is a change event.
        self._feed = feed
        #: A write stating a new value for something marks the memory that stated the old one.
        #: With an update judge, one no pattern reads is judged against its nearest (`MarkingService`).
        self._supersession = MarkingService(store, feed=feed, embedder=self._memos.of(embedder), judge=judge)
        #: A batch's vectors: a large one embedded part after part while this thread stores.
        self._vectors = WriteVectors(embedder, embedders, self._memos)
        #: The bodies the next receive most likely holds (`expect`), embedded after this batch's.
        self._expected: Sequence[str] = ()

    def expect(self, bodies: Sequence[str]) -> None:
        """Say which messages the next receive most likely brings (the local queue's `peek`):
        the next `prepare` has their texts embedded after its own batch's, while its writes are
        stored (`WriteVectors.look_ahead`). A hint only: whatever the next receive brings is
        embedded and stored as without it."""
        self._expected = bodies

    def prepare(self, bodies: Sequence[str]) -> list[Prepared]:
        """Parse every body and embed the valid ones in as few model calls as the batch allows.

        A body that is not a valid command is poison: retrying cannot fix it, so it is marked
        for the dead-letter queue instead of failing (and blocking) its group. If the batch
        embedding fails, vectors are left out and `apply` embeds one record at a time, so one
        bad text cannot fail its neighbours.

        A large batch is embedded part after part while the writes already embedded are stored
        (`writing.write_vectors`); a small one (a Lambda's ten messages) here in one call. Then
        the texts of the messages `expect` named are embedded behind it.
        """
        try:
            return self._prepared(bodies)
        finally:
            expected, self._expected = self._expected, ()
            if expected:
                self._vectors.look_ahead(lambda: _records_of(expected))

    def _prepared(self, bodies: Sequence[str]) -> list[Prepared]:
        parsed = [_parsed(body) for body in bodies]
        commands = [p.command for p in parsed if p.command is not None]
        if not commands:
            return parsed
        try:
            commands = self._in_context(commands)
            vectors = self._vectors.of_batch([c.record for c in commands])
        except Exception:  # a batch-level failure; apply() retries per record and reports precisely
            logger.exception("batch embedding failed; falling back to one record at a time")
            return parsed
        it = iter(zip(commands, vectors, strict=True))
        return [Prepared(*next(it)) if p.command else p for p in parsed]

    def vectors(self, records: Sequence[MemoryRecord]) -> list[Vector]:
        """Each record's vector in the space its tenant's searches read."""
        return [v.search for v in self.embeddings(records)]

    def embeddings(self, records: Sequence[MemoryRecord]) -> list[RecordVectors]:
        """Each record's vectors in every space its tenant writes, in one call per model."""
        return self._vectors.embeddings(records)

    def _in_context(self, commands: Sequence[WriteCommand]) -> list[WriteCommand]:
        """Each new conversation turn with the turns before it (stored, or earlier in this batch)."""
        if self._context_turns <= 0:
            return list(commands)
        out: list[WriteCommand] = []
        for command in commands:
            record = command.record
            if command.op != "remember" or record.grain is not Grain.WORKING or not record.conversation_id:
                out.append(command)
                continue
            key = (record.tenant_id, record.agent_id, record.conversation_id)
            stored = self._store.conversation_tail(*key, record.occurred_at, self._context_turns)
            earlier = [
                c.record
                for c in out
                if (c.record.tenant_id, c.record.agent_id, c.record.conversation_id) == key
                and c.record.occurred_at < record.occurred_at
            ]
            previous = {r.id: r for r in [*stored, *earlier]}.values()
            tail = sorted(previous, key=lambda r: (r.occurred_at, r.id))[-self._context_turns :]
            context = context_text(record, tail)
            out.append(command.model_copy(update={"record": record.model_copy(update={"context": context})}))
        return out

    def dead_letter(self, message: QueueMessage, reason: str) -> WriteOutcome:
        self._dead_letters.put(message, reason)
        metrics.add_metric(name="PoisonMessages", unit=MetricUnit.Count, value=1)
        logger.error("poison message dead-lettered", extra={"group_id": message.group_id, "reason": reason})
        return WriteOutcome.DEAD_LETTERED

    def apply(self, command: WriteCommand, vector: RecordVectors | None = None) -> WriteOutcome:
        """Store one write: embed it (unless its batch did), decide and put it (a new memory's
        steps are `_remember`'s, a summary's `_upsert`), then clear its pending mark."""
        command, vector = self._embed(command, vector)
        record = command.record
        outcome = self._decided(record, vector, upsert=command.op == "upsert")
        self._pending.done(record.tenant_id, record.agent_id, [record.id])
        return outcome

    def _embed(
        self, command: WriteCommand, vector: RecordVectors | None
    ) -> tuple[WriteCommand, RecordVectors]:
        """The write's vectors: its batch's, else its own with the turns before it, else (when the
        model refuses those) its own on its words alone."""
        if vector is not None:
            return command, vector
        if command.record.context is None:
            [command] = self._in_context([command])
        try:
            [vector] = self.embeddings([command.record])
        except Exception:
            if command.record.context is None:
                raise
            # An earlier turn the model refuses must not take the turns after it down with it:
            # embed this one on its own words (a failure now is its own, and it is raised).
            logger.warning("embedding with context failed; embedding the turn alone")
            alone = command.record.model_copy(update={"context": None})
            command = command.model_copy(update={"record": alone})
            [vector] = self.embeddings([command.record])
        return command, vector

    def _decided(self, record: MemoryRecord, vector: RecordVectors, *, upsert: bool) -> WriteOutcome:
        """Decide what the write does from what the store holds, and put it only if that is
        still what it holds (`RecordStore.put_if`); when something changed in between, decide
        again on what it is now (a forget that won is then seen, and the write gives way)."""
        for _ in range(PUT_TRIES):
            outcome = self._upsert(record, vector) if upsert else self._remember(record, vector)
            if outcome is not None:
                return outcome
            metrics.add_metric(name="WritePutsRefused", unit=MetricUnit.Count, value=1)
            logger.info(
                "the record changed before the write's put; deciding again", extra={"record_id": record.id}
            )
        raise DependencyError(f"record {record.id} kept changing under its write ({PUT_TRIES} tries)")

    def _same_content(self, existing: MemoryRecord, new: MemoryRecord) -> bool:
        """Whether two memories say the same thing, by what they say alone.

        Stored vectors carry a record's setting (speaker, day, the turns before it), so two turns
        of one exchange can sit close without repeating each other; a merge needs their own
        words (and topic) to be near duplicates. Only asked of a candidate already past the
        threshold, so it costs one small embedding call on likely duplicates only.
        """
        if existing.content_hash == new.content_hash and existing.topic_raw == new.topic_raw:
            return True
        memo = self._memos.of(spaces_of(self._embedders, self._embedder, new.tenant_id).search.embedder)
        a, b = memo.embed([dedup_text(existing), dedup_text(new)])
        a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
        cosine = float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))
        return cosine > self._threshold

    def _merges(self, tenant_id: str) -> bool:
        """Whether the tenant's near-identical writes are merged (the default)."""
        return self._settings is None or self._settings.settings(tenant_id).merge_near_duplicates

    def _upsert(self, record: MemoryRecord, vector: RecordVectors) -> WriteOutcome | None:
        """Store a summary (or pattern) version, unless it was forgotten or marked stale after
        it was made (None: it was, between the read and the put; `_decided` decides again).

        A re-make reads its children, then its write waits in the queue; a forget in between
        marks the stored summary stale again (or forgets it), so the stale mark the version names
        (`staleness.REMAKES`) is no longer the stored one. Storing that version would bring the
        forgotten fact back, so it is dropped: the forget queued a re-make of its own, and the
        summary stays stale for it. A version stored over a stale summary is audited ``remade``
        with the put, where it becomes visible. A pattern re-made keeps the feedback counted on
        the stored version (counted here too, in this group's order, so none is lost).
        """
        stored = self._store.get(record.tenant_id, record.agent_id, record.id)
        if version_outdated(stored, record):
            metrics.add_metric(name="UpsertsSuperseded", unit=MetricUnit.Count, value=1)
            logger.info("summary version superseded by a later forget", extra={"record_id": record.id})
            return WriteOutcome.SUPERSEDED
        if stored is not None and stored.experience is not None and record.experience is not None:
            counts = stored.experience.model_dump(include={"confirmations", "refutations", "applications"})
            experience = Experience.model_validate({**record.experience.model_dump(), **counts})
            record = record.model_copy(update={"experience": experience})
        remade = remade_event(stored, record) if stored is not None else None
        if not self._put(record, vector, stored, [remade] if remade is not None else []):
            return None
        if remade is not None:
            metrics.add_metric(name="StaleSummariesRemade", unit=MetricUnit.Count, value=1)
        if self._hide_if_source_forgotten(record):
            return WriteOutcome.SUPERSEDED
        if record.grain is not Grain.WORKING:
            self._publish(summary_made(record, str(record.metadata.get("input_hash", ""))))
        return WriteOutcome.UPSERTED

    def _hide_if_source_forgotten(self, record: MemoryRecord) -> bool:
        """Mark a just-stored summary, pattern or profile stale when one of its sources was
        hidden since it was made (True: it was, and its re-make is queued).

        A forget marks only what is stored from the memory when it runs; a version made before
        (a queued refresh, a re-make that read the memory before its delete) is stored after it,
        over a summary the forget had no reason to mark. Checked after the put, so a forget is
        either seen here or finds the version stored (and marks it itself). A memory source
        hidden at all was forgotten; a summary source counts when hidden at or after the version
        was made (one marked stale earlier is re-made on its own, and this version healed it).
        The mark is dated no earlier than the version, so `staleness.is_stale` reads it as the
        newest hiding event and the cascade re-makes the record without the forgotten words.
        """
        tenant, agent = record.tenant_id, record.agent_id
        gone = next(
            (
                sid
                for sid in dict.fromkeys(record.source_ids)
                if self._source_forgotten_since(tenant, agent, sid, record.updated_at)
            ),
            None,
        )
        if gone is None:
            return False
        stored = self._store.get(tenant, agent, record.id)
        if stored is None or stored.deleted_at is not None or stored.updated_at != record.updated_at:
            return True  # hidden (or replaced) since the put: whoever did it decides its fate
        at = max(self._clock.now(), record.updated_at)
        event = AuditEvent(tenant, agent, record.id, AuditAction.STALE, "writer", at, {"because": gone})
        if self._store.mark_stale(tenant, agent, record.id, event):
            job = remake_job(record)
            if self._jobs is not None and job is not None:
                self._jobs.send([job])
        metrics.add_metric(name="UpsertsHiddenForForgottenSource", unit=MetricUnit.Count, value=1)
        logger.info(
            "derived record made from a forgotten memory; marked stale", extra={"record_id": record.id}
        )
        return True

    def _source_forgotten_since(self, tenant: str, agent: str, source_id: str, made: datetime) -> bool:
        """Whether a version made at ``made`` from the source ``source_id`` may hold words since
        forgotten: a hidden memory; a summary hidden at or after ``made``, or re-made since after
        such a mark (days and weeks are stored in different message groups, so a day's re-make
        can be stored before an older week version that read the day before the forget); a
        source no longer stored whose trail shows it hidden at or after ``made`` (a day emptied
        by forgets is deleted by its re-make). One deleted without being hidden (retention)
        does not count: its words were not forgotten, and a re-make would lose them."""
        source = self._store.get(tenant, agent, source_id)
        if source is None:
            return trail_hides_since(self._store, tenant, agent, source_id, made)
        if source.kind is not MemoryKind.SUMMARY:
            return source.deleted_at is not None
        if source.deleted_at is not None:
            return source.deleted_at >= made
        return source.updated_at > made and hidden_since(self._store, source, made)

    def _remember(self, record: MemoryRecord, vector: RecordVectors) -> WriteOutcome | None:
        """Store a new memory, one step after another: the replay check, dedup (merged into its
        near duplicate), supersede, put, publish (None: what it was decided on changed before the
        put; `_decided` decides again)."""
        now = self._clock.now()
        already = self._store.get(record.tenant_id, record.agent_id, record.id)
        replayed = self._replay_check(record, already)
        if replayed is not None:
            return replayed
        duplicate = self._dedup(record, vector, already, now)
        if duplicate is not None:
            return self._merge_into(*duplicate, record, vector, now)
        record = self._supersede(record, vector, now)
        # A write accepted again after it was forgotten comes back as its own record: merged into
        # a neighbour, its id would be an alias that the tombstone under the same id shadows.
        own = already if already is not None and already.id == record.id else None
        if not self._put(record, vector, own):
            return None
        self._publish(memory_created(record))
        metrics.add_metric(name="WritesStored", unit=MetricUnit.Count, value=1)
        return WriteOutcome.INSERTED

    def _replay_check(self, record: MemoryRecord, already: MemoryRecord | None) -> WriteOutcome | None:
        """What a redelivered write comes to (None: it is not one, or its merge never stored).

        A live record that holds the write is a replay; one reached by an alias that does not hold
        it is a merge that never stored (its put was refused, or a crash came between the alias
        and the put), decided again."""
        if already is not None and already.deleted_at is None and record.id in already.write_ids:
            metrics.add_metric(name="WritesReplayed", unit=MetricUnit.Count, value=1)
            self._announce_again(already, record.id)
            return WriteOutcome.REPLAYED
        if already is not None and already.deleted_at is not None and already.deleted_at >= record.created_at:
            # A redelivery (or a redrive) of a write that was forgotten after it was accepted:
            # storing it again would bring the forgotten memory back.
            metrics.add_metric(name="WritesSuperseded", unit=MetricUnit.Count, value=1)
            logger.info("write superseded by a later forget", extra={"record_id": record.id})
            return WriteOutcome.SUPERSEDED
        return None

    def _dedup(
        self, record: MemoryRecord, vector: RecordVectors, already: MemoryRecord | None, now: datetime
    ) -> tuple[MemoryRecord, float] | None:
        """The near duplicate the write merges into, with their cosine (None: it is stored on its
        own). Never for a write accepted again after it was forgotten, nor for a tenant that turned
        merging off; only one the merge rule allows (`writing.rules.dedup.may_merge`) that is not
        a new value for what it stated, and says the same by its own words."""
        if (already is not None and already.deleted_at is not None) or not self._merges(record.tenant_id):
            return None
        query = NearestQuery(
            record.tenant_id,
            record.agent_id,
            record.grain,
            vector.search,
            now,
            within=self._neighbourhood(record),
            space=vector.search_space,
        )
        near = self._store.nearest(query)
        if (
            near is not None
            and near[1] > self._threshold
            and near[0].id != record.id
            and may_merge(near[0], record, self._scope, self._tz)
            # a new value for what the near one stated supersedes it: both are kept
            and relate(record.content, near[0].content).relation is not Relation.UPDATE
            and self._same_content(near[0], record)
        ):
            return near
        return None

    def _merge_into(
        self,
        existing: MemoryRecord,
        cosine: float,
        record: MemoryRecord,
        vector: RecordVectors,
        now: datetime,
    ) -> WriteOutcome | None:
        """Merge the write into ``existing`` (`writing.rules.dedup.merge`), put and publish it
        (None: it was forgotten or changed since it was found; `_decided` decides again)."""
        tenant, agent = record.tenant_id, record.agent_id
        merged = merge(existing, record, now)
        # Alias first: a redelivery after a crash in between finds the write by its alias
        # (a replay) instead of merging it a second time.
        self._store.add_alias(tenant, agent, record.id, existing.id)
        event = AuditEvent(
            tenant_id=tenant,
            agent_id=agent,
            record_id=existing.id,
            action=AuditAction.MERGED,
            actor="writer",
            at=now,
            detail={"absorbed": record.id, "cosine": round(cosine, 4)},
        )
        if not self._put(merged, vector, existing, [event]):
            return None
        self._publish(updated(event, record_words(merged)))
        metrics.add_metric(name="WritesDeduplicated", unit=MetricUnit.Count, value=1)
        logger.info(
            "write merged into a near duplicate",
            extra={"record_id": record.id, "into": existing.id, "cosine": round(cosine, 4)},
        )
        return WriteOutcome.MERGED

    def _supersede(self, record: MemoryRecord, vector: RecordVectors, now: datetime) -> MemoryRecord:
        """Mark what the write supersedes, before it is stored (`supersession.marking`); the write
        with its own supersession fields set."""
        return self._supersession.on_write(record, vector.search, vector.search_space, now)

    def _put(
        self,
        record: MemoryRecord,
        vector: RecordVectors,
        read: MemoryRecord | None,
        events: Sequence[AuditEvent] = (),
    ) -> bool:
        """Store ``record`` with its vectors and ``events`` only if what is stored under its id is
        still ``read`` (`RecordStore.put_if`); False, nothing written, when it changed."""
        return self._store.put_if(StoredRecord(record, vector.default, vector.spaces), read, events)

    def _publish(self, *events: ChangeEvent) -> None:
        """Hand the change's events to the change feed (`ports.change_feed.publish`: never raises)."""
        publish(self._feed, list(events))

    def _announce_again(self, stored: MemoryRecord, written_as: str) -> None:
        """A redelivered write finds its record stored: its event is published again under the
        same id (the first publish may be what a crash interrupted); receivers drop the repeat."""
        if self._feed is None:
            return
        if stored.id == written_as:
            self._publish(memory_created(stored))
            return
        # merged into ``stored`` under an alias: the merge's event, as its audit event made it
        page = self._store.audit_events(
            AuditQuery(stored.tenant_id, stored.agent_id, record_id=stored.id, limit=REPLAY_WINDOW)
        )
        for event in page.events:
            if event.action == AuditAction.MERGED and event.detail.get("absorbed") == written_as:
                self._publish(updated(event, record_words(stored)))
                return

    def _neighbourhood(self, record: MemoryRecord) -> Neighbourhood:
        """Where a write's near duplicate may be: its owner (by the dedup scope) and its local day."""
        day = local_date(record.occurred_at, self._tz)
        try:
            until: datetime | None = local_midnight(day + timedelta(days=1), self._tz)
        except OverflowError:  # the last representable day has no next midnight
            until = None
        return Neighbourhood(
            user_id=record.user_id,
            conversation_id=record.conversation_id,
            match_user=self._scope is not DedupScope.AGENT,
            match_conversation=self._scope is DedupScope.CONVERSATION,
            since=local_midnight(day, self._tz),
            until=until,
        )


def _parsed(body: str) -> Prepared:
    """One message as the writer reads it: a write, a document, feedback, or poison and why."""
    try:
        command = parse_command(body)
    except ValidationError as exc:
        return Prepared(command=None, poison_reason=_poison_reason(exc))
    if isinstance(command, DocumentCommand):
        return Prepared(command=None, document=command)
    if isinstance(command, FeedbackCommand):
        return Prepared(command=None, feedback=command)
    return Prepared(command=command)


def _records_of(bodies: Sequence[str]) -> list[MemoryRecord]:
    """The records of the write commands among ``bodies`` (the rest left out)."""
    return [p.command.record for p in map(_parsed, bodies) if p.command is not None]


#: A dead letter's reason is one line for a person; the field names it quotes come from the body.
MAX_REASON_CHARS = 1_000
_MAX_FIELD_CHARS = 40


def _poison_reason(exc: ValidationError) -> str:
    """What is wrong with a body, readable and bounded whatever the body held.

    The parser's locations echo the body's own keys, which may be huge or hold control
    characters (a queue refuses those in a message attribute; a terminal obeys them).
    """

    def field(part: object) -> str:
        text = "".join(
            c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(part)
        )
        return text if len(text) <= _MAX_FIELD_CHARS else text[: _MAX_FIELD_CHARS - 1] + "…"

    reason = f"invalid write command: {exc.error_count()} error(s): " + "; ".join(
        f"{'.'.join(field(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
    )
    return reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 1] + "…"
