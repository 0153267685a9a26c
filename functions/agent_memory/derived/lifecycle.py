"""The one life every derived memory lives: summaries, patterns and profiles, each a row of the
registry `derived.rules.kinds`.

A derived record's job chooses its sources, a model states what they say, the record gets a
deterministic id and is queued as an upsert through the writer; a forget of a source marks it
stale (hidden at once) and queues its job, which re-makes it from what is left or drops it. Both
halves are here, written once for every kind and driven by its row: `StaleWalk`, what a forget
marks and queues, and `Lifecycle`, what a job does around its own choosing and making (what an id
holds before it is made, `Prior`; the upserts; the made and dropped events; the drop). What differs
between the kinds is the choosing: a period's children, folded in chunks (`cascade.summarize`), or
a window of an agent's working memory grouped by meaning or by person (`derived.derivation` and
the pattern and profile jobs).

A summary, pattern or profile (`derived.rules.kinds`, the registry of derived kinds) made from a
record that is later forgotten still says what that record said. A forget hides it at once
(`MemoryStore.mark_stale`: its ``deleted_at`` is set, so search, get and the cascade's child
reads skip it) and queues its re-make. `StaleWalk` is that walk, the same for every row of the
registry: for each kind it finds what the forgotten memory fed (``found_by``: up the cascade by
the summaries' deterministic ids, or among the kind's records by their sources), marks it, and
queues the row's re-make jobs. Both a stale record and a forgotten one carry a ``deleted_at``;
the audit trail tells them apart: of the events that hide a record (``stale``, ``forget``,
``erase``), the newest *by event time* is ``stale``. A forgotten record is never re-made; a
stale one is.

Event time, not the order the events were appended in: a re-make that started before a later
forget appends its ``remade`` after that forget's ``stale`` (and its version is then dropped by
the writer, `REMAKES`), so "the last event appended" would take a summary hidden by the forget
for one forgotten on purpose, and nothing would ever re-make its day. ``remade`` and the other
events that do not hide a record say nothing about why it is hidden now and are not read.

A summary's re-make names the stale mark it re-makes (`REMAKES`, the ``deleted_at`` it read):
the writer stores the version only while that mark is still the newest, so a forget that lands
between the re-make's read and its write leaves the summary stale for that forget's own re-make
(and the forget marks the cascade a second time once the memory is gone, `StaleWalk.mark_again`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.cascade.rules.periods import PARENT_GRAIN, local_date, parent_key
from agent_memory.derived.rules.kinds import (
    DERIVED_KINDS,
    SUMMARIES,
    DerivedKind,
    RemakeJob,
    Stale,
    derived_kind,
)
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    AuditQuery,
    AuditTrail,
    DerivedMemory,
    Job,
    MarkingMemory,
    PendingWrites,
    QueueMessage,
    RecordSearch,
    StaleMarks,
    StoreQuery,
    WriteQueue,
)
from agent_memory.writing.write import dedup_id, send_pending

#: Metadata key of a summary's child count (also written by the summarize service).
CHILDREN_COUNT = "children_count"
#: Metadata key of the model a summary was made with (the summarize service writes it).
MODEL_ID = "summarizer_model_id"
#: Metadata key of a summary version: the ``deleted_at`` (ISO 8601) of the stale summary it
#: re-makes, or None when it was made over a live summary or none.
REMAKES = "remakes_stale_since"

#: The events that hide a record, the only ones that say why it is hidden.
_HIDING = frozenset({AuditAction.STALE, AuditAction.FORGET, AuditAction.ERASE})
#: Events read per page of a record's trail.
_PAGE = 100


def is_stale(store: AuditTrail, record: MemoryRecord) -> bool:
    """Whether ``record`` is a summary (or recognised pattern) hidden until it is re-made, not
    one that was forgotten: the newest hiding event by event time (the later appended of two
    at the same instant) is ``stale``."""
    if record.deleted_at is None:
        return False
    newest: AuditEvent | None = None
    trail = _trail(store, record.tenant_id, record.agent_id, record.id)
    for event in trail:  # newest appended first: a tie keeps the one appended later
        if event.action in _HIDING and (newest is None or event.at > newest.at):
            newest = event
    return newest is not None and newest.action == AuditAction.STALE


def hidden_since(store: AuditTrail, record: MemoryRecord, since: datetime) -> bool:
    """Whether ``record`` was hidden (marked stale, forgotten or erased) at or after ``since``,
    even if it is live again now.

    A summary marked stale and re-made between a parent's read of it and the parent's put is
    live when the writer looks: only its trail says the parent quotes words since forgotten."""
    return trail_hides_since(store, record.tenant_id, record.agent_id, record.id, since)


def trail_hides_since(
    store: AuditTrail, tenant_id: str, agent_id: str, record_id: str, since: datetime
) -> bool:
    """`hidden_since` by id, for a record that may be stored no more: a day's summary whose
    every memory was forgotten is marked stale, then deleted by its re-make, and only its trail
    says that a week made from it before holds words since forgotten."""
    trail = _trail(store, tenant_id, agent_id, record_id)
    return any(event.action in _HIDING and event.at >= since for event in trail)


def _trail(store: AuditTrail, tenant_id: str, agent_id: str, record_id: str) -> Iterator[AuditEvent]:
    """Every event of the record's audit trail, newest appended first, page by page."""
    cursor: str | None = None
    while True:
        page = store.audit_events(
            AuditQuery(tenant_id, agent_id, record_id=record_id, limit=_PAGE, cursor=cursor)
        )
        yield from page.events
        cursor = page.next_cursor
        if cursor is None:
            return


def remakes(record: MemoryRecord) -> str | None:
    """The stale mark (``deleted_at``) a summary version re-makes, as `stamp` writes it."""
    value = record.metadata.get(REMAKES)
    return value if isinstance(value, str) else None


def stamp(existing: MemoryRecord | None) -> str | None:
    """What a version made over ``existing`` records in `REMAKES`."""
    if existing is None or existing.deleted_at is None:
        return None
    return existing.deleted_at.isoformat()


def version_outdated(stored: MemoryRecord | None, version: MemoryRecord) -> bool:
    """Whether a summary version must not be stored over ``stored``: it was hidden (marked stale
    again, or forgotten) after the version read it. A version that names no mark (`REMAKES`
    absent: a pattern, a profile, or a summary queued before the mark existed) is judged by
    time: hidden after the version was made."""
    if stored is None or stored.deleted_at is None:
        return False
    if REMAKES not in version.metadata:
        return stored.deleted_at > version.updated_at
    return remakes(version) != stored.deleted_at.isoformat()


def made_from(summary: MemoryRecord, child_id: str) -> bool:
    """Whether ``summary`` folded ``child_id``; True when it cannot tell (its list of sources is
    cut short on very busy periods), so a forget errs on the side of re-making."""
    count = summary.metadata.get(CHILDREN_COUNT)
    complete = isinstance(count, int) and count == len(summary.source_ids)
    return child_id in summary.source_ids or not complete


def remade_event(stale: MemoryRecord, version: MemoryRecord) -> AuditEvent | None:
    """The ``remade`` event of storing ``version`` over the stale summary ``stale`` (None when it
    is not one). The writer appends it when the version is stored, so the trail says "remade"
    exactly when a re-made summary is visible. Dated no earlier than the mark it re-makes, and
    the same for a redelivered write (the trail is idempotent per record, action and instant)."""
    if version.kind is not MemoryKind.SUMMARY or stale.deleted_at is None:
        return None
    return AuditEvent(
        tenant_id=stale.tenant_id,
        agent_id=stale.agent_id,
        record_id=stale.id,
        action=AuditAction.REMADE,
        actor=f"summarizer:{version.metadata.get(MODEL_ID)}",
        at=max(version.updated_at, stale.deleted_at),
        detail={
            "dropped": sorted(set(stale.source_ids) - set(version.source_ids)),
            "stale_since": stale.deleted_at.isoformat(),
        },
    )


def was_forgotten(store: AuditTrail, record: MemoryRecord | None) -> bool:
    """Whether someone forgot ``record`` (hidden, and not by a forget of its sources): a derived
    record forgotten so is never made again under its id, nor folded into a summary."""
    return record is not None and record.deleted_at is not None and not is_stale(store, record)


# -- what a forget marks: every derived kind of the registry, walked the same way ----------------


def job_message(job: RemakeJob) -> Job:
    """A re-make job as the job queue carries it (a summary job as `Job.of` writes it)."""
    if isinstance(job, SummarizeJob):
        return Job.of(job)
    return Job(key=job.key, body=job.model_dump_json())


def remake_job(record: MemoryRecord) -> Job | None:
    """The job that re-makes ``record`` once it is marked stale, as a forget queues it: its
    registry row's (`derived.rules.kinds`), naming it (None: nothing re-makes such a record)."""
    what = derived_kind(record)
    jobs = what.remake(record.tenant_id, record.agent_id, [Stale.of(record)]) if what else []
    return job_message(jobs[0]) if jobs else None


def records_of(
    store: RecordSearch, tenant_id: str, agent_id: str, now: datetime, what: DerivedKind
) -> list[MemoryRecord]:
    """The agent's live records of ``what`` that its job made (at most ``what.limit``): what a
    run continues and what a forget looks through for the memory it forgot."""
    found = store.search(
        StoreQuery(
            tenant_id=tenant_id,
            agent_id=agent_id,
            now=now,
            grains=(Grain.WORKING,),
            kinds=(what.kind,),
            limit=what.limit,
        )
    )
    return [c.record for c in found if what.ours(c.record)]


@dataclass
class _Marking:
    """One pass of marks: the instant and actor each of its events names, and what it marked."""

    now: datetime
    actor: str
    stale: list[str] = field(default_factory=list)

    def mark(self, store: StaleMarks, record: MemoryRecord, detail: dict[str, object]) -> bool:
        """Mark ``record`` stale with a ``stale`` event of this pass (False: no such record)."""
        event = AuditEvent(
            record.tenant_id, record.agent_id, record.id, AuditAction.STALE, self.actor, self.now, detail
        )
        return store.mark_stale(record.tenant_id, record.agent_id, record.id, event)


class _Marks:
    """How a forget finds, for one derived kind, what a memory fed and marks it stale; and what
    it then queues. The steps a kind does not take are no-ops here."""

    def __init__(self, what: DerivedKind, store: MarkingMemory, timezone: str, marking: _Marking) -> None:
        self.what = what
        self._store = store
        self._tz = timezone
        self._marking = marking

    def mark(self, record: MemoryRecord) -> list[str]:
        """Mark stale what ``record`` fed; the ids marked."""
        raise NotImplementedError

    def mark_successor(self, record: MemoryRecord) -> None:
        """Mark what the memory that superseded ``record`` fed, if that quotes what it replaced."""

    def mark_again(self, record: MemoryRecord, at: datetime) -> None:
        """Walk the marks of the forgotten ``record`` again at the later instant ``at``."""

    def mark_user(self, tenant_id: str, agent_id: str, user_id: str) -> None:
        """Mark what still holds an erased end user's words once their memories are gone."""

    def remake(self) -> list[Stale]:
        """What this forget marked that the kind's job re-makes."""
        raise NotImplementedError


class _BySources(_Marks):
    """Patterns and profiles: the agent's records of the kind that name the memory as a source
    (read once per operation, on the first memory of a kind that feeds them)."""

    def __init__(self, what: DerivedKind, store: MarkingMemory, timezone: str, marking: _Marking) -> None:
        super().__init__(what, store, timezone, marking)
        self._records: list[MemoryRecord] | None = None
        self._stale: list[str] = []

    def mark(self, record: MemoryRecord) -> list[str]:
        if not self.what.fed_by(record):
            return []
        if self._records is None:
            self._records = records_of(
                self._store, record.tenant_id, record.agent_id, self._marking.now, self.what
            )
        ids, marked = record.write_ids, []
        for item in self._records:
            if ids.isdisjoint(item.source_ids) or item.id in self._stale:
                continue
            if self._marking.mark(self._store, item, {"because": record.id}):
                self._stale.append(item.id)
                marked.append(item.id)
                self._marking.stale.append(item.id)
        return marked

    def remake(self) -> list[Stale]:
        return [Stale(i) for i in self._stale]


class _ByCascade(_Marks):
    """Summaries: the summary of the memory's period, then each one above it that was made
    through the one below (by their deterministic ids). One job per chain is queued, for its
    top-most stale summary (``tops``): making it makes every stale summary below it first (the
    cascade heals missing children), so the order is right.

    The walk stops at the first summary that was not made from the one below it, or that was
    forgotten itself (it is never re-made, and its parent was re-made without it when it was
    forgotten); it passes a summary that does not exist (see `mark`)."""

    def __init__(
        self,
        what: DerivedKind,
        store: MarkingMemory,
        timezone: str,
        marking: _Marking,
        tops: dict[str, Stale] | None = None,
    ) -> None:
        super().__init__(what, store, timezone, marking)
        #: Summaries this pass marked, and the chains' tops (shared with a pass of `mark_again`).
        self._marked: set[str] = set()
        self._tops: dict[str, Stale] = {} if tops is None else tops

    def mark(self, record: MemoryRecord) -> list[str]:
        """Mark stale every summary made from ``record``, directly or through the cascade."""
        tenant, agent, now = record.tenant_id, record.agent_id, self._marking.now
        step = self._parent_of(record)
        child_id, marked = record.id, []
        child_ids = set(record.write_ids)
        while step is not None:
            grain, key = step
            sid = summary_id(tenant, agent, grain.value, key)
            if sid in self._marked:
                # Marked by this operation already, with everything above it: the job of its
                # chain's top re-makes it and, through it, the summary just marked below it.
                self._tops.pop(child_id, None)
                break
            summary = self._store.get(tenant, agent, sid)
            if summary is None:
                # Deleted by retention, which only deletes a summary its live parent lists: the
                # parent (and the chain above) still holds what this one held. Or not stored yet:
                # a version made from ``record`` may wait in the write queue, so its period is
                # made again (it re-makes a summary holding a forgotten memory) unless a summary
                # above it is re-made, which makes it first. Only right above what holds the
                # forgotten words: nothing above a missing summary was made through it.
                if child_id == record.id or child_id in self._marked:
                    self._tops.pop(child_id, None)
                    self._tops[sid] = Stale(sid, grain, key)
                child_id, child_ids = sid, {sid}
                step = (PARENT_GRAIN[grain], parent_key(grain, key)) if grain in PARENT_GRAIN else None
                continue
            if summary.is_live(now):
                if not any(made_from(summary, c) for c in child_ids):
                    break
            elif not is_stale(self._store, summary):
                break  # forgotten: never re-made, and its parent was re-made without it
            self._marking.mark(self._store, summary, {"because": record.id})
            self._hold(summary, grain, key, child_id)
            marked.append(sid)
            child_id, child_ids = sid, {sid}
            step = (PARENT_GRAIN[grain], parent_key(grain, key)) if grain in PARENT_GRAIN else None
        return marked

    def mark_successor(self, record: MemoryRecord) -> None:
        """The summaries of what superseded ``record`` quote what it replaced: re-made too."""
        if record.superseded_by:
            successor = self._store.get(record.tenant_id, record.agent_id, record.superseded_by)
            if successor is not None and successor.is_live(self._marking.now):
                self.mark(successor)

    def mark_again(self, record: MemoryRecord, at: datetime) -> None:
        """A re-make that read its children between the first marks and the delete still folded
        ``record``, and names the first mark (`REMAKES`): marked again, the summary's mark is no
        longer the one that version names, so the writer drops it (or, already stored, it is
        hidden here) and the re-make queued for the chain's top is made from what is left.
        Idempotent: a retry after a crash finds the record forgotten and stops earlier; marking a
        stale summary again only moves its mark forward."""
        again = _ByCascade(self.what, self._store, self._tz, _Marking(at, self._marking.actor), self._tops)
        again.mark(record)
        again.mark_successor(record)
        known = set(self._marking.stale)
        self._marking.stale += [s for s in again._marking.stale if s not in known]
        self._marked |= again._marked

    def mark_user(self, tenant_id: str, agent_id: str, user_id: str) -> None:
        """Summaries that still hold the user's words after the memories they came from are gone
        (retention deleted them once a summary held them): re-made from what is left."""
        for summary in self._store.summaries_of_user(tenant_id, agent_id, user_id, self._marking.now):
            if summary.id in self._marked or summary.time_key is None:
                continue
            if self._marking.mark(self._store, summary, {"because_user": user_id}):
                self._hold(summary, summary.grain, summary.time_key)
                self.mark(summary)

    def remake(self) -> list[Stale]:
        return list(self._tops.values())

    def _hold(self, summary: MemoryRecord, grain: Grain, key: str, below: str | None = None) -> None:
        """``summary`` is marked: the top of its chain now, in place of the one ``below`` it."""
        self._marked.add(summary.id)
        if below is not None:
            self._tops.pop(below, None)
        self._tops[summary.id] = Stale(summary.id, grain, key)
        self._marking.stale.append(summary.id)

    def _parent_of(self, record: MemoryRecord) -> tuple[Grain, str] | None:
        """The summary a record is folded into: its local day's, or its period's parent."""
        if record.grain is Grain.WORKING:
            return Grain.DAILY, local_date(record.occurred_at, self._tz).isoformat()
        if record.grain in PARENT_GRAIN and record.time_key is not None:
            return PARENT_GRAIN[record.grain], parent_key(record.grain, record.time_key)
        return None


_FOUND_BY: dict[str, type[_Marks]] = {"cascade": _ByCascade, "sources": _BySources}


class StaleWalk:
    """One forget operation's marks over every derived kind of the registry (`derived.rules.kinds`,
    in its order): what each forgotten memory fed is marked stale (hidden at once) before the
    memory is forgotten, and each kind's job is queued to re-make it from what is left."""

    def __init__(self, store: MarkingMemory, timezone: str, now: datetime, actor: str) -> None:
        self.now, self.actor = now, actor
        self._marking = _Marking(now, actor)
        self._kinds = [_FOUND_BY[w.found_by](w, store, timezone, self._marking) for w in DERIVED_KINDS]

    @property
    def stale(self) -> list[str]:
        """Every record this operation marked stale, in order."""
        return self._marking.stale

    def mark(self, record: MemoryRecord) -> list[str]:
        """Mark stale what ``record`` fed, of every kind, and what its successor's summaries
        quote of it; the summaries it fed (what the forget's own event names)."""
        fed = {m.what.kind: m.mark(record) for m in self._kinds}
        for m in self._kinds:
            m.mark_successor(record)
        return fed[SUMMARIES.kind]

    def mark_again(self, record: MemoryRecord, at: datetime) -> None:
        """Once ``record`` is forgotten, walk its marks again at ``at`` (`_ByCascade.mark_again`)."""
        for m in self._kinds:
            m.mark_again(record, at)

    def mark_user(self, tenant_id: str, agent_id: str, user_id: str) -> None:
        """What still holds an erased end user's words, its sources gone: marked stale too."""
        for m in self._kinds:
            m.mark_user(tenant_id, agent_id, user_id)

    def jobs(self, tenant_id: str, agent_id: str) -> list[Job]:
        """The re-make jobs for what this operation marked, kind by kind."""
        return [job_message(j) for m in self._kinds for j in m.what.remake(tenant_id, agent_id, m.remake())]

    def event(
        self, tenant_id: str, agent_id: str, record_id: str, action: str, detail: dict[str, object]
    ) -> AuditEvent:
        """An audit event of this operation: every step of it names the same actor and instant."""
        return AuditEvent(tenant_id, agent_id, record_id, action, self.actor, self.now, detail)


# -- what a job does around its own making: the same for every derived kind ----------------------


@dataclass(frozen=True, slots=True)
class Prior:
    """What a job finds under a derived record's id before it makes it."""

    record: MemoryRecord | None
    #: Not live now (hidden, or past its expiry).
    hidden: bool = False
    #: Hidden by a forget of one of its sources: re-made from what is left, whatever it was
    #: made from before.
    stale: bool = False

    @property
    def forgotten(self) -> bool:
        """Hidden by someone forgetting it (not its sources): never made again under its id."""
        return self.hidden and not self.stale


class Lifecycle:
    """The life of one `DerivedKind`'s records (the module docstring), driven by its row. Its
    upserts are held as the agent's pending writes when ``pending`` is given (the per-agent jobs,
    whose records are the agent's working memory); a period's summary is only queued."""

    def __init__(
        self, what: DerivedKind, store: DerivedMemory, queue: WriteQueue, pending: PendingWrites | None = None
    ) -> None:
        self.what = what
        self._store = store
        self._queue = queue
        self._pending = pending

    def get(self, tenant: str, agent: str, record_id: str) -> MemoryRecord | None:
        return self._store.get(tenant, agent, record_id)

    def prior(self, tenant: str, agent: str, record_id: str, now: datetime) -> Prior:
        """What is stored under ``record_id`` now, and whether it is stale or forgotten."""
        record = self._store.get(tenant, agent, record_id)
        if record is None or record.is_live(now):
            return Prior(record)
        return Prior(record, hidden=True, stale=is_stale(self._store, record))

    def forgotten(self, record: MemoryRecord | None) -> bool:
        """Whether someone forgot ``record`` (hidden, not by a forget of its sources): it is not
        made again under its id, nor folded into a summary."""
        return was_forgotten(self._store, record)

    def queue(self, records: Sequence[MemoryRecord], versions: Mapping[str, str] | None = None) -> None:
        """``records`` (one agent's) queued as upserts, each on its own group, for the writer to
        embed and store; held as the agent's pending writes until stored when the lifecycle has marks.

        A record named in ``versions`` is sent under a queue dedup id of its version (what it was
        made from) and time, so a resend of this exact message is dropped and a later re-make is
        not; any other under its id's."""
        if not records:
            return
        messages = []
        for record in records:
            command = WriteCommand(op="upsert", record=record)
            version = (versions or {}).get(record.id)
            dedup = (
                dedup_id(record.id)
                if version is None
                else hashlib.sha256(
                    f"{record.id}:{version}:{record.updated_at.isoformat()}".encode()
                ).hexdigest()
            )
            messages.append(
                QueueMessage(group_id=command.group_id, dedup_id=dedup, body=command.model_dump_json())
            )
        if self._pending is None:
            self._queue.send(messages)
            return
        tenant, agent = records[0].tenant_id, records[0].agent_id
        send_pending(self._queue, self._pending, tenant, agent, [r.id for r in records], messages)

    def made(
        self, records: Sequence[MemoryRecord], detail_of: Callable[[MemoryRecord], dict[str, object]]
    ) -> None:
        """The made action of each of ``records``, with what it was made of, in the audit trail."""
        what = self.what
        self._store.append_audit(
            [
                AuditEvent(r.tenant_id, r.agent_id, r.id, what.made, what.actor, r.updated_at, detail_of(r))
                for r in records
            ]
        )

    def drop(
        self, record: MemoryRecord, at: datetime, detail: dict[str, object], actor: str | None = None
    ) -> None:
        """A record its sources no longer make goes, as the row says (deleted, or hidden now if it
        is not already and left for the purge), with the dropped action, its ``actor`` (the
        row's by default) and why (``detail``) in the audit trail."""
        what = self.what
        event = AuditEvent(
            record.tenant_id, record.agent_id, record.id, what.dropped, actor or what.actor, at, detail
        )
        if what.drops == "delete":
            self._store.delete_records(record.tenant_id, record.agent_id, [record.id])
            self._store.append_audit([event])
        elif record.deleted_at is None:
            self._store.soft_delete(record.tenant_id, record.agent_id, record.id, event)
        else:
            self._store.append_audit([event])
