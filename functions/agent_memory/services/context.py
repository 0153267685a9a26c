"""Context: one block of text for an agent's prompt, the most relevant memories within a token budget.

Agents rarely want a ranked list; they want a paragraph to paste above the user's message. This
service runs the same search as `SearchService` (every grain blended, so a year-old fact can come
back as the line of a monthly summary that holds it), then packs lines into ``token_budget``:

* candidates are taken in relevance order; the first that does not fit is cut to what is left
  (when at least `MIN_TAIL_TOKENS` are left) and packing stops there, so a less relevant memory
  never takes the place of a more relevant one;
* the chosen lines are then laid out oldest first, each tagged with its date and grain
  (``[2026-11-20 · working] ...``, ``[2026-W47 · weekly] ...``), because a model reads a story
  in time order better than a relevance list.

Tokens are counted with `estimate_tokens` (documented in docs/api.md): a conservative estimate
that needs no model-specific tokenizer, so the same budget holds whichever LLM reads the block.
"""

from __future__ import annotations

import math
from dataclasses import replace

from agent_memory.domain.grains import Grain
from agent_memory.domain.limits import MAX_RESULTS
from agent_memory.domain.recall import Context, ContextLine, ContextQuery, Hit
from agent_memory.ports import Searcher

#: A cut line shorter than this is not worth its date tag: packing stops instead.
MIN_TAIL_TOKENS = 24
ELLIPSIS = " …"


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes in an LLM prompt, erring high.

    BPE tokenizers (GPT, Claude, Llama, Titan) spend about one token per four characters of
    English and about one per character of CJK or emoji. Counting ASCII at four characters a
    token and every other character as a token of its own, and never fewer tokens than 4/3 per
    word, stays at or above what those tokenizers report on ordinary text.
    """
    if not text:
        return 0
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    other = len(text) - ascii_chars
    words = len(text.split())
    return max(math.ceil(ascii_chars / 4 + other), math.ceil(words * 4 / 3))


def context_line(hit: Hit) -> str:
    """``[date · grain] content``: the date a working memory happened, or a summary's period."""
    record = hit.record
    label = record.time_key or record.occurred_at.date().isoformat()
    return f"[{label} · {record.grain.value}] {record.content.strip()}"


def _cut(line: str, budget: int) -> str:
    """The longest word-boundary prefix of ``line`` (with an ellipsis) within ``budget`` tokens."""
    words = line.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:  # binary search on the number of words kept
        mid = (lo + hi + 1) // 2
        if estimate_tokens(" ".join(words[:mid]) + ELLIPSIS) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + ELLIPSIS if lo else ""


class ContextService:
    """Search, then pack. Depends on the search use case, not on the store: ranking stays in one place."""

    def __init__(self, search: Searcher) -> None:
        self._search = search

    def context(self, tenant_id: str, agent_id: str, request: ContextQuery) -> Context:
        # as many hits as a search gives: the budget, not a count, decides how many fit
        found = self._search.search(tenant_id, agent_id, replace(request.search, max_results=MAX_RESULTS))
        packed: list[ContextLine] = []
        left = request.token_budget
        for hit in found:  # most relevant first
            line = context_line(hit)
            tokens = estimate_tokens(line) + 1  # + the newline that joins it
            if tokens > left:
                if left - 1 >= MIN_TAIL_TOKENS and (cut := _cut(line, left - 1)):
                    packed.append(ContextLine(hit, cut, estimate_tokens(cut)))
                break
            packed.append(ContextLine(hit, line, tokens - 1))
            left -= tokens
        packed.sort(key=lambda p: (p.hit.record.occurred_at, _GRAIN_ORDER[p.hit.record.grain], p.hit.id))
        return Context(
            text="\n".join(p.line for p in packed),
            tokens=sum(p.tokens for p in packed) + max(len(packed) - 1, 0),
            token_budget=request.token_budget,
            lines=packed,
            dropped=len(found) - len(packed),
        )


#: Coarser grains first within one instant: a summary reads as the frame for the detail after it.
_GRAIN_ORDER = {g: -i for i, g in enumerate(Grain)}
