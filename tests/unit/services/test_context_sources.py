"""Context with both sources: each keeps its share of the budget, what one cannot use the other
may take, and the response says what each cut. Checked as properties over any mix of results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.knowledge.rules.passages import Passage
from agent_memory.model.ids import content_hash
from agent_memory.model.queries import BOTH, ContextQuery, Found, Hit, SearchQuery, SharedHit, SourceTag
from agent_memory.model.records import MemoryRecord
from agent_memory.recall.context import ContextService, context_line, estimate_tokens

NOW = datetime(2026, 11, 24, tzinfo=UTC)


class Ranked:
    """A searcher that answers one ranked list (what the search use case would have found): the
    packing is what is under test, not the ranking."""

    def __init__(self, found: Sequence[Found]) -> None:
        self.found = list(found)
        self.asked: list[SearchQuery] = []

    def search(self, tenant_id: str, agent_id: str, request: SearchQuery) -> list[Found]:
        self.asked.append(request)
        return [f for f in self.found if f.source_tag in request.sources]


def memory(i: int, words: int) -> Hit:
    content = " ".join(f"memory{i}w{j}" for j in range(words))
    record = MemoryRecord(
        id=f"mem_{i:020d}",
        tenant_id="acme",
        agent_id="bot",
        content=content,
        content_hash=content_hash(content),
        created_at=NOW,
        updated_at=NOW,
        occurred_at=NOW - timedelta(days=i),
    )
    return Hit(record=record, score=1.0 / (i + 1), similarity=None, recency=1.0)


def passage(i: int, words: int) -> SharedHit:
    text = " ".join(f"passage{i}w{j}" for j in range(words))
    p = Passage(
        id=f"psg_{i:020d}",
        tenant_id="acme",
        doc_id=f"doc-{i}",
        version="v1",
        title=f"Doc {i}",
        heading_path=["Section"],
        text=text,
        start=0,
        end=len(text),
        ordinal=0,
        updated_at=NOW,
    )
    return SharedHit(passage=p, score=1.0 / (i + 1.5), similarity=None)


results = st.tuples(
    st.lists(st.integers(1, 120), max_size=12), st.lists(st.integers(1, 120), max_size=12)
).map(
    lambda sizes: sorted(
        [memory(i, w) for i, w in enumerate(sizes[0])] + [passage(i, w) for i, w in enumerate(sizes[1])],
        key=lambda f: -f.score,
    )
)


@settings(max_examples=300, deadline=None)
@given(
    found=results,
    budget=st.integers(50, 2_000),
    share=st.sampled_from([0.0, 0.1, 0.4, 0.5, 0.9, 1.0]),
    sources=st.sampled_from([BOTH, frozenset({"private"}), frozenset({"shared"})]),
)
def test_each_source_keeps_its_share_and_reports_its_cuts(
    found: list[Found], budget: int, share: float, sources: frozenset[SourceTag]
) -> None:
    # GIVEN a ranked list of memories and passages
    searcher = Ranked(found)

    # WHEN it is packed into a block
    block = ContextService(searcher).context(
        "acme", "bot", ContextQuery(SearchQuery(query="q", sources=sources), budget, share)
    )

    # THEN the block is within the budget, and so is every source within its own
    assert block.tokens <= budget
    assert sum(b.budget for b in block.sources) == budget
    for b in block.sources:
        assert b.tokens + b.lines <= b.budget
    # each source's lines are the head of its own relevance order (only the last may be cut)
    for b in block.sources:
        mine = [f for f in found if f.source_tag == b.source]
        lines = [line for line in block.lines if line.hit.source_tag == b.source]
        assert [line.hit.id for line in sorted(lines, key=lambda x: mine.index(x.hit))] == [
            f.id for f in mine[: len(lines)]
        ]
        assert b.dropped == len(mine) - len(lines)
        cut = [line for line in lines if line.line != context_line(line.hit)]
        assert len(cut) == int(b.truncated) and (not cut or cut[0].hit.id == mine[len(lines) - 1].id)
        # nothing left unused that the next line would have fitted in (unless it was cut)
        if b.dropped and not b.truncated:
            assert estimate_tokens(context_line(mine[len(lines)])) + 1 > b.budget - b.tokens - b.lines
    assert block.dropped == sum(b.dropped for b in block.sources)
    # shared knowledge frames the block: its lines come first
    tags = [line.hit.source_tag for line in block.lines]
    assert tags == sorted(tags, key=lambda t: t != "shared")
    assert {b.source for b in block.sources} == set(sources)


def test_with_both_sources_the_shared_share_is_kept_even_when_memories_rank_higher() -> None:
    # GIVEN memories that all outrank every passage, more of them than the budget holds
    found: list[Found] = [memory(i, 15) for i in range(20)] + [passage(i, 15) for i in range(20)]
    for f in found[20:]:
        object.__setattr__(f, "score", 0.001)

    # WHEN a 1,000-token block is asked for with 40% kept for shared knowledge
    block = ContextService(Ranked(found)).context(
        "acme", "bot", ContextQuery(SearchQuery(query="q", sources=BOTH), 1_000, 0.4)
    )

    # THEN passages fill their 400 tokens although every memory ranked above them
    shared = next(b for b in block.sources if b.source == "shared")
    private = next(b for b in block.sources if b.source == "private")
    assert shared.budget >= 400 and private.budget <= 600
    assert shared.lines >= 5 and private.lines >= 8
    assert shared.dropped > 0 and private.dropped > 0


def test_what_one_source_cannot_use_goes_to_the_other() -> None:
    # GIVEN one short passage and many memories
    found: list[Found] = [passage(0, 5)] + [memory(i, 40) for i in range(30)]

    # WHEN half of a 1,000-token budget is kept for shared knowledge
    block = ContextService(Ranked(found)).context(
        "acme", "bot", ContextQuery(SearchQuery(query="q", sources=BOTH), 1_000, 0.5)
    )

    # THEN the passage takes what it needs and the memories the rest
    shared = next(b for b in block.sources if b.source == "shared")
    private = next(b for b in block.sources if b.source == "private")
    assert shared.lines == 1 and shared.budget == shared.tokens + 1
    assert private.budget == 1_000 - shared.budget
    assert private.tokens > 500
