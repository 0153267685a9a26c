"""Storing writes: the consumer side of the FIFO queue.

One writer at a time handles a ``tenant:agent:grain`` group, so the read-then-write of
dedup-on-write cannot race. Every step is idempotent: SQS delivers at least once, and a replayed
message finds its record already stored (ids are deterministic) and only confirms it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import ValidationError

from agent_memory.domain.commands import WriteCommand
from agent_memory.domain.limits import MAX_TAGS
from agent_memory.domain.records import MemoryRecord, check_metadata
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    Clock,
    DeadLetters,
    Embedder,
    MemoryStore,
    PendingWrites,
    QueueMessage,
    StoredRecord,
    Vector,
)


class Outcome(StrEnum):
    INSERTED = "inserted"
    MERGED = "merged"
    UPSERTED = "upserted"
    REPLAYED = "replayed"
    SUPERSEDED = "superseded"
    DEAD_LETTERED = "dead_lettered"


@dataclass(frozen=True, slots=True)
class Prepared:
    """A message parsed (or found to be poison) and, when the batch embedding worked, embedded."""

    command: WriteCommand | None
    vector: Vector | None = None
    poison_reason: str | None = None


def embedding_text(record: MemoryRecord) -> str:
    """What the vector is computed from: the topic gives a short memory its subject."""
    if record.topic_raw and record.topic_raw.casefold() not in record.content.casefold():
        return f"{record.topic_raw}: {record.content}"
    return record.content


class WriterService:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        pending: PendingWrites,
        dead_letters: DeadLetters,
        clock: Clock,
        dedup_threshold: float = 0.92,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._pending = pending
        self._dead_letters = dead_letters
        self._clock = clock
        self._threshold = dedup_threshold

    def prepare(self, bodies: Sequence[str]) -> list[Prepared]:
        """Parse every body and embed the valid ones in one batch.

        A body that is not a valid command is poison: retrying cannot fix it, so it is marked
        for the dead-letter queue instead of failing (and blocking) its group. If the batch
        embedding fails, vectors are left out and `apply` embeds one record at a time, so one
        bad text cannot fail its neighbours.
        """
        parsed: list[Prepared] = []
        for body in bodies:
            try:
                parsed.append(Prepared(command=WriteCommand.model_validate_json(body)))
            except ValidationError as exc:
                parsed.append(Prepared(command=None, poison_reason=_poison_reason(exc)))
        valid = [p for p in parsed if p.command is not None]
        if not valid:
            return parsed
        try:
            vectors = self._embedder.embed([embedding_text(p.command.record) for p in valid])  # type: ignore[union-attr]
        except Exception:  # a batch-level failure; apply() retries per record and reports precisely
            logger.exception("batch embedding failed; falling back to one record at a time")
            return parsed
        it = iter(vectors)
        return [Prepared(command=p.command, vector=next(it)) if p.command else p for p in parsed]

    def dead_letter(self, message: QueueMessage, reason: str) -> Outcome:
        self._dead_letters.put(message, reason)
        metrics.add_metric(name="PoisonMessages", unit=MetricUnit.Count, value=1)
        logger.error("poison message dead-lettered", extra={"group_id": message.group_id, "reason": reason})
        return Outcome.DEAD_LETTERED

    def apply(self, command: WriteCommand, vector: Vector | None = None) -> Outcome:
        record = command.record
        tenant, agent = record.tenant_id, record.agent_id
        if vector is None:
            vector = self._embedder.embed([embedding_text(record)])[0]
        outcome = self._upsert(record, vector) if command.op == "upsert" else self._remember(record, vector)
        self._pending.done(tenant, agent, [record.id])
        return outcome

    def _upsert(self, record: MemoryRecord, vector: Vector) -> Outcome:
        """Store a summary version, unless it was forgotten or marked stale after it was made.

        A re-make reads its children, then its write waits in the queue; a forget in between
        marks the stored summary stale (or forgets it) at a later instant than the version was
        made. Storing that version would bring the forgotten fact back, so it is dropped: the
        forget queued a re-make of its own.
        """
        stored = self._store.get(record.tenant_id, record.agent_id, record.id)
        if stored is not None and stored.deleted_at is not None and stored.deleted_at > record.updated_at:
            metrics.add_metric(name="UpsertsSuperseded", unit=MetricUnit.Count, value=1)
            logger.info("summary version superseded by a later forget", extra={"record_id": record.id})
            return Outcome.SUPERSEDED
        self._store.put([StoredRecord(record, vector)])
        return Outcome.UPSERTED

    def _remember(self, record: MemoryRecord, vector: Vector) -> Outcome:
        tenant, agent = record.tenant_id, record.agent_id
        now = self._clock.now()
        already = self._store.get(tenant, agent, record.id)
        if already is not None and already.deleted_at is None:
            metrics.add_metric(name="WritesReplayed", unit=MetricUnit.Count, value=1)
            return Outcome.REPLAYED
        if already is not None and already.deleted_at is not None and already.deleted_at >= record.created_at:
            # A redelivery (or a redrive) of a write that was forgotten after it was accepted:
            # storing it again would bring the forgotten memory back.
            metrics.add_metric(name="WritesSuperseded", unit=MetricUnit.Count, value=1)
            logger.info("write superseded by a later forget", extra={"record_id": record.id})
            return Outcome.SUPERSEDED
        near = self._store.nearest(tenant, agent, record.grain, vector, now)
        if near is not None and near[1] > self._threshold and near[0].id != record.id:
            existing, cosine = near
            merged = _merge(existing, record, now)
            self._store.put([StoredRecord(merged, vector)])
            self._store.add_alias(tenant, agent, record.id, existing.id)
            metrics.add_metric(name="WritesDeduplicated", unit=MetricUnit.Count, value=1)
            logger.info(
                "write merged into a near duplicate",
                extra={"record_id": record.id, "into": existing.id, "cosine": round(cosine, 4)},
            )
            return Outcome.MERGED
        self._store.put([StoredRecord(record, vector)])
        metrics.add_metric(name="WritesStored", unit=MetricUnit.Count, value=1)
        return Outcome.INSERTED


def _merge(existing: MemoryRecord, new: MemoryRecord, now: datetime) -> MemoryRecord:
    """The newer wording wins; what either said about importance, tags and links is kept."""
    return existing.model_copy(
        update={
            "content": new.content,
            "content_hash": new.content_hash,
            "topic": new.topic or existing.topic,
            "topic_raw": new.topic_raw or existing.topic_raw,
            "importance": max(existing.importance, new.importance),
            "tags": list(dict.fromkeys([*existing.tags, *new.tags]))[:MAX_TAGS],
            "links": list(dict.fromkeys([*existing.links, *new.links])),
            "metadata": _merged_metadata(existing.metadata, new.metadata),
            "access_count": existing.access_count + 1,
            "updated_at": now,
            "expires_at": _later(existing.expires_at, new.expires_at),
        }
    )


def _merged_metadata(old: dict[str, object], new: dict[str, object]) -> dict[str, object]:
    """Both, newer keys winning; if together they break the size limit, the newer alone."""
    combined = {**old, **new}
    try:
        return check_metadata(combined)
    except ValueError:
        return new


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """Of two expiries the later one; no expiry (None) outlives any."""
    if a is None or b is None:
        return None
    return max(a, b)


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
