"""What a summary record holds beside its text: which children it names, which tags and links it
takes from them, how its text is bounded, and when an earlier version is kept or carried.

Pure functions over records, apart from `cascade.summarize`, which decides when to use them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agent_memory.derived.stale_walk import CHILDREN_COUNT
from agent_memory.model.limits import MAX_CONTENT_BYTES, MAX_LINKS, MAX_TAGS
from agent_memory.model.records import Link, MemoryRecord


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
