"""The LangGraph store's filters match what LangGraph's own `InMemoryStore` matches: the same
values and filters, drawn at random, give the same verdict (the store filters its candidates in
the client, so its semantics are ours to keep equal to LangGraph's)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.strategies import FUZZ

pytest.importorskip("langgraph", reason="LangGraph is the `langgraph` extra")
from langgraph.store.memory import InMemoryStore

from agent_memory.integrations.langgraph_store import _matches

FIELDS = ("a", "b", "c")
scalars = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 2.5]), st.sampled_from(["x", "y"]), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=2),
    max_leaves=5,
)
operators = st.dictionaries(
    st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), st.integers(-3, 3), min_size=1, max_size=2
)
conditions = st.recursive(
    scalars | operators,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(FIELDS), inner, min_size=1, max_size=2)
    ),
    max_leaves=4,
)


def _reference(value: dict[str, Any], filter: dict[str, Any]) -> bool | None:
    """LangGraph's verdict, or None where LangGraph itself fails (a comparison of unlike values)."""
    store = InMemoryStore()
    store.put(("ns",), "k", value)
    try:
        return bool(store.search(("ns",), filter=filter))
    except (TypeError, ValueError):
        return None


@FUZZ
@given(
    st.dictionaries(st.sampled_from(FIELDS), values, max_size=3),
    st.dictionaries(st.sampled_from(FIELDS), conditions, min_size=1, max_size=2),
)
def test_a_filter_matches_a_value_exactly_when_langgraph_says_it_does(
    value: dict[str, Any], filter: dict[str, Any]
) -> None:
    """Wherever LangGraph gives a verdict, ours is the same; where LangGraph fails on unlike
    values, ours is no match."""
    expected = _reference(value, filter)
    if expected is None:
        assert _matches(value, filter) is False
        return
    assert _matches(value, filter) is expected
