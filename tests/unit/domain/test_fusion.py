"""The one rule both stores follow to hand over their hits (recall/rules/ranking.py, *Fusion*)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_memory.recall.rules.fusion import fused_order, lacking_cosine, scaled_to_best

IDS = st.lists(st.integers(0, 30), unique=True, max_size=10)


def test_either_direction_of_lexical_score_makes_the_best_hit_one() -> None:
    # WHEN / THEN
    assert scaled_to_best({"a": 8.0, "b": 4.0}) == {"a": 1.0, "b": 0.5}  # BM25 in OpenSearch
    assert scaled_to_best({1: -6.0, 2: -3.0}) == {1: 1.0, 2: 0.5}  # FTS5 bm25(): lower is better
    assert scaled_to_best({"a": 0.0}) == {"a": 1.0}
    assert scaled_to_best({}) == {}


@given(IDS, IDS)
def test_vector_hits_first_then_lexical_only_hits_each_once(vector: list[int], lexical: list[int]) -> None:
    # WHEN
    order = fused_order(vector, lexical)
    # THEN
    assert order[: len(vector)] == vector
    assert order[len(vector) :] == [k for k in lexical if k not in vector]
    assert len(order) == len(set(order)) == len(set(vector) | set(lexical))
    similarity = dict.fromkeys(vector, 0.5)
    assert lacking_cosine(order, similarity) == [k for k in lexical if k not in vector]
