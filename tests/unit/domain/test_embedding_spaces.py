"""The embedding-space state machine against a plain model: whatever admins choose and whenever
the job runs, searches read a space every record has a vector in, no space is dropped while it
is read or written, and the state ends where the last choice points."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE, EmbeddingState, space_of
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider

TTL = timedelta(seconds=61)
MODELS = [None, *(ModelChoice(provider=ModelProvider.LOCAL, model="hashing", dimension=d) for d in (16, 32))]
T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)

step = st.one_of(
    st.tuples(st.just("choose"), st.sampled_from(MODELS)),
    st.tuples(st.just("job"), st.none()),
    st.tuples(st.just("wait"), st.integers(1, 90)),
)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(step, max_size=30))
def test_searches_always_read_a_complete_space_and_nothing_read_is_dropped(
    steps: list[tuple[str, object]],
) -> None:
    # GIVEN a plain model: the spaces each record is embedded in (one record is enough: the job
    # fills every record the same way), and the state
    state, now = EmbeddingState(), T0
    filled: set[str] = {DEFAULT_SPACE}
    wanted: ModelChoice | None = None
    for kind, arg in steps:
        # WHEN an admin chooses, the job runs (fill, maybe switch, maybe drop), or time passes
        if kind == "choose":
            wanted = arg  # type: ignore[assignment]
            state = state.choose(wanted, now)
        elif kind == "job":
            for space in state.due_for_drop(now, TTL):
                # THEN a space dropped is neither searched nor being filled
                assert space not in (state.active_space, state.target_space)
                filled.discard(space)
            state = state.dropped(state.due_for_drop(now, TTL))
            if state.moving:
                filled.add(space_of(state.target))
                if state.may_switch(now, TTL):
                    state = state.switched(now)
        else:
            now += timedelta(seconds=arg)  # type: ignore[operator]
        # THEN searches read a space the record has a vector in, and the target is never the active
        assert state.active_space in filled
        assert state.target_space != state.active_space
        assert state.active_space not in state.retiring
    # AND the state heads for the last choice: active, or being filled towards
    assert space_of(wanted) in (state.active_space, state.target_space)
