"""How a ranking treats superseded memories (`recall.rules.ranking.after_superseders`): the memory that
holds now takes the better place of the two, the superseded one comes right after it, nothing is
lost; checked on examples and as a property over generated rankings and supersession chains."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import memory_record

from agent_memory.model.queries import Found, Hit
from agent_memory.recall.rules.ranking import SUPERSEDED_FACTOR, after_superseders


def _hit(record_id: str, score: float, superseded_by: str | None = None) -> Hit:
    record = memory_record(record_id, f"memory {record_id}", superseded_by=superseded_by)
    return Hit(record=record, score=score, similarity=score, recency=1.0, current=superseded_by is None)


def test_what_holds_now_takes_the_place_of_what_it_replaced() -> None:
    # GIVEN "I live in Berlin" found first (it matches the question's words), an unrelated turn,
    # and "our new flat in Lisbon", which superseded Berlin, found last
    ranked: list[Found] = [
        _hit("berlin", 0.5, superseded_by="lisbon"),
        _hit("other", 0.3),
        _hit("lisbon", 0.1),
    ]
    # WHEN ordered
    out = after_superseders(ranked)
    # THEN Lisbon comes first with Berlin's score before its damping, Berlin right after it with
    # its damped score, the unrelated turn last
    assert [r.id for r in out] == ["lisbon", "berlin", "other"]
    assert out[0].score == 0.5 / SUPERSEDED_FACTOR and out[1].score == 0.5


def test_what_holds_now_comes_before_a_memory_found_between_it_and_what_it_replaced() -> None:
    # GIVEN "I live in Berlin" (superseded: its score halved to 0.24), an unrelated turn that
    # scored between its damped and its own score, and "we moved to Lisbon" just below it
    ranked: list[Found] = [
        _hit("other", 0.33),
        _hit("lisbon", 0.24),
        _hit("berlin", 0.24, superseded_by="lisbon"),
    ]
    # WHEN ordered
    out = after_superseders(ranked)
    # THEN Lisbon takes the place Berlin was found for (0.48), above the unrelated turn
    assert [r.id for r in out] == ["lisbon", "berlin", "other"]


def test_a_ranking_without_superseded_memories_is_left_as_it_is() -> None:
    # GIVEN memories none of which is superseded
    ranked: list[Found] = [_hit("a", 0.5), _hit("b", 0.4), _hit("c", 0.1)]
    # WHEN ordered, THEN nothing moves and no score changes
    assert after_superseders(ranked) == ranked


@st.composite
def _rankings(draw: st.DrawFn) -> list[Found]:
    """Up to 8 memories with scores; some superseded by another of them (chains, no cycles: a
    memory is only superseded by one written after it, here one with a higher index)."""
    n = draw(st.integers(1, 8))
    scores = draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n))
    hits = []
    for i in range(n):
        later = draw(st.one_of(st.none(), st.integers(i + 1, n))) if i < n - 1 else None
        newer = f"m{later}" if later is not None and later < n else None
        hits.append(_hit(f"m{i}", scores[i], superseded_by=newer))
    order = draw(st.permutations(hits))
    return sorted(order, key=lambda h: -h.score)


@given(_rankings())
def test_nothing_is_lost_and_each_superseded_memory_follows_what_replaced_it(ranked: list[Found]) -> None:
    # GIVEN any ranking with supersession chains
    # WHEN ordered
    out = after_superseders(ranked)
    # THEN the same memories, once each
    assert sorted(r.id for r in out) == sorted(r.id for r in ranked)
    position = {r.id: i for i, r in enumerate(out)}
    by_id = {r.id: r for r in ranked}
    for r in out:
        newer = r.record.superseded_by if isinstance(r, Hit) else None
        if newer is None or newer not in position:
            continue
        # AND a superseded memory comes after the one that superseded it, scoring no higher
        assert position[newer] < position[r.id]
        assert r.score <= out[position[newer]].score
        # AND what superseded it scores at least as well as the superseded one did (before its
        # damping, when what superseded it holds now)
        superseder = out[position[newer]]
        undamped = isinstance(superseder, Hit) and superseder.current
        assert superseder.score >= by_id[r.id].score / (SUPERSEDED_FACTOR if undamped else 1.0)
