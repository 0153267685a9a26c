"""Tool results as text an LLM reads well: one memory a line, each prefixed with its date and grain.

``[2026-11-20 · working] Alice moved the launch to March 3. (id mem_...)``: the date first, so the
model can reason about time without parsing JSON; the grain, so it knows a weekly summary from a
raw message; the id last, so it can pass it to ``forget``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agent_memory.contract.v1 import ContextResponse, SearchResult


def date_label(time_key: str | None, occurred_at: datetime) -> str:
    """A summary's period (``2026-W47``), else the day it happened (``2026-11-20``)."""
    return time_key or occurred_at.date().isoformat()


def memory_line(grain: str, label: str, content: str, memory_id: str | None = None) -> str:
    body = content.strip().replace("\n", "\n  ")  # continuation lines stay inside the item
    suffix = f" (id {memory_id})" if memory_id else ""
    return f"[{label} · {grain}] {body}{suffix}"


def search_results_text(results: Sequence[SearchResult], window: str) -> str:
    if not results:
        return f"No memories found ({window})."
    noun = "memory" if len(results) == 1 else "memories"
    lines = [f"{len(results)} {noun} ({window}), best match first:"]
    for r in results:
        lines.append(memory_line(r.grain, date_label(r.time_key, r.occurred_at), r.content, r.id))
        if r.also_in:  # summaries folded into this hit: where else the model may read it, in context
            lines.append("  also in: " + ", ".join(f"{a.grain} {a.period or a.id}" for a in r.also_in))
    return "\n".join(lines)


def window_text(grain: str, min_days_ago: float, max_days_ago: float | None) -> str:
    def days(value: float) -> str:
        return f"{value:g}"

    span = (
        f"{days(min_days_ago)} to {days(max_days_ago)} days ago"
        if max_days_ago is not None
        else ("any time" if min_days_ago == 0 else f"at least {days(min_days_ago)} days ago")
    )
    return f"grain {grain}, {span}"


def context_text(query: str, response: ContextResponse) -> str:
    """The service's context block under one line that says what it is and what it left out, so
    the model knows whether asking for a larger budget could tell it more."""
    if not response.items:
        return f"No memories relevant to {query!r}."
    noun = "memory" if len(response.items) == 1 else "memories"
    head = (
        f"Context for {query!r}: {len(response.items)} {noun}, oldest first "
        f"({response.tokens} of {response.token_budget} tokens"
    )
    head += f"; {response.dropped} less relevant left out)" if response.dropped else ")"
    return f"{head}:\n{response.context}"
