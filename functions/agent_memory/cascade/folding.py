"""Folding a period's children into one summary within the summarizer's budget per call, and the
record that summary is written as.

Children larger than the budget are folded in chunks: each chunk is summarized on its own (map),
then the partial summaries are summarized together (reduce), repeatedly if needed (`fold`). Apart
from `cascade.summarize` (which children, when, and what is written) because it is the one part
that talks to the model, and the one the cost of a run is counted in.

What a summary record holds beside its text: which children it names, which tags and links it
takes from them (`top_tags`, `merged_links`), how its text is bounded (`bounded`), and when an
earlier version is kept or carried (`only_removed`, `lost_children`, `carrying`). Those are pure
functions over records; `cascade.summarize` decides when to use them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_memory.derived.lifecycle import CHILDREN_COUNT
from agent_memory.errors import ConfigurationError
from agent_memory.model.grains import Grain
from agent_memory.model.limits import MAX_CONTENT_BYTES, MAX_LINKS, MAX_TAGS
from agent_memory.model.records import Link, MemoryRecord
from agent_memory.ports import Summarizer, SummaryInput, SummaryRequest

if TYPE_CHECKING:  # the run's counters, which the calls add to
    from agent_memory.cascade.summarize import RunStats


#: Characters a partial summary's label may take in a reduce round (``first..last`` time keys).
LABEL_ROOM = 32


def check_budget(summarizer: Summarizer) -> None:
    """A summarizer must take two of its own answers in one call, to fold in chunks."""
    if 2 * (summarizer.max_output_chars + LABEL_ROOM) > summarizer.max_input_chars:
        raise ConfigurationError(
            f"summarizer {summarizer.model_id}: its budget ({summarizer.max_input_chars} characters) "
            f"must hold two of its answers ({summarizer.max_output_chars} each, with their labels) "
            "to fold in chunks"
        )


def fold(
    summarizer: Summarizer, grain: Grain, period: str, items: Sequence[SummaryInput], stats: RunStats
) -> str:
    """One summary of ``items``, within the summarizer's budget per call.

    Items that fit in one call are summarized at once. Otherwise they are packed, in order, into
    chunks that fit; each chunk is summarized as ``part i of n`` (map), and the partial summaries,
    labelled with the span of dates they cover, are folded again (reduce). Each partial is at
    most half a budget (checked when the service is built), so every round at least halves the
    number of items and the folding ends (a summarizer that breaks its bound is an error, not
    an endless loop).
    """
    budget = summarizer.max_input_chars
    items = [_clipped(item, budget) for item in items]
    chunks = _pack(items, budget)
    if len(chunks) == 1:
        return _call(summarizer, grain, period, chunks[0], None, stats)
    partials: list[SummaryInput] = []
    for index, chunk in enumerate(chunks, start=1):
        text = _call(summarizer, grain, period, chunk, (index, len(chunks)), stats)
        if text.strip():
            first, last = chunk[0].label.split("..")[0], chunk[-1].label.split("..")[-1]
            partials.append(SummaryInput(label=first if first == last else f"{first}..{last}", text=text))
    if not partials:
        return ""
    if len(partials) >= len(items):
        raise ConfigurationError(
            f"summarizer {summarizer.model_id} answered beyond its max_output_chars "
            f"({summarizer.max_output_chars}): its partial summaries cannot be folded"
        )
    return fold(summarizer, grain, period, partials, stats)


def input_chars(item: SummaryInput) -> int:
    """What an item costs of a call's budget: its text, its label and their separators."""
    return len(item.text) + len(item.label) + 4


def _clipped(item: SummaryInput, budget: int) -> SummaryInput:
    room = budget - len(item.label) - 4
    if len(item.text) <= room:
        return item
    return SummaryInput(label=item.label, text=item.text[: max(room - 1, 0)] + "…")


def _pack(items: Sequence[SummaryInput], budget: int) -> list[list[SummaryInput]]:
    chunks: list[list[SummaryInput]] = [[]]
    used = 0
    for item in items:
        cost = input_chars(item)
        if chunks[-1] and used + cost > budget:
            chunks.append([])
            used = 0
        chunks[-1].append(item)
        used += cost
    return chunks


def _call(
    summarizer: Summarizer,
    grain: Grain,
    period: str,
    chunk: Sequence[SummaryInput],
    part: tuple[int, int] | None,
    stats: RunStats,
) -> str:
    result = summarizer.summarize(SummaryRequest(grain, period, chunk, part=part))
    stats.calls += 1
    stats.input_chars += sum(input_chars(item) for item in chunk)
    stats.output_chars += len(result.text)
    stats.input_tokens += result.input_tokens
    stats.output_tokens += result.output_tokens
    return result.text


def only_removed(existing: MemoryRecord, children: Sequence[MemoryRecord]) -> bool:
    """Whether the children are a strict subset of what ``existing`` was made from.

    Only decidable when ``existing`` names all of its sources (not truncated).
    """
    count = existing.metadata.get(CHILDREN_COUNT)
    if not isinstance(count, int) or count != len(existing.source_ids):
        return False
    return {c.id for c in children} < set(existing.source_ids)


def lost_children(existing: MemoryRecord, children: Sequence[MemoryRecord]) -> bool:
    """Whether children ``existing`` names are gone (retention deleted them; a forget would have
    made it stale instead), so its text is the only copy of what they said."""
    return bool(set(existing.source_ids) - {c.id for c in children})


def carrying(record: MemoryRecord, earlier: MemoryRecord) -> MemoryRecord:
    """A summary folded from ``earlier``'s text and the children added since: it names the
    children of both, and keeps what ``earlier`` said about importance, tags and its end user."""
    sources = list(dict.fromkeys([*earlier.source_ids, *record.source_ids]))
    user_id = record.user_id if record.user_id == earlier.user_id else None
    return record.model_copy(
        update={
            "source_ids": sources,
            "user_id": user_id,
            "user_ids": sorted({*earlier.user_ids, *record.user_ids}),
            "importance": max(record.importance, earlier.importance),
            "tags": list(dict.fromkeys([*earlier.tags, *record.tags]))[:MAX_TAGS],
            "metadata": {**record.metadata, CHILDREN_COUNT: len(sources)},
        }
    )


def bounded(text: str) -> str:
    """At most `MAX_CONTENT_BYTES` of UTF-8, cut at a line break where there is one."""
    data = text.strip().encode("utf-8")
    if len(data) <= MAX_CONTENT_BYTES:
        return text.strip()
    cut = data[:MAX_CONTENT_BYTES].decode("utf-8", "ignore")
    return cut[: cut.rfind("\n")] if "\n" in cut else cut


def top_tags(children: Sequence[MemoryRecord]) -> list[str]:
    """The children's most frequent tags (first seen first among equals), at most `MAX_TAGS`."""
    counts = Counter(tag for c in children for tag in c.tags)
    return [tag for tag, _ in counts.most_common(MAX_TAGS)]


def merged_links(children: Sequence[MemoryRecord]) -> list[Link]:
    """One link per entity with its highest weight, strongest first, at most `MAX_LINKS`."""
    best: dict[tuple[str, str], Link] = {}
    for c in children:
        for link in c.links:
            ref = (link.entity_type, link.entity_id)
            if ref not in best or link.weight > best[ref].weight:
                best[ref] = link
    order = {ref: i for i, ref in enumerate(best)}
    ranked = sorted(best.items(), key=lambda item: (-item[1].weight, order[item[0]]))
    return [link for _, link in ranked[:MAX_LINKS]]
