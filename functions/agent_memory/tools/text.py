"""Tool results as text an LLM reads well: one memory a line, each prefixed with its date and grain.

``[2026-11-20 · working] Alice moved the launch to March 3. (id mem_...)``: the date first, so the
model can reason about time without parsing JSON; the grain, so it knows a weekly summary from a
raw message; the id last, so it can pass it to ``forget``.

A passage of the tenant's shared knowledge is labelled with its citation instead of a date, the
way the service labels it in a context block: ``[ADR-12 > Consequences, version v3 · shared] ...
(doc adr-12)``, so the model can say where it read it ("per ADR-12, Consequences"). In a search
of both sources every line says its source (``· private`` or ``· shared``); a search of memory
alone reads as it always did.

An experience (a success, failure, insight or pattern) also says its kind and how sure the agent
is of it, on what evidence: ``[2026-11-20 · working · pattern · confidence 0.82 (5 confirmed, 1
refuted)] ...``, so the model can weigh a lesson before acting on it.

A memory a newer one superseded says so and since when: ``[2026-03-10 · working · no longer
holds since 2026-06-12, see mem_...] I live in Berlin.``, so the model answers with what holds
now and can still say what held before.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from agent_memory.contract.v1 import ContextResponse, PassageRef, SearchResult
from agent_memory.contract.v1_experience import ExperienceOut
from agent_memory.knowledge.rules.passages import CITATION_SEPARATOR

#: What a search covers when it names no sources (the contract's default).
MEMORY_ONLY: frozenset[str] = frozenset({"private"})


def date_label(time_key: str | None, occurred_at: datetime) -> str:
    """A summary's period (``2026-W47``), else the day it happened (``2026-11-20``)."""
    return time_key or occurred_at.date().isoformat()


def memory_line(
    grain: str,
    label: str,
    content: str,
    memory_id: str | None = None,
    *,
    source: str | None = None,
    detail: str | None = None,
) -> str:
    body = content.strip().replace("\n", "\n  ")  # continuation lines stay inside the item
    suffix = f" (id {memory_id})" if memory_id else ""
    tag = "".join(f" · {part}" for part in (source, detail) if part)
    return f"[{label} · {grain}{tag}] {body}{suffix}"


def experience_label(kind: str, confidence: float, confirmations: int = 0, refutations: int = 0) -> str:
    """``pattern · confidence 0.82 (5 confirmed, 1 refuted)``: the evidence only when there is some."""
    evidence = [
        f"{count} {word}" for count, word in ((confirmations, "confirmed"), (refutations, "refuted")) if count
    ]
    return f"{kind} · confidence {confidence:.2f}" + (f" ({', '.join(evidence)})" if evidence else "")


def _experience_detail(result: SearchResult, experience: ExperienceOut | None) -> str | None:
    if experience is None:
        return None
    kind = result.kind.value if result.kind is not None else "experience"
    return experience_label(kind, experience.confidence, experience.confirmations, experience.refutations)


def _validity_detail(result: SearchResult) -> str | None:
    """``no longer holds since 2026-06-12, see mem_...`` for a superseded memory."""
    if result.current or result.superseded_by is None:
        return None
    since = f" since {result.valid_to.date().isoformat()}" if result.valid_to is not None else ""
    return f"no longer holds{since}, see {result.superseded_by}"


def citation(document: PassageRef) -> str:
    """``ADR-12 > Consequences, version v3``: the document's title, the headings above the
    passage and the version, as the model would cite them."""
    return f"{CITATION_SEPARATOR.join([document.title, *document.heading_path])}, version {document.version}"


def passage_line(result: SearchResult) -> str:
    """A shared passage: its citation where a memory has its date, and its document last (where
    a memory has its id: a passage cannot be forgotten, only its document deleted)."""
    body = result.content.strip().replace("\n", "\n  ")
    document = result.document
    if document is None:  # not the contract's shape, but still worth reading
        return f"[shared] {body} (id {result.id})"
    where = f"doc {document.doc_id}" + (f", {document.source_uri}" if document.source_uri else "")
    return f"[{citation(document)} · shared] {body} ({where})"


def result_lines(result: SearchResult, *, tagged: bool) -> list[str]:
    """One result's line (and the summaries folded into a memory, on the next)."""
    if result.source_tag == "shared":
        return [passage_line(result)]
    grain = str(result.grain)
    occurred_at = result.occurred_at or datetime.min
    lines = [
        memory_line(
            grain,
            date_label(result.time_key, occurred_at),
            result.content,
            result.id,
            source="private" if tagged else None,
            detail=_validity_detail(result) or _experience_detail(result, result.experience),
        )
    ]
    if result.also_in:  # summaries folded into this hit: where else the model may read it, in context
        lines.append("  also in: " + ", ".join(f"{a.grain} {a.period or a.id}" for a in result.also_in))
    return lines


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def search_results_text(
    results: Sequence[SearchResult], window: str, sources: Collection[str] = MEMORY_ONLY
) -> str:
    """The results under one line that says what was searched: memory (``window``: the grain and
    the days), shared knowledge, or both."""
    shared = "shared" in sources
    private = "private" in sources or not sources
    if not shared:
        if not results:
            return f"No memories found ({window})."
        head = f"{_plural(len(results), 'memory', 'memories')} ({window}), best match first:"
    elif not private:
        return knowledge_results_text(results)
    else:
        if not results:
            return f"Nothing found in memory ({window}) or in shared knowledge."
        head = f"{_plural(len(results), 'result', 'results')} from memory ({window}) and shared knowledge, "
        head += "best match first:"
    lines = [head]
    for r in results:
        lines.extend(result_lines(r, tagged=shared))
    return "\n".join(lines)


def knowledge_results_text(
    results: Sequence[SearchResult], query: str | None = None, tags: Sequence[str] = ()
) -> str:
    """Passages of shared knowledge, each under its citation."""
    about = f" for {query!r}" if query else ""
    if tags:
        about += f" (tags {', '.join(tags)})"
    if not results:
        return f"No shared knowledge found{about}."
    head = f"{_plural(len(results), 'passage', 'passages')} of shared knowledge{about}, best match first:"
    return "\n".join([head, *(line for r in results for line in result_lines(r, tagged=True))])


def window_text(grain: str, min_days_ago: float, max_days_ago: float | None) -> str:
    def days(value: float) -> str:
        return f"{value:g}"

    span = (
        f"{days(min_days_ago)} to {days(max_days_ago)} days ago"
        if max_days_ago is not None
        else ("any time" if min_days_ago == 0 else f"at least {days(min_days_ago)} days ago")
    )
    return f"grain {grain}, {span}"


def filters_text(
    kinds: Sequence[str] = (), min_confidence: float | None = None, patterns_first: bool | None = None
) -> str:
    """What narrowed or ordered a search besides its window, to follow the window's text:
    ``, kinds pattern, confidence at least 0.7, patterns first`` (empty when nothing did)."""
    parts = []
    if kinds:
        parts.append("kinds " + ", ".join(str(k) for k in kinds))
    if min_confidence is not None:
        parts.append(f"confidence at least {min_confidence:g}")
    if patterns_first:
        parts.append("patterns first")
    return "".join(f", {part}" for part in parts)


def context_text(query: str, response: ContextResponse) -> str:
    """The service's context block under one line that says what it is and what it left out, so
    the model knows whether asking for a larger budget could tell it more. Shared passages come
    first in the block (the frame), then memories oldest first; the line counts each."""
    if not response.items:
        return f"No memories relevant to {query!r}."
    shared = sum(1 for item in response.items if item.source_tag == "shared")
    memories = len(response.items) - shared
    held = f"{_plural(memories, 'memory', 'memories')}, oldest first"
    if shared:
        passages = _plural(shared, "passage", "passages") + " of shared knowledge"
        held = f"{passages}, then {held}" if memories else passages
    head = f"Context for {query!r}: {held} ({response.tokens} of {response.token_budget} tokens"
    head += f"; {response.dropped} less relevant left out)" if response.dropped else ")"
    return f"{head}:\n{response.context}"
