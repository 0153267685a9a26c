"""Spreading the head of a ranking over sessions (domain/diversity.py), against a plain model:
the spread only reorders, zero spread changes nothing, one session keeps its order, and the head
never spans fewer sessions than before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import memory_record

from agent_memory.domain.diversity import SPREAD_DEPTH, session_of, spread_over_sessions
from agent_memory.domain.recall import Hit

DAY0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)

#: (session number, score) per hit; sessions are conversation ids, or days when there is none
HITS = st.lists(st.tuples(st.integers(0, 4), st.floats(0.01, 1.0), st.booleans()), max_size=60)


def _ranking(rows: list[tuple[int, float, bool]]) -> list[Hit]:
    hits = [
        Hit(
            record=memory_record(
                f"mem_{i:03d}",
                f"turn {i}",
                at=DAY0 + timedelta(days=session),
                conversation_id=f"session-{session}" if named else None,
            ),
            score=score,
            similarity=score,
            recency=1.0,
        )
        for i, (session, score, named) in enumerate(rows)
    ]
    return sorted(hits, key=lambda h: (-h.score, h.record.id))


@given(HITS, st.floats(0.0, 1.0))
def test_the_spread_only_reorders(rows: list[tuple[int, float, bool]], spread: float) -> None:
    # GIVEN a ranking
    ranked = _ranking(rows)
    # WHEN it is spread
    out = spread_over_sessions(ranked, spread)
    # THEN the same hits with the same scores, each once
    assert sorted(h.record.id for h in out) == sorted(h.record.id for h in ranked)
    assert {h.record.id: h.score for h in out} == {h.record.id: h.score for h in ranked}


@given(HITS)
def test_zero_spread_changes_nothing(rows: list[tuple[int, float, bool]]) -> None:
    # GIVEN / WHEN / THEN
    ranked = _ranking(rows)
    assert spread_over_sessions(ranked, 0.0) == ranked


@given(HITS, st.floats(0.01, 0.99))
def test_one_session_keeps_its_order_and_the_head_spans_no_fewer_sessions(
    rows: list[tuple[int, float, bool]], spread: float
) -> None:
    # GIVEN a ranking, and the same hits all of one session
    ranked = _ranking(rows)
    one = _ranking([(0, score, True) for _, score, _ in rows])
    # WHEN both are spread
    out, same = spread_over_sessions(ranked, spread), spread_over_sessions(one, spread)
    # THEN one session's order is kept, and the first ten span at least as many sessions as before
    assert same == one
    head = 10
    assert len({session_of(h) for h in out[:head]}) >= len({session_of(h) for h in ranked[:head]})


def test_a_strong_second_session_is_lifted_into_the_head() -> None:
    # GIVEN ten turns of one session just above a turn of another
    ranked = _ranking([(0, 0.90 - i * 0.01, True) for i in range(10)] + [(1, 0.79, True)])
    # WHEN the head is spread with 0.3
    out = spread_over_sessions(ranked, 0.3)
    # THEN the other session's turn comes second: 0.79 beats 0.89 * 0.7
    assert session_of(out[1]) == "session-1"
    assert out[0] == ranked[0]
    assert len(out) <= SPREAD_DEPTH * 2 or out[SPREAD_DEPTH * 2 :] == ranked[SPREAD_DEPTH * 2 :]
