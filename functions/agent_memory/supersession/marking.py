"""Marking what a write supersedes, and what a forget un-supersedes, at write time and without a model.

A write that states something (`supersession.rules.claims.claims`: where someone lives, works, a
favourite, a plan's date...) is compared with the agent's earlier live memories of the same end
user and speaker that are near it by meaning or words (one store search, only for a text that
states something). Those that state the same
attribute, with the memories already linked to them, are ordered into timelines
(`supersession.rules.timelines`), and each memory's supersession fields follow from where it stands:
the older value gets ``valid_to`` and ``superseded_by``, the newer ``valid_from`` and
``supersedes``. Nothing is deleted or merged.

A statement no pattern reads is compared by meaning instead (`MarkingService._by_meaning`):
the nearest earlier statement of its holder, by their own words (`StatementVectors`), when it
stands out from the other earlier statements (questions and requests do not compete; by less
when it says that a value changed) and the two read as one
value replacing another (`supersession.rules.shape.replaces`). That costs the same one store search
for every statement (a question or a request costs nothing) and one embedding of the statements
not yet kept, still no generative model call.

With an update judge (`ports.UpdateJudge`: a small cross-encoder that reads two statements
together, `adapters.judges`), a statement the rules above take no earlier one for is read with
its nearest earlier statement, and marks it when the judge is sure (`JUDGE_THRESHOLD`); one the
rules took is let go when the judge finds it unlikely (`JUDGE_VETO`). One pair read at most a
write, by a model of the writer's own, never a generative one.

The same holder only: two end users, or two speakers of one conversation, never supersede each
other ("I live in Berlin" said by Ana does not end Ben's Lisbon). A forget takes the forgotten
memory out of its timelines again, so the value it replaced holds once more.

The older memories are marked before the new one is stored: a crash in between leaves marks a
redelivery makes again (the same timelines give the same fields), never a stored write whose
older values were not marked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from agent_memory.derived.rules.kinds import is_derived
from agent_memory.errors import DependencyError
from agent_memory.feed.rules.events import updated
from agent_memory.governance.rules.versions import validity_detail
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    Embedder,
    RecordLookup,
    RecordSearch,
    StoreQuery,
    SupersedingMemory,
    UpdateJudge,
    ValidityUpdates,
    Vector,
)
from agent_memory.ports.change_feed import ChangeFeed, publish
from agent_memory.recall.rules.current_first import holder
from agent_memory.supersession.rules.claims import SELF, Claim, Relation, claims, relate_claims
from agent_memory.supersession.rules.numbers import counted_changed
from agent_memory.supersession.rules.pairs import linked
from agent_memory.supersession.rules.shape import SAME_THING, Shape, replaces, shape
from agent_memory.supersession.rules.timelines import Statement, Timelines, timelines
from agent_memory.writing.memo_embedder import MemoEmbedder
from agent_memory.writing.rules.contextual import dedup_text

#: How many of the agent's nearest memories a stating write is compared with.
CANDIDATES = 20
#: By meaning: how far the nearest earlier statement must stand above the next one. Turns of one
#: speaker are all somewhat alike (their vectors carry the speaker, the day and the turns before),
#: so a statement is taken as replaced only when it stands out as *the* one the new turn is about.
#: Chosen on half A of benchmarks/data/knowledge_update (docs/decisions.md).
STANDS_OUT = 0.1
#: The same two tests on the statements' own vectors (`StatementVectors`: their words alone), when
#: the service has an embedder: without the shared speaker, day and context, turns of one speaker
#: are far less alike, so "near" is lower and "stands out" higher. Chosen on half A of
#: benchmarks/data/knowledge_update (docs/decisions.md).
OWN_SAME_THING = 0.35
OWN_STANDS_OUT = 0.25
#: ... and for a statement that says a value changed (`Shape.ended`, `Shape.began`: "transferred",
#: "since", "finally", "new"): two signals of a change, so nearness may carry less of it. A
#: statement that only names a new value ("My office is in Bradford" after "I'm renting in Leeds")
#: is as often another attribute of the same topic, so it needs the higher bar above.
OWN_SAME_THING_CHANGED = 0.3
OWN_STANDS_OUT_CHANGED = 0.15
#: ... and for one that says an amount of the kind its nearest statement says, with another value
#: ("£32 a week" after "twenty-five pounds a week": `supersession.rules.numbers.counted_changed`,
#: a unit other than money alone): the same unit is a tie of its own, so the two need stand out
#: less from the holder's other statements ("I charge ninety-five an hour" → "it's $110 an hour
#: from the first of June").
OWN_SAME_THING_AMOUNT = 0.25
OWN_STANDS_OUT_AMOUNT = 0.1
#: With an update judge (`ports.UpdateJudge`): how many of the nearest earlier statements (by own
#: vectors) it reads where the rules above take none, how near one must be to be read at all, the
#: judge's probability that takes a pair as one value replacing another there, and the probability
#: under which it overrules the rules' choice. The judge was trained on halves A-G of
#: benchmarks/data/knowledge_update and these were chosen on halves H-J (docs/decisions.md).
JUDGE_CANDIDATES = 1
JUDGE_FLOOR = 0.2
JUDGE_THRESHOLD = 0.95
JUDGE_VETO = 0.3


def _holds_no_value(mine: Shape, theirs: Shape) -> bool:
    """Whether of a newer statement ``mine`` and an older one ``theirs`` one holds no value to
    replace or be replaced: news of one day ("knocked my coffee over again this morning") unless
    it says that one began or ended ("started at Globex today"), or newer news of one day that
    names no new value and ends nothing ("Missed the bus this morning and now I'm late for
    everything")."""
    return (theirs.moment and not (theirs.ended or theirs.began)) or (
        mine.moment and not mine.ended and not mine.particulars - theirs.particulars - theirs.initials
    )


def stated(record: MemoryRecord) -> list[Claim]:
    """What supersession reads in this memory: the claims of a working memory's text (none for
    a summary or a derived memory, which restate others)."""
    if record.grain is not Grain.WORKING or is_derived(record):
        return []
    found = claims(record.content)
    # a story of the past ("Back when I lived in Hull ...") claims nothing that holds now
    return found if not found or not shape(record.content).past else []


@dataclass(frozen=True, slots=True)
class Marked:
    """A memory whose supersession fields change, and why (for its audit event)."""

    record_id: str
    validity: RecordValidity
    attribute: str | None


class StatementVectors:
    """Each statement's own vector: its words alone (`writing.rules.contextual.dedup_text`: with its
    topic, when it has one), without the speaker, the day and the turns before that its stored
    vector carries.

    Stored vectors place two turns of one speaker near each other for what they share around them;
    comparing "I live in Lisbon" with "I work in Porto" needs what each says. The store returns no
    vectors, so they are embedded here, through a memo (`writing.memo_embedder`): each
    statement once while it is kept, and the earlier statements a write is compared with were
    mostly embedded when the same writer wrote them a little before."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder if isinstance(embedder, MemoEmbedder) else MemoEmbedder(embedder)

    def nearest(
        self, record: MemoryRecord, others: Sequence[MemoryRecord]
    ) -> list[tuple[MemoryRecord, float]]:
        """``others`` with their cosine to ``record`` by own vectors, nearest first (one model
        call at most, for the statements not kept)."""
        mine, *theirs = self._embedder.embed([dedup_text(record), *(dedup_text(o) for o in others)])
        scored = [(o, float(np.dot(mine, v))) for o, v in zip(others, theirs, strict=True)]
        return sorted(scored, key=lambda x: -x[1])


class MarkingService:
    def __init__(
        self,
        store: SupersedingMemory,
        candidates: int = CANDIDATES,
        *,
        feed: ChangeFeed | None = None,
        embedder: Embedder | None = None,
        judge: UpdateJudge | None = None,
    ) -> None:
        self._store = store
        #: With a judge (and an embedder), a statement no pattern reads is judged against its
        #: nearest earlier statement where the nearness rules take none (`_judged`), and the
        #: rules' choice is let go when the judge finds it unlikely (`_judged_unlikely`).
        self._judge = judge
        self._candidates = candidates
        #: Each memory whose supersession fields change is a ``memory.updated`` event.
        self._feed = feed
        #: With an embedder, statements are compared by their own vectors (`StatementVectors`);
        #: without one, by their stored vectors.
        self._own = StatementVectors(embedder) if embedder is not None else None

    def on_write(
        self, record: MemoryRecord, vector: Vector | None, space: str, now: datetime
    ) -> MemoryRecord:
        """Mark the older memories ``record`` supersedes (or that supersede it, for a late
        write of an older fact) and return ``record`` with its own fields set."""
        mine = stated(record)
        if not mine:
            return self._by_meaning(record, vector, space, now)
        related = self._related(record, mine, vector, space, now)
        if not related:
            return record
        group = self._with_linked(record, [record, *related], now)
        changes = _changes(group, timelines(_statements(group)), exclude=frozenset())
        own = next((c.validity for c in changes if c.record_id == record.id), None)
        for change in changes:
            if change.record_id != record.id:
                self._mark(record, change, now)
        if own is None:
            return record
        metrics.add_metric(name="Supersessions", unit=MetricUnit.Count, value=len(own.supersedes))
        return record.model_copy(update=own.as_fields())

    def on_forget(self, forgotten: MemoryRecord, now: datetime, actor: str) -> list[str]:
        """Take a forgotten memory out of its timelines: what it superseded, and what superseded
        it, are re-marked from the memories left. Returns the ids re-marked."""
        linked = [*forgotten.supersedes, *([forgotten.superseded_by] if forgotten.superseded_by else [])]
        if not linked:
            return []
        group = [
            r
            for r in self._with_linked(forgotten, self._live(forgotten, linked, now), now)
            if r.id != forgotten.id
        ]
        if not group:  # what it was linked to is gone too (retention removed it): nothing to re-mark
            return []
        changes = _changes(group, timelines(_statements(group)), exclude=frozenset({forgotten.id}))
        for change in changes:
            detail: dict[str, object] = {"forgotten": forgotten.id, **validity_detail(change.validity)}
            self._set(forgotten, change, now, actor, AuditAction.SUPERSESSION_UNDONE, detail)
        return [c.record_id for c in changes]

    def _by_meaning(
        self, record: MemoryRecord, vector: Vector | None, space: str, now: datetime
    ) -> MemoryRecord:
        """A statement no pattern reads ("finally unpacked the last boxes in our new flat in
        Lisbon"): it replaces the earlier statement of its holder it is nearest to, when that one
        stands out from the rest (`STANDS_OUT`; by own vectors `OWN_STANDS_OUT`, or
        `OWN_STANDS_OUT_CHANGED` for a statement that says a value changed), is from another
        conversation, and the two read as one value replacing another
        (`supersession.rules.shape.replaces`: same holder and subject, a new value or a word of change,
        no "also", no restatement; the old name said again beside a new one of its kind counts,
        `named_anew`). Not a plan or a wish ("thinking about moving to Porto", "we'll try York one
        day": `Shape.wish`), not a story of the past ("back when", "used to": `Shape.past`), not a
        turn of one day's news that names no new value and ends nothing, and not an older turn of
        one day's news ("knocked my coffee over again this morning": `Shape.moment`) unless it said
        a value began or ended. One store search, no model call.
        Conversation turns only: a turn is one person's news about their own life, while plain
        items ("The vault code for the Lisbon office is ...", "The alarm code of the Porto office
        is ...") are as often two facts side by side as one replacing the other."""
        mine = shape(record.content)
        if vector is None or not mine.statement or record.grain is not Grain.WORKING or is_derived(record):
            return record
        if mine.wish or mine.past:
            # a plan or a wish ("thinking about moving to Porto") ends nothing yet, nor a story of
            # the past ("Back when we lived in Hull we kept chickens") anything that holds now
            return record
        if record.conversation_id is None:
            return record
        # Only statements compete: a question or a request states no value to replace, and one
        # near the new turn ("Can you remind me about the parents' evening?") must not keep the
        # statement it replaces from standing out.
        found = [
            (r, similarity)
            for r, similarity in nearest(
                self._store, record, now, self._candidates, vector=vector, space=space
            )
            if shape(r.content).statement
        ]
        near, stands_out = SAME_THING, STANDS_OUT
        if self._own is not None:
            # ... and only what it may replace: earlier turns of other conversations.
            earlier = [
                r
                for r, _ in found
                if r.occurred_at < record.occurred_at
                and r.conversation_id not in (None, record.conversation_id)
            ]
            try:
                found = self._own.nearest(record, earlier) if earlier else []
            except DependencyError:  # a missed update costs less than a write that fails for it
                logger.warning("statement embedding failed; nothing superseded by meaning", exc_info=True)
                metrics.add_metric(name="SupersessionEmbeddingFailures", unit=MetricUnit.Count, value=1)
                return record
            near, stands_out = (
                (OWN_SAME_THING_CHANGED, OWN_STANDS_OUT_CHANGED)
                if mine.ended or mine.began
                else (OWN_SAME_THING, OWN_STANDS_OUT)
            )
        if not found:
            return record
        (older, similarity), runner_up = found[0], (found[1][1] if len(found) > 1 else 0.0)
        theirs = shape(older.content)
        if self._own is not None and counted_changed(mine.amounts, theirs.amounts):
            near, stands_out = min(near, OWN_SAME_THING_AMOUNT), min(stands_out, OWN_STANDS_OUT_AMOUNT)
        if (
            _holds_no_value(mine, theirs)
            or older.occurred_at >= record.occurred_at
            or older.conversation_id in (None, record.conversation_id)
            or similarity - runner_up < stands_out
            or not replaces(mine, theirs, similarity, near, named_anew=True)
        ):
            return self._judged(record, mine, found, now) if self._own is not None else record
        if self._own is not None and self._judged_unlikely(record, older):
            return record
        return self._supersede(record, older, now)

    def _judged(
        self, record: MemoryRecord, mine: Shape, found: Sequence[tuple[MemoryRecord, float]], now: datetime
    ) -> MemoryRecord:
        """Where the rules take none, the update judge's choice: of the nearest earlier statements
        (`JUDGE_CANDIDATES`, at least `JUDGE_FLOOR` by own vectors, neither holding no value), the
        one it finds most likely replaced, when it is sure of it (`JUDGE_THRESHOLD`)."""
        read = [
            o
            for o, similarity in found[:JUDGE_CANDIDATES]
            if similarity >= JUDGE_FLOOR and not _holds_no_value(mine, shape(o.content))
        ]
        judged = self._judge_pairs(record, read)
        if not judged:
            return record
        probability, older = max(zip(judged, read, strict=True), key=lambda x: x[0])
        return self._supersede(record, older, now) if probability >= JUDGE_THRESHOLD else record

    def _judged_unlikely(self, record: MemoryRecord, older: MemoryRecord) -> bool:
        """Whether the update judge overrules the rules' choice of ``older`` (`JUDGE_VETO`)."""
        judged = self._judge_pairs(record, [older])
        return bool(judged) and judged[0] < JUDGE_VETO

    def _judge_pairs(self, record: MemoryRecord, olders: Sequence[MemoryRecord]) -> list[float]:
        """The judge's probability that ``record`` replaces each of ``olders``; none without a
        judge, or when it fails (a missed update costs less than a write that fails for it, and
        the rules' choice stands)."""
        if self._judge is None or not olders:
            return []
        try:
            return self._judge.replaces([(o.content, record.content) for o in olders])
        except DependencyError:
            logger.warning("update judge failed; supersession by its rules alone", exc_info=True)
            metrics.add_metric(name="SupersessionJudgeFailures", unit=MetricUnit.Count, value=1)
            return []

    def _supersede(self, record: MemoryRecord, older: MemoryRecord, now: datetime) -> MemoryRecord:
        """``record`` replaces ``older`` (or the memory that replaced it since): both marked."""
        current = self._current(record, older, now)
        fields = linked(current, record) if current is not None else None
        if current is None or fields is None:
            return record
        older_fields, own = fields
        self._mark(record, Marked(current.id, older_fields, "meaning"), now)
        metrics.add_metric(name="Supersessions", unit=MetricUnit.Count, value=1)
        return record.model_copy(update=own.as_fields())

    def _current(self, record: MemoryRecord, older: MemoryRecord, now: datetime) -> MemoryRecord | None:
        """``older`` or, when a later memory already replaced it, the one that holds now (a chain
        Berlin → Lisbon → Porto is extended at its end); None when that one is not older than
        ``record`` (a late write of an older fact is not placed by meaning)."""
        seen = {older.id}
        while older.superseded_by is not None and older.superseded_by not in seen:
            newer = self._live(record, [older.superseded_by], now)
            if not newer:
                return None
            older = newer[0]
            seen.add(older.id)
        return older if older.occurred_at < record.occurred_at and older.superseded_by is None else None

    def _related(
        self, record: MemoryRecord, mine: list[Claim], vector: Vector | None, space: str, now: datetime
    ) -> list[MemoryRecord]:
        """The agent's live memories of the same holder near ``record`` that state one of the
        attributes it states (an update or a restatement, either way round)."""
        out: list[MemoryRecord] = []
        for other in neighbours(self._store, record, now, self._candidates, vector=vector, space=space):
            theirs = claims(other.content)
            relations = {relate_claims(mine, theirs).relation, relate_claims(theirs, mine).relation}
            if relations & {Relation.UPDATE, Relation.RESTATEMENT}:
                out.append(other)
        return out

    def _with_linked(
        self, like: MemoryRecord, records: Sequence[MemoryRecord], now: datetime
    ) -> list[MemoryRecord]:
        """``records`` and the live memories of ``like``'s holder their fields already link to
        (one step), so a timeline is not cut where the search did not reach."""
        by_id = {r.id: r for r in records}
        wanted = {i for r in records for i in (*r.supersedes, r.superseded_by) if i and i not in by_id}
        for r in self._live(like, sorted(wanted), now):
            if holder(r) == holder(like):
                by_id[r.id] = r
        return list(by_id.values())

    def _live(self, like: MemoryRecord, ids: Iterable[str], now: datetime) -> list[MemoryRecord]:
        return live_records(self._store, like, ids, now)

    def _mark(self, new: MemoryRecord, change: Marked, now: datetime) -> None:
        detail: dict[str, object] = {"by": new.id, **validity_detail(change.validity)}
        if change.attribute:
            detail["attribute"] = change.attribute
        self._set(new, change, now, "writer", AuditAction.SUPERSEDED, detail)

    def _set(
        self,
        like: MemoryRecord,
        change: Marked,
        now: datetime,
        actor: str,
        action: str,
        detail: dict[str, object],
    ) -> None:
        event = AuditEvent(like.tenant_id, like.agent_id, change.record_id, action, actor, now, detail)
        mark(self._store, self._feed, change.validity, event)


def neighbours(
    store: RecordSearch,
    record: MemoryRecord,
    now: datetime,
    limit: int,
    *,
    vector: Vector | None = None,
    space: str = "",
    end: datetime | None = None,
) -> list[MemoryRecord]:
    """The agent's live working memories of ``record``'s holder nearest it (by its vector when
    given, and its words), best first, neither itself nor a derived memory: the memories it may
    supersede or be superseded by (write time, and the daily review's candidates)."""
    return [r for r, _ in _candidates(store, record, now, limit, vector=vector, space=space, end=end)]


def nearest(
    store: RecordSearch, record: MemoryRecord, now: datetime, limit: int, *, vector: Vector, space: str
) -> list[tuple[MemoryRecord, float]]:
    """`neighbours` with their cosine to ``vector``, nearest first."""
    found = _candidates(store, record, now, limit, vector=vector, space=space)
    return sorted(found, key=lambda x: -x[1])


def _candidates(
    store: RecordSearch,
    record: MemoryRecord,
    now: datetime,
    limit: int,
    *,
    vector: Vector | None,
    space: str,
    end: datetime | None = None,
) -> list[tuple[MemoryRecord, float]]:
    found = store.search(
        StoreQuery(
            tenant_id=record.tenant_id,
            agent_id=record.agent_id,
            now=now,
            grains=(Grain.WORKING,),
            vector=vector,
            text=record.content,
            user_id=record.user_id,
            end=end,
            limit=limit,
            space=space,
        )
    )
    me = holder(record)
    return [
        (c.record, c.similarity or 0.0)
        for c in found
        if c.record.id != record.id and holder(c.record) == me and not is_derived(c.record)
    ]


def live_records(
    store: RecordLookup, like: MemoryRecord, ids: Iterable[str], now: datetime
) -> list[MemoryRecord]:
    """The live memories of ``like``'s agent among ``ids``, in their order."""
    out: list[MemoryRecord] = []
    for i in ids:
        r = store.get(like.tenant_id, like.agent_id, i)
        if r is not None and r.is_live(now):
            out.append(r)
    return out


def mark(
    store: ValidityUpdates, feed: ChangeFeed | None, validity: RecordValidity, event: AuditEvent
) -> bool:
    """Set a memory's supersession fields with ``event`` in its trail, and publish the change;
    False (nothing published) when the memory is no longer live."""
    if not store.set_validity(event.tenant_id, event.agent_id, event.record_id, validity, event):
        logger.info("supersession target no longer live", extra={"record_id": event.record_id})
        return False
    publish(feed, [updated(event)])
    return True


def _statements(records: Iterable[MemoryRecord]) -> list[Statement]:
    return [Statement(r.id, r.content, r.occurred_at, SELF) for r in records]


def _changes(group: Sequence[MemoryRecord], lines: Timelines, exclude: frozenset[str]) -> list[Marked]:
    """Each memory of ``group`` whose fields the timelines change, with its new fields.

    Links to memories outside ``group`` are kept (the timelines did not see them), except those
    to ``exclude`` (a forgotten memory is no one's successor or predecessor any more)."""
    in_group = {r.id for r in group}
    out: list[Marked] = []
    for record in group:
        held = lines.validity(record.id)
        supersedes = {v.supersedes for v in held if v.supersedes}
        supersedes |= {i for i in record.supersedes if i not in in_group and i not in exclude}
        ended = sorted((v for v in held if v.superseded_by), key=lambda v: (v.valid_to, v.superseded_by))
        superseded_by, valid_to = (ended[0].superseded_by, ended[0].valid_to) if ended else (None, None)
        kept = record.superseded_by
        if superseded_by is None and kept and kept not in in_group and kept not in exclude:
            superseded_by, valid_to = kept, record.valid_to
        linked = bool(supersedes) or superseded_by is not None
        validity = RecordValidity(
            valid_from=record.occurred_at if linked else None,
            valid_to=valid_to,
            supersedes=tuple(sorted(supersedes)),
            superseded_by=superseded_by,
        )
        if validity != record.validity:
            attribute = ended[0].attribute if ended else (held[0].attribute if held else None)
            out.append(Marked(record.id, validity, attribute))
    return out
