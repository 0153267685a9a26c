"""The daily cascade's second look at supersession: pairs a model confirms, undoes or adds.

Write time decides without a model (`supersession.rules.claims`: claims, a conflict test on the values),
so it both over-links (two true facts that only look like a change) and under-links (an update
worded in a way no pattern knows). The daily summary already calls the summary model once a day per
agent; before it folds the day, the same model reads the day's pairs:

* every link made at write time into the day (``confirm``): does the newer memory replace the
  older one? "no" undoes the link;
* for memories of the day without one, the same holder's earlier memories nearest in words
  (``candidate``): "yes" adds the link write time missed.

One call per day, at most `MAX_PAIRS` pairs, the links first. A summarizer without a model answers
nothing, and every write-time decision stands. An answer that names no pair, or a pair twice,
decides nothing for it. Pure (no I/O): `supersession.review` reads and marks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from agent_memory.model.records import MemoryRecord, RecordValidity

#: The most pairs one day's review reads: links to confirm first, then candidate misses.
MAX_PAIRS = 24
#: Characters of each memory the model reads.
MAX_TEXT = 400
#: The period a review's request names (the prompts read its children as pairs, not records).
PAIRS = "pairs"

_VERDICT = re.compile(r"^\s*\[?(\d{1,3})\]?\s*[:.)\-]?\s*(yes|no)\b", re.IGNORECASE)


class PairKind(StrEnum):
    CONFIRM = "confirm"  # linked at write time
    CANDIDATE = "candidate"  # not linked: a miss if the model says yes


@dataclass(frozen=True, slots=True)
class ReviewPair:
    """An older and a newer memory of one holder, and whether write time linked them."""

    older: MemoryRecord
    newer: MemoryRecord
    kind: PairKind


def pair_text(pair: ReviewPair) -> str:
    """How one pair reads to the model: each memory with its date, older first."""
    older = pair.older.content.strip()[:MAX_TEXT]
    newer = pair.newer.content.strip()[:MAX_TEXT]
    return (
        f"OLDER ({pair.older.occurred_at.date().isoformat()}): {older}\n"
        f"NEWER ({pair.newer.occurred_at.date().isoformat()}): {newer}"
    )


def verdicts(answer: str, count: int) -> dict[int, bool]:
    """Pair number (1-based) -> whether the newer memory replaces the older, from lines such as
    ``"3: yes"``; a pair answered twice, or outside ``1..count``, is left undecided."""
    seen: dict[int, list[bool]] = {}
    for line in answer.splitlines():
        match = _VERDICT.match(line)
        if match is None:
            continue
        number = int(match.group(1))
        if 1 <= number <= count:
            seen.setdefault(number, []).append(match.group(2).lower() == "yes")
    return {n: said[0] for n, said in seen.items() if len(set(said)) == 1}


def unlinked(older: MemoryRecord, newer: MemoryRecord) -> tuple[RecordValidity, RecordValidity]:
    """Both memories' fields once ``newer`` no longer supersedes ``older`` (their other links
    kept): a memory linked to nothing else has no validity span."""
    older_by, older_to = older.superseded_by, older.valid_to
    if older_by == newer.id:
        older_by, older_to = None, None
    older_fields = RecordValidity(
        valid_from=older.valid_from if (older.supersedes or older_by) else None,
        valid_to=older_to,
        supersedes=tuple(older.supersedes),
        superseded_by=older_by,
    )
    kept = tuple(i for i in newer.supersedes if i != older.id)
    newer_fields = RecordValidity(
        valid_from=newer.valid_from if (kept or newer.superseded_by) else None,
        valid_to=newer.valid_to,
        supersedes=kept,
        superseded_by=newer.superseded_by,
    )
    return older_fields, newer_fields


def linked(older: MemoryRecord, newer: MemoryRecord) -> tuple[RecordValidity, RecordValidity] | None:
    """Both memories' fields once ``newer`` supersedes ``older``; None when ``older`` is already
    superseded by another memory (its timeline is write time's, not this pair's to rewrite)."""
    if older.superseded_by is not None:
        return None
    older_fields = RecordValidity(
        valid_from=older.valid_from or older.occurred_at,
        valid_to=newer.occurred_at,
        supersedes=tuple(older.supersedes),
        superseded_by=newer.id,
    )
    newer_fields = RecordValidity(
        valid_from=newer.valid_from or newer.occurred_at,
        valid_to=newer.valid_to,
        supersedes=(*newer.supersedes, older.id),
        superseded_by=newer.superseded_by,
    )
    return older_fields, newer_fields


def choose(confirm: Sequence[ReviewPair], candidates: Sequence[ReviewPair]) -> list[ReviewPair]:
    """The pairs one review reads: every link first, then candidates, `MAX_PAIRS` in all."""
    return [*confirm, *candidates][:MAX_PAIRS]
