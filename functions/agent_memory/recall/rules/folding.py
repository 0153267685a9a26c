"""Folding summaries into the hits they repeat, so one fact fills one place of a ranking.

Searched with ``grain: all``, a fact said today comes back up to six times: the working memory
that holds it, and every summary up the cascade that quotes it (daily, weekly, ...). Each is a
true hit, and together they push every other fact out of the first results. So a summary whose
descendant is also in the ranking (a record it was made from, directly or through summaries in
between) is folded into that descendant: the descendant takes the better of the two places, and
says in ``also_in`` which summaries (grain, period, id) hold it too.

Siblings are never folded into each other: two records of one day are two facts, even though the
same daily summary holds both. A summary with two descendants in the ranking is folded into the
better-placed one. Summaries are folded finest grain first, so a weekly summary over a daily one
over a record ends as one hit, the record, naming both. Descendants are known through the
``source_ids`` of the hits themselves: a summary whose child summary is not among the hits is
linked only to the children it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agent_memory.model.grains import Grain
from agent_memory.model.queries import AlsoIn, Hit

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
