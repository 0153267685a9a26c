"""How a search becomes a ranked list: `rank`, and the rules it applies, a section each.

The stores hand over their candidates fused (`recall.rules.fusion`: the rule every store follows
to merge its vector and lexical hits). `rank` then scores each candidate (*Scoring*), puts memories and
passages in one order (best first, the head reranked when the service has a reranker; newest
first without a question), moves each superseded memory right after what superseded it
(*Validity*), drops what scored under ``min_score``, folds summaries into the hits they repeat
when every grain was searched (*Folding*), and for a question about the present puts the newer of
two statements about one thing first (`recall.rules.current_first`: *Newer first*, and
*Answered first* with the answer judge). Pure (no I/O): the service hands in what the
stores found and backs the model calls (`ModelCalls`); a model that fails leaves the ranking as it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from agent_memory.knowledge.rules.passages import PassageCandidate
from agent_memory.model.grains import Grain
from agent_memory.model.queries import AlsoIn, Found, Hit, SearchQuery, SharedHit
from agent_memory.model.records import MemoryRecord
from agent_memory.recall.rules.current_first import answered_first, asks_about_now, compared, newer_first
from agent_memory.recall.rules.timehints import TimeHint

if TYPE_CHECKING:  # the store's evidence and a model's vectors, as the ports name them
    from agent_memory.ports.embedding import Matrix, Vector
    from agent_memory.ports.retrieval import Candidate
    from agent_memory.recall.rules.current_first import Answer

    Rescore = Callable[[str, list[str]], Sequence[float] | None]
    Embed = Callable[[list[Hit]], Matrix | None]

# --- The entry point -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidates:
    """What the stores found for one search, with the evidence they found it by: the agent's
    memories (none when only ``shared`` was asked) and the tenant's passages."""

    memories: Sequence[Candidate] = ()
    passages: Sequence[PassageCandidate] = ()


@dataclass(frozen=True, slots=True)
class Asked:
    """One search as the ranking reads it: the request, and what the service worked out from it
    once: ``as_of`` (the request's, or now), the time hints of its question (`recall.rules.timehints`),
    the speakers it names among the candidates (`recall.search.named_speakers`) and the question's vector."""

    request: SearchQuery
    as_of: datetime
    hints: Sequence[TimeHint] = ()
    named: frozenset[str] = frozenset()
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class ModelCalls:
    """The model calls a ranking may use, as functions the service backs: ``rerank``, the question
    and the head's texts in, a relevance per text out; ``statements``, the own vectors of the
    statements `compared` names; ``answers``, the question and (older, newer) pairs of statements
    in, per pair the probability that the newer one is the answer now (`answered_first`). Each
    returns None when its model failed (the ranking is then kept as it was: a search never fails
    for it); one left out is a step skipped."""

    rerank: Rescore | None = None
    statements: Embed | None = None
    answers: Answer | None = None


NO_MODEL_CALLS = ModelCalls()


def rank(
    candidates: Candidates, query: Asked, weights: RankingWeights, models: ModelCalls = NO_MODEL_CALLS
) -> list[Found]:
    """The hits of one search in order, best first (newest first without a question), not yet
    cut to ``max_results``: the steps of the module's docstring, in that order."""
    request = query.request
    ranked, relevance_of = scored(candidates, query, weights)
    ranked = _ordered(ranked, request.query)
    if request.query is not None and models.rerank is not None and ranked:
        ranked = _rerank(models.rerank, request.query, ranked, relevance_of, request.max_results)
    ranked = after_superseders(ranked)
    if request.min_score is not None:
        ranked = [r for r in ranked if r.score >= request.min_score]
    if request.grain is None:  # several grains: a fact quoted up the cascade takes one place
        ranked = _fold(ranked)
    if request.query and asks_about_now(request.query, bool(query.hints)) and "private" in request.sources:
        ranked = _newer_first(ranked, models.statements, query.vector)
        if models.answers is not None:
            ranked = answered_first(ranked, request.query, models.answers)
    return ranked


def patterns_first(patterns: list[Found], ranked: list[Found], request: SearchQuery) -> list[Found]:
    """The agent's patterns sure enough (found on their own, so one that ranked below the list's
    cut still comes first, and `scored` as the main ranking scored them), best first, then the
    rest of ``ranked`` without them; ``min_score`` holds for them too."""
    if request.min_score is not None:
        patterns = [p for p in patterns if p.score >= request.min_score]
    patterns = _ordered(patterns, request.query)
    first = {p.id for p in patterns}
    return [*patterns, *(r for r in ranked if r.id not in first)]


def scored(
    candidates: Candidates, query: Asked, weights: RankingWeights
) -> tuple[list[Found], dict[str, float]]:
    """Every candidate as a hit with its score, and each one's relevance by id (what a reranker's
    replaces): a memory by `score` times ``private_weight``, damped when superseded by the time
    asked about (`SUPERSEDED_FACTOR`); a passage, valid on ``as_of``, by `relevance` alone times
    ``shared_weight`` (only a question finds passages: browsing lists memories)."""
    question, as_of, hints = query.request.query, query.as_of, query.hints
    # A question that names a time asks what held then, not at ``as_of`` ("where did I live
    # in March?"): a memory superseded since still answers it.
    asked_about = min([as_of, *(h.end for h in hints)]) if hints else as_of
    relevance_of: dict[str, float] = {}
    hits: list[Found] = []
    for c in candidates.memories:
        s = score(c.record, as_of, weights, c.similarity, c.lexical, question is not None, hints, query.named)
        relevance_of[c.record.id] = s.relevance
        current = not c.record.superseded_at(asked_about)
        damped = s.score * weights.private_weight * (1.0 if current else SUPERSEDED_FACTOR)
        sim = round(c.similarity, 6) if c.similarity is not None else None
        hits.append(Hit(c.record, round(damped, 6), sim, round(s.recency, 6), current=current))
    for p in candidates.passages:
        rel = relevance(p.similarity, p.lexical, weights.lexical_weight)
        relevance_of[p.passage.id] = rel
        sim = round(p.similarity, 6) if p.similarity is not None else None
        hits.append(SharedHit(p.passage, round(rel * weights.shared_weight, 6), sim))
    return hits, relevance_of


def _ordered(found: list[Found], question: str | None) -> list[Found]:
    """Best first for a question; without one, newest first, as the store returned them."""
    if question is not None:
        return sorted(found, key=lambda x: (-x.score, x.id))
    return sorted(found, key=_newest_first, reverse=True)


def _newest_first(found: Found) -> tuple[datetime, str]:
    """Sort key (reversed) of a browse: memories by when they happened (passages come only with
    a query, so never here; they would sort as of their document's last update)."""
    when = found.record.occurred_at if isinstance(found, Hit) else found.passage.updated_at
    return when, found.id


def _rerank(
    rescore: Rescore, query: str, ranked: list[Found], relevance: dict[str, float], wanted: int
) -> list[Found]:
    """Re-score the head of the ranking with the reranker: its relevance replaces ours, the
    dampers (recency, importance, time) stay. The rest keeps its order below the head. A
    reranker that failed leaves the ranking as it was."""
    depth = min(max(2 * wanted, 20), 100)  # enough head-room to promote from
    head, tail = ranked[:depth], ranked[depth:]
    scores = rescore(query, [r.text for r in head])
    if scores is None:
        return ranked
    rescored = [
        replace(r, score=round(r.score / max(relevance[r.id], 1e-9) * new, 6))
        for r, new in zip(head, scores, strict=True)
    ]
    rescored.sort(key=lambda x: (-x.score, x.id))
    floor = min((r.score for r in rescored), default=0.0)
    # what was not reranked stays below what was, in its own order
    return rescored + [replace(r, score=min(r.score, floor)) for r in tail]


def _fold(ranked: list[Found]) -> list[Found]:
    """`fold_summaries` over the memories of a blended list; passages keep their places."""
    kept = {h.id: h for h in fold_summaries([r for r in ranked if isinstance(r, Hit)])}
    return [kept[r.id] if isinstance(r, Hit) else r for r in ranked if not isinstance(r, Hit) or r.id in kept]


def _newer_first(ranked: list[Found], embed: Embed | None, query: Vector | None) -> list[Found]:
    """`newer_first`: the head's statements (`compared`, none for most searches) compared by
    their own vectors (``embed``) with each other and with the question (``query``: the
    question's vector by the same model). A model that failed leaves the ranking as it was."""
    statements = compared(ranked)
    vectors = embed(statements) if statements and embed is not None else None
    if vectors is None:
        return ranked
    own = {h.id: v for h, v in zip(statements, vectors, strict=True)}
    asked = None if query is None else (lambda h: float(np.dot(query, own[h.id])))
    return newer_first(ranked, statements, lambda a, b: float(np.dot(own[a.id], own[b.id])), asked)


# --- Scoring -------------------------------------------------------------------------------------
# How search ranks what the store found. The score of a candidate is::
#
#     relevance  = (1 - w_lex) * max(similarity, 0) + w_lex * lexical * agreement   (query given)
#                = 1                                                                (no query)
#     agreement  = 0 .. 1 as similarity rises from NO_MEANING to MEANING (1 with no similarity)
#     recency    = exp(-days_ago / tau)                                       (tau = 90 days)
#     score      = relevance * ((1 - w_rec) + w_rec * recency)
#                            * ((1 - w_imp) + w_imp * importance)
#                            * (1 + time_boost  if the query names a time the record's span
#                                               overlaps, see `recall.rules.timehints`; else 1)
#                            * (1 + speaker_boost  if the query names the record's speaker as a
#                                                  word ("what does Caroline ..."); else 1)
#
# Recency and importance are *multiplicative* dampers, not additive bonuses: an important or fresh
# memory that does not match the query cannot outrank one that does, yet between two equally
# relevant memories the fresher and more important one wins. ``days_ago`` is measured from the end
# of a record's span to ``as_of`` (a summary of last week is as recent as last week's end), never
# negative.
#
# The words count as far as the meaning agrees (``agreement``): the lexical score is scaled to the
# best lexical hit (`recall.rules.fusion`), so a turn that shares one everyday word with the
# question scored the whole lexical share when nothing matched better ("Where do I work out?" and
# "Can you explain how compound interest works with an example?", cosine -0.04), and with last
# week's recency it came before the statements asked about, which share no word with it. A hit the
# question's vector finds unrelated (cosine under `NO_MEANING`) keeps `UNAGREED` of its word match,
# one at `MEANING` or more all of it, as before; a search without vectors keeps its words in full.
# Chosen on halves A-H of benchmarks/data/knowledge_update and LoCoMo's half A (docs/decisions.md).

#: The cosine of a hit with the question under which its word match counts least (`UNAGREED`).
NO_MEANING = 0.15
#: The cosine from which a hit's word match counts in full.
MEANING = 0.35
#: The share of its word match a hit keeps however far its meaning: a rare word (a name) in a
#: long summary is found by the word alone, the summary's vector diluted by all else it says.
UNAGREED = 0.3


@dataclass(frozen=True, slots=True)
class RankingWeights:
    recency_tau_days: float = 90.0
    recency_weight: float = 0.1
    importance_weight: float = 0.2
    lexical_weight: float = 0.4
    time_boost: float = 0.3
    time_hints: bool = True
    #: The lift of a memory said by someone the query names ("what does Caroline ...").
    speaker_boost: float = 0.4
    #: Blended search (`SearchQuery.sources`): a memory's score is multiplied by
    #: ``private_weight``, a passage's relevance by ``shared_weight``. A passage is not damped by
    #: age or importance (a published document does not fade; its validity dates retire it), so
    #: 0.9 puts a passage level with a fresh memory of middling importance that matches as well.
    private_weight: float = 1.0
    shared_weight: float = 0.9

    def with_overrides(self, overrides: Mapping[str, float | bool]) -> RankingWeights:
        """These weights with a search's own (`SearchQuery.ranking`, by field name) in place of
        the defaults."""
        return replace(self, **cast("dict[str, Any]", overrides)) if overrides else self


@dataclass(frozen=True, slots=True)
class Scored:
    score: float
    relevance: float
    recency: float


def days_ago(record: MemoryRecord, as_of: datetime) -> float:
    _, end = record.span
    return max((as_of - end).total_seconds() / 86_400.0, 0.0)


def recency(record: MemoryRecord, as_of: datetime, tau_days: float) -> float:
    return math.exp(-days_ago(record, as_of) / tau_days)


def relevance(similarity: float | None, lexical: float | None, lexical_weight: float) -> float:
    """Blend vector and lexical evidence into [0, 1]; a missing signal counts as 0, and the
    lexical one as far as the meaning agrees (`agreement`)."""
    sim = max(similarity or 0.0, 0.0)
    lex = min(max(lexical or 0.0, 0.0), 1.0) * agreement(similarity)
    return (1.0 - lexical_weight) * sim + lexical_weight * lex


def agreement(similarity: float | None) -> float:
    """How much of a hit's word match counts, by its cosine with the question: `UNAGREED` under
    `NO_MEANING`, all from `MEANING`, linear between; all when the search had no vector."""
    if similarity is None:
        return 1.0
    agreed = min(max((similarity - NO_MEANING) / (MEANING - NO_MEANING), 0.0), 1.0)
    return UNAGREED + (1.0 - UNAGREED) * agreed


def score(
    record: MemoryRecord,
    as_of: datetime,
    weights: RankingWeights,
    similarity: float | None,
    lexical: float | None,
    has_query: bool,
    hints: Sequence[TimeHint] = (),
    named_speakers: frozenset[str] = frozenset(),
) -> Scored:
    rel = relevance(similarity, lexical, weights.lexical_weight) if has_query else 1.0
    rec = recency(record, as_of, weights.recency_tau_days)
    damp_rec = (1.0 - weights.recency_weight) + weights.recency_weight * rec
    damp_imp = (1.0 - weights.importance_weight) + weights.importance_weight * record.importance
    in_time = any(hint.overlaps(*record.span) for hint in hints)
    boost = 1.0 + weights.time_boost if in_time else 1.0
    if record.speaker is not None and record.speaker.casefold() in named_speakers:
        boost *= 1.0 + weights.speaker_boost
    return Scored(score=rel * damp_rec * damp_imp * boost, relevance=rel, recency=rec)


# --- Validity ------------------------------------------------------------------------------------
# What holds now comes first: how a ranking treats memories a newer one superseded.
#
# A superseded memory is not wrong, only past ("I live in Berlin" until the June move): search
# keeps it, so "where did she live in April" finds it, but a question about the present must meet
# the newer value first. So a memory superseded by the search's ``as_of`` (`MemoryRecord.superseded_at`)
# has its score damped (`SUPERSEDED_FACTOR`), and when the memory that superseded it is in the same
# ranking it comes right after that memory, whatever their scores: "Berlin" scored 0.43 against
# "moved to Lisbon" 0.16 on words alone, and words are not what decides which one holds.

#: How much of its score a superseded memory keeps: low enough that a current memory of similar
#: relevance outranks it, high enough that it is still found when asked about.
SUPERSEDED_FACTOR = 0.5


def after_superseders(ranked: list[Found]) -> list[Found]:
    """``ranked`` with every non-current memory moved right after the memory that superseded it,
    when that one is in the list (a chain Berlin → Lisbon → Porto reads Porto, Lisbon, Berlin).

    The memory that superseded another takes the better of their two places: the older one was
    found for what the question asks ("I live in Berlin" matches "where do I live?" word for
    word), and the newer one is what that answer is now ("finally unpacked the last boxes in our
    new flat in Lisbon" matches it by no word). That place is the older one's score before its
    damping (`SUPERSEDED_FACTOR`): what it was found for, not what it is worth now, so an
    unrelated memory found between the two does not come first. A moved memory's score is capped
    at its superseder's, so scores still read best first."""
    present = {r.id: r for r in ranked}
    waiting: dict[str, list[Found]] = {}
    for r in ranked:
        newer = r.record.superseded_by if isinstance(r, Hit) and not r.current else None
        if newer is not None and newer in present and newer != r.id:
            waiting.setdefault(newer, []).append(r)
    if not waiting:
        return ranked
    moved = {id(r) for rs in waiting.values() for r in rs}

    def best(found: Found, seen: frozenset[str] = frozenset()) -> float:
        """The best score of ``found`` and of everything it superseded (undamped), however far down."""
        older = [best(o, seen | {found.id}) for o in waiting.get(found.id, []) if o.id not in seen]
        own = found.score / SUPERSEDED_FACTOR if id(found) in moved else found.score
        return max([own, *older])

    lifted = [r if id(r) in moved else replace(r, score=best(r)) for r in ranked]
    order = sorted((r for r in lifted if id(r) not in moved), key=lambda x: -x.score)
    by_old = {id(r): r for r in ranked}
    out: list[Found] = []

    def emit(found: Found) -> None:
        out.append(found)
        for older in waiting.pop(found.id, []):
            original = by_old[id(older)]
            # damped again, and a chain's middle keeps what it replaced's place
            capped = min(best(original) * SUPERSEDED_FACTOR, found.score)
            emit(replace(original, score=capped) if isinstance(original, Hit) else original)

    for r in order:
        emit(r)
    # A cycle (never made by the writer, but a store is data) leaves its members unplaced: keep them.
    for rs in waiting.values():
        out.extend(rs)
    return out


# --- Folding -------------------------------------------------------------------------------------
# Folding summaries into the hits they repeat, so one fact fills one place of a ranking.
#
# Searched with ``grain: all``, a fact said today comes back up to six times: the working memory
# that holds it, and every summary up the cascade that quotes it (daily, weekly, ...). Each is a
# true hit, and together they push every other fact out of the first results. So a summary whose
# descendant is also in the ranking (a record it was made from, directly or through summaries in
# between) is folded into that descendant: the descendant takes the better of the two places, and
# says in ``also_in`` which summaries (grain, period, id) hold it too.
#
# Siblings are never folded into each other: two records of one day are two facts, even though the
# same daily summary holds both. A summary with two descendants in the ranking is folded into the
# better-placed one. Summaries are folded finest grain first, so a weekly summary over a daily one
# over a record ends as one hit, the record, naming both. Descendants are known through the
# ``source_ids`` of the hits themselves: a summary whose child summary is not among the hits is
# linked only to the children it names.

_FINEST_FIRST = {grain: i for i, grain in enumerate(Grain)}


def _descendants(hit: Hit, by_id: dict[str, Hit]) -> set[str]:
    """The ids of ``hit``'s descendants among the hits, following ``source_ids`` through them."""
    found: set[str] = set()
    todo = list(hit.record.source_ids)
    while todo:
        child = todo.pop()
        if child in found or child not in by_id:
            continue
        found.add(child)
        todo.extend(by_id[child].record.source_ids)
    return found


def fold_summaries(ranked: Sequence[Hit]) -> list[Hit]:
    """``ranked`` (best first) with each summary that repeats another hit folded into it."""
    by_id = {h.id: h for h in ranked}
    place = {h.id: i for i, h in enumerate(ranked)}
    into: dict[str, str] = {}  # folded summary id -> the hit that now holds it
    summaries = [h for h in ranked if h.record.grain != Grain.WORKING]
    for summary in sorted(summaries, key=lambda h: (_FINEST_FIRST[h.record.grain], place[h.id])):
        kept = [d for d in _descendants(summary, by_id) if d not in into]
        if kept:
            into[summary.id] = min(kept, key=place.__getitem__)
    if not into:
        return list(ranked)
    # Finest first, a holder is never folded after it was chosen: every holder stays.
    held: dict[str, list[Hit]] = {}
    for folded, holder in into.items():
        held.setdefault(holder, []).append(by_id[folded])
    out: list[tuple[int, Hit]] = []
    for hit in ranked:
        if hit.id not in into:
            extra = sorted(held.get(hit.id, ()), key=lambda h: (_FINEST_FIRST[h.record.grain], h.id))
            also = tuple(AlsoIn(grain=h.record.grain, period=h.record.time_key, id=h.id) for h in extra)
            best = min([place[hit.id], *(place[h.id] for h in extra)])
            out.append((best, replace(hit, also_in=hit.also_in + also) if also else hit))
    out.sort(key=lambda pair: pair[0])
    return [hit for _, hit in out]
