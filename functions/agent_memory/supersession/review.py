"""The daily summary's model confirms, undoes or adds supersession links before it folds the day.

`supersession.rules.pairs` says why and how the pairs are chosen and read. Here: the day's
working memories that superseded something (the links to confirm), and for those that did not,
the same holder's earlier memories nearest in words (candidates, one store search each, at most
`CANDIDATES_PER_MEMORY`); one summarizer call with every pair; then each verdict applied through
`RecordStore.set_validity` with an audit event whose actor is the model, so the history says
what the model decided and undoing it is a restore. The day's summary is made after, from the
links as they now stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agent_memory.derived.rules.kinds import is_derived
from agent_memory.errors import AgentMemoryError
from agent_memory.governance.rules.versions import validity_detail
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AuditAction,
    AuditEvent,
    Summarizer,
    SummaryInput,
    SummaryRequest,
    SupersedingMemory,
)
from agent_memory.ports.change_feed import ChangeFeed
from agent_memory.supersession.marking import live_records, mark, neighbours
from agent_memory.supersession.rules.pairs import (
    MAX_PAIRS,
    PAIRS,
    PairKind,
    ReviewPair,
    choose,
    linked,
    pair_text,
    unlinked,
    verdicts,
)

#: The model id prefix of summarizers that run no model (the bundled extractive one): they
#: cannot judge a pair, so a review with them would search for candidates for nothing.
MODEL_FREE_PREFIX = "local-"
#: Earlier memories read as candidates for each memory of the day that superseded nothing.
CANDIDATES_PER_MEMORY = 2


class ReviewService:
    def __init__(
        self, store: SupersedingMemory, search: bool = True, *, feed: ChangeFeed | None = None
    ) -> None:
        self._store = store
        #: Each memory whose links the model changes is a ``memory.updated`` event.
        self._feed = feed
        #: Whether candidates are looked for (a store without lexical search finds none).
        self._search = search

    def review(self, day: Sequence[MemoryRecord], summarizer: Summarizer, now: datetime) -> tuple[int, int]:
        """Review the day's links and candidates with ``summarizer``; (undone, added)."""
        working = [r for r in day if r.grain is Grain.WORKING and not is_derived(r)]
        if not working or summarizer.model_id.startswith(MODEL_FREE_PREFIX):
            return 0, 0
        confirm = [p for r in working for p in self._links(r, now)]
        candidates = self._candidates(working, now) if len(confirm) < MAX_PAIRS else []
        pairs = choose(confirm, candidates)
        if not pairs:
            return 0, 0
        try:
            answer = summarizer.summarize(
                SummaryRequest(
                    grain=Grain.DAILY,
                    period=PAIRS,
                    children=[SummaryInput(label=str(n), text=pair_text(p)) for n, p in enumerate(pairs, 1)],
                    purpose="supersession",
                )
            )
        except AgentMemoryError:
            # The review is a second opinion: without it the write-time links stand, and the
            # day is still summarized.
            logger.warning("the supersession review could not run", exc_info=True)
            return 0, 0
        said = verdicts(answer.text, len(pairs))
        actor = f"summarizer:{answer.model_id}"
        undone = added = 0
        for number, pair in enumerate(pairs, 1):
            verdict = said.get(number)
            if pair.kind is PairKind.CONFIRM and verdict is False:
                undone += self._apply(pair, unlinked(pair.older, pair.newer), actor, now, undo=True)
            elif pair.kind is PairKind.CANDIDATE and verdict is True:
                fields = linked(pair.older, pair.newer)
                if fields is not None:
                    added += self._apply(pair, fields, actor, now, undo=False)
        metrics.add_metric(name="SupersessionsReviewed", unit=MetricUnit.Count, value=len(said))
        if undone or added:
            metrics.add_metric(name="SupersessionsUndone", unit=MetricUnit.Count, value=undone)
            metrics.add_metric(name="SupersessionsAdded", unit=MetricUnit.Count, value=added)
            logger.info(
                "supersession reviewed", extra={"pairs": len(pairs), "undone": undone, "added": added}
            )
        return undone, added

    def _links(self, record: MemoryRecord, now: datetime) -> list[ReviewPair]:
        olders = live_records(self._store, record, record.supersedes, now)
        return [ReviewPair(older, record, PairKind.CONFIRM) for older in olders]

    def _candidates(self, working: Sequence[MemoryRecord], now: datetime) -> list[ReviewPair]:
        if not self._search:
            return []
        out: list[ReviewPair] = []
        for record in working:
            if record.supersedes or len(out) >= MAX_PAIRS:
                continue
            near = neighbours(self._store, record, now, CANDIDATES_PER_MEMORY + 4, end=record.occurred_at)
            kept = [o for o in near if o.occurred_at < record.occurred_at and o.superseded_by is None]
            out += [ReviewPair(o, record, PairKind.CANDIDATE) for o in kept[:CANDIDATES_PER_MEMORY]]
        return out

    def _apply(
        self,
        pair: ReviewPair,
        fields: tuple[RecordValidity, RecordValidity],
        actor: str,
        now: datetime,
        *,
        undo: bool,
    ) -> int:
        action = AuditAction.SUPERSESSION_UNDONE if undo else AuditAction.SUPERSEDED
        newer = pair.newer
        for record, validity in zip((pair.older, newer), fields, strict=True):
            detail: dict[str, object] = {"by": newer.id, "review": "model", **validity_detail(validity)}
            event = AuditEvent(newer.tenant_id, newer.agent_id, record.id, action, actor, now, detail)
            if not mark(self._store, self._feed, validity, event):
                return 0
        return 1
