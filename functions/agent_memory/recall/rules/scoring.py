"""How search ranks what the store found.

The score of a candidate is::

    relevance  = (1 - w_lex) * max(similarity, 0) + w_lex * lexical        (query given)
               = 1                                                          (no query)
    recency    = exp(-days_ago / tau)                                       (tau = 90 days)
    score      = relevance * ((1 - w_rec) + w_rec * recency)
                           * ((1 - w_imp) + w_imp * importance)
                           * (1 + time_boost  if the query names a time the record's span
                                              overlaps, see `recall.rules.timehints`; else 1)
                           * (1 + speaker_boost  if the query names the record's speaker as a
                                                 word ("what does Caroline ..."); else 1)

Recency and importance are *multiplicative* dampers, not additive bonuses: an important or fresh
memory that does not match the query cannot outrank one that does, yet between two equally
relevant memories the fresher and more important one wins. ``days_ago`` is measured from the end
of a record's span to ``as_of`` (a summary of last week is as recent as last week's end), never
negative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from agent_memory.model.records import MemoryRecord
from agent_memory.recall.rules.timehints import TimeHint


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
    """Blend vector and lexical evidence into [0, 1]; a missing signal counts as 0."""
    sim = max(similarity or 0.0, 0.0)
    lex = min(max(lexical or 0.0, 0.0), 1.0)
    return (1.0 - lexical_weight) * sim + lexical_weight * lex


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


def display_text(record: MemoryRecord) -> str:
    """The date-prefixed text an LLM reads: ``[2026-11-20] Alice: ...`` or ``[2026-W47] ...``."""
    label = record.time_key or record.occurred_at.date().isoformat()
    speaker = f"{record.speaker}: " if record.speaker else ""
    return f"[{label}] {speaker}{record.content}"
