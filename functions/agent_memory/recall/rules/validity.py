"""What holds now comes first: how a ranking treats memories a newer one superseded.

A superseded memory is not wrong, only past ("I live in Berlin" until the June move): search
keeps it, so "where did she live in April" finds it, but a question about the present must meet
the newer value first. So a memory superseded by the search's ``as_of`` (`MemoryRecord.superseded_at`)
has its score damped (`SUPERSEDED_FACTOR`), and when the memory that superseded it is in the same
ranking it comes right after that memory, whatever their scores: "Berlin" scored 0.43 against
"moved to Lisbon" 0.16 on words alone, and words are not what decides which one holds.

Pure (no I/O): search applies it after scoring.
"""

from __future__ import annotations

from dataclasses import replace

from agent_memory.model.queries import Found, Hit

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
