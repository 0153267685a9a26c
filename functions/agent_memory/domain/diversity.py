"""Spreading the head of a ranking over sessions, so that ten hits are not ten neighbours of one turn.

A question whose answer needs turns from several days ("what did Caroline do after the parade?")
is served badly by a ranking where one session's turns, each a little like the question, fill
the list: the second session's turn sits at rank 14. The fix is the one search engines use for
near-duplicate results (maximal marginal relevance, with the session as the unit of redundancy):
the head of the list is rebuilt greedily, and a hit's score counts for less by a factor
``(1 - spread)`` for every hit of the same session already above it.

A session is the record's ``conversation_id`` (one per session when the writer sends one), else
its UTC day. ``spread = 0`` leaves the ranking exactly as it was; the default is chosen on one
half of LoCoMo and reported on the other (docs/decisions.md, "Spreading the head over sessions").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agent_memory.domain.recall import Hit

#: How far down the ranking the spread reaches: the results a caller can ask for (25) and no
#: further, so the cost stays bounded (quadratic in this, not in the candidates).
SPREAD_DEPTH = 25


def session_of(hit: Hit) -> str:
    record = hit.record
    return record.conversation_id or record.occurred_at.date().isoformat()


def spread_over_sessions(ranked: Sequence[Hit], spread: float, depth: int = SPREAD_DEPTH) -> list[Hit]:
    """``ranked`` (best first) with its first ``depth`` places re-picked: each time, the hit with
    the best ``score * (1 - spread) ** (hits of its session already picked)``. Scores are kept
    as they were (the order says what the spread did); the rest follows in its own order."""
    if spread <= 0 or len(ranked) < 2:
        return list(ranked)
    pool, rest = list(ranked[: depth * 2]), list(ranked[depth * 2 :])
    picked: list[Hit] = []
    seen: Counter[str] = Counter()
    keep = 1.0 - spread
    while pool and len(picked) < depth:
        best = max(range(len(pool)), key=lambda i: (pool[i].score * keep ** seen[session_of(pool[i])], -i))
        hit = pool.pop(best)
        seen[session_of(hit)] += 1
        picked.append(hit)
    return picked + pool + rest
