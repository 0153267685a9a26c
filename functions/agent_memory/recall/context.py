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

With both sources (the default), the budget is split: ``shared_share`` of it (40% unless asked
otherwise) is kept for the tenant's shared knowledge and the rest for the agent's memory, each
packed by the rule above from its own results; what one source leaves unused is then offered to
the other, so a budget is never left empty while relevant lines wait. Shared passages come first
in the block (``[ADR-12 > Consequences · shared] ...``: the frame), then memories in time order.
The response says, per source, its budget, what it used, and what it cut (`SourceBudget`).

Tokens are counted with `estimate_tokens` (documented in docs/api.md): a conservative estimate
that needs no model-specific tokenizer, so the same budget holds whichever LLM reads the block.
"""

from __future__ import annotations

import math
from dataclasses import replace

from agent_memory.model.grains import Grain
from agent_memory.model.limits import MAX_RESULTS
from agent_memory.model.queries import (
    Context,
    ContextLine,
    ContextQuery,
    Found,
    Hit,
    SearchQuery,
    SourceBudget,
    SourceTag,
)
from agent_memory.model.records import MemoryKind
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


def context_line(hit: Found) -> str:
    """``[date · grain] content``: the date a working memory happened, or a summary's period;
    ``[title > heading · shared] text`` for a passage of shared knowledge."""
    if not isinstance(hit, Hit):
        return f"[{hit.passage.citation} · shared] {hit.passage.text.strip()}"
    record = hit.record
    label = record.time_key or record.occurred_at.date().isoformat()
    if record.experience is not None:  # what it is and how sure: an agent weighs it by that
        e = record.experience
        return (
            f"[{label} · {record.kind.value} · confidence {e.confidence:.2f}, "
            f"{e.confirmations} confirmed, {e.refutations} refuted] {record.content.strip()}"
        )
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


class _Pack:
    """One source's lines, packed in relevance order into what budget it is given."""

    def __init__(self, source: SourceTag, found: list[Found], budget: int) -> None:
        self.source = source
        self.found = found
        self.budget = budget
        self.left = budget
        self.lines: list[ContextLine] = []
        self.truncated = False
        self.done = False

    def fill(self, *, cut: bool) -> None:
        """Take whole lines in relevance order until one does not fit; with ``cut``, that one is
        then cut to what is left (if enough is left) and packing of this source ends. A less
        relevant line never takes a more relevant one's place."""
        while not self.done and len(self.lines) < len(self.found):
            hit = self.found[len(self.lines)]
            line = context_line(hit)
            tokens = estimate_tokens(line) + 1  # + the newline that joins it
            if tokens <= self.left:
                self.lines.append(ContextLine(hit, line, tokens - 1))
                self.left -= tokens
                continue
            if not cut:
                return
            if self.left - 1 >= MIN_TAIL_TOKENS and (short := _cut(line, self.left - 1)):
                cost = estimate_tokens(short)
                self.lines.append(ContextLine(hit, short, cost))
                self.left -= cost + 1
                self.truncated = True
            self.done = True

    def wants_more(self) -> bool:
        """Whether more budget could add to it: it has results left."""
        return len(self.lines) < len(self.found)

    def grant(self, tokens: int) -> None:
        """More budget: what the other source cannot use."""
        self.budget += tokens
        self.left += tokens

    def summary(self) -> SourceBudget:
        return SourceBudget(
            source=self.source,
            budget=self.budget,
            tokens=sum(p.tokens for p in self.lines),
            lines=len(self.lines),
            dropped=len(self.found) - len(self.lines),
            truncated=self.truncated,
        )


class ContextService:
    """Search, then pack. Depends on the search use case, not on the store: ranking stays in one place."""

    def __init__(self, search: Searcher) -> None:
        self._search = search

    def context(self, tenant_id: str, agent_id: str, request: ContextQuery) -> Context:
        # as many hits as a search gives: the budget, not a count, decides how many fit
        sources = request.search.sources
        found = self._search.search(tenant_id, agent_id, replace(request.search, max_results=MAX_RESULTS))
        budget = request.token_budget
        if len(sources) == 2:
            shared_budget = math.floor(budget * request.shared_share)
        else:
            shared_budget = budget if "shared" in sources else 0
        packs = {
            "shared": _Pack("shared", [f for f in found if not isinstance(f, Hit)], shared_budget),
            "private": _Pack("private", [f for f in found if isinstance(f, Hit)], budget - shared_budget),
        }
        chosen = [packs[s] for s in ("shared", "private") if s in sources]
        for pack in chosen:  # whole lines first, each source within its share
            pack.fill(cut=False)
        if len(chosen) == 2:  # what one cannot use, the other may take (once each way)
            for giver, taker in ((chosen[0], chosen[1]), (chosen[1], chosen[0])):
                if giver.left > 0 and taker.wants_more():
                    if giver.wants_more():  # it stopped at a line too long: keep what a cut may use
                        continue
                    spare, giver.left = giver.left, 0
                    giver.budget -= spare
                    taker.grant(spare)
                    taker.fill(cut=False)
        for pack in chosen:  # then the next line of each, cut to what is left
            pack.fill(cut=True)
        shared = packs["shared"].lines if "shared" in sources else []
        mine = packs["private"].lines if "private" in sources else []
        # patterns asked first lead the block in their ranking; the rest reads in time order
        first = [p for p in mine if _leads(request.search, p.hit)]
        private = sorted(
            (p for p in mine if not _leads(request.search, p.hit)),
            key=lambda p: (p.hit.record.occurred_at, _GRAIN_ORDER[p.hit.record.grain], p.hit.id),  # type: ignore[union-attr]
        )
        packed = [*first, *shared, *private]
        budgets = [p.summary() for p in chosen]
        return Context(
            text="\n".join(p.line for p in packed),
            tokens=sum(p.tokens for p in packed) + max(len(packed) - 1, 0),
            token_budget=request.token_budget,
            lines=packed,
            dropped=sum(b.dropped for b in budgets),
            sources=budgets,
        )


def _leads(search: SearchQuery, found: Found) -> bool:
    """Whether a line is a pattern the search put first (`SearchService._patterns_first`)."""
    if not search.patterns_first or not isinstance(found, Hit) or found.record.experience is None:
        return False
    return (
        found.record.kind is MemoryKind.PATTERN and found.record.experience.confidence >= search.pattern_floor
    )


#: Coarser grains first within one instant: a summary reads as the frame for the detail after it.
_GRAIN_ORDER = {g: -i for i, g in enumerate(Grain)}
