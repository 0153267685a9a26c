"""Facts that change over time (`supersession.rules.timelines`) against a plain model: at most one current
value per holder and attribute, `as_of` gives the value of the last statement at or before the
time, a late write of an older fact takes its place in the past, and undoing a supersession
leaves exactly the timeline without that statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agent_memory.supersession.rules.timelines import Statement, timelines

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ATTRIBUTES = {
    "residence": (
        ["Berlin", "Lisbon", "Oslo", "Porto"],
        ["I live in {v}.", "I moved to {v}.", "My new flat is in {v}."],
    ),
    "employer": (
        ["Acme", "Globex", "Initech"],
        ["I work at {v}.", "I just joined {v}.", "I work for {v} now."],
    ),
    "favourite:drink": (["green tea", "black coffee", "chai"], ["My favourite drink is {v}."]),
}
statement = st.tuples(
    st.sampled_from(sorted(ATTRIBUTES)),
    st.integers(0, 3),
    st.integers(0, 2),
    st.integers(0, 400),
    st.booleans(),
)


def _statements(drawn: list[tuple[str, int, int, int, bool]]) -> list[tuple[Statement, str, str]]:
    out = []
    for n, (attribute, value_i, phrase_i, day, other_person) in enumerate(drawn):
        values, phrasings = ATTRIBUTES[attribute]
        value = values[value_i % len(values)]
        text = phrasings[phrase_i % len(phrasings)].format(v=value)
        holder = "bob" if other_person else "alice"
        out.append((Statement(f"m{n:03d}", text, T0 + timedelta(days=day), holder), attribute, value.lower()))
    return out


def _reference(
    rows: list[tuple[Statement, str, str]], holder: str, attribute: str, at: datetime | None
) -> str | None:
    """The plain model: the value of the last statement (by time, then id) at or before ``at``."""
    held = sorted(
        (s.occurred_at, s.id, value)
        for s, a, value in rows
        if s.holder == holder and a == attribute and (at is None or s.occurred_at <= at)
    )
    return held[-1][2] if held else None


def _value(line: object, sid: str | None) -> str | None:
    return None if sid is None else next(v.value for i, v in line if i == sid)  # type: ignore[attr-defined]


@given(drawn=st.lists(statement, min_size=1, max_size=25), probe=st.integers(-5, 420))
def test_one_current_value_and_as_of_the_value_then(
    drawn: list[tuple[str, int, int, int, bool]], probe: int
) -> None:
    # GIVEN statements of two people, arriving in any order, about attributes whose values change
    rows = _statements(drawn)
    # WHEN they are read into timelines
    lines = timelines(s for s, _, _ in rows)
    at = T0 + timedelta(days=probe)
    # THEN for each person and attribute: one current value, the latest; as of any time, the last before it
    for holder in ("alice", "bob"):
        for attribute in ATTRIBUTES:
            line = lines.by_attribute.get((holder, attribute), [])
            # one value holds now (a restatement of it holds with it; one of an older value does not)
            assert len({v.value for _, v in line if v.valid_to is None}) == (1 if line else 0)
            assert all(v.superseded_by is None for _, v in line if v.valid_to is None)
            assert _value(line, lines.current(holder, attribute)) == _reference(rows, holder, attribute, None)
            assert _value(line, lines.as_of(holder, attribute, at)) == _reference(rows, holder, attribute, at)


@given(drawn=st.lists(statement, min_size=2, max_size=20), pick=st.integers(0, 19))
def test_undoing_a_supersession_leaves_the_timeline_without_that_statement(
    drawn: list[tuple[str, int, int, int, bool]], pick: int
) -> None:
    # GIVEN a statement the cascade rules out for its attribute
    rows = _statements(drawn)
    chosen, attribute, _ = rows[pick % len(rows)]
    # WHEN it is undone
    undone = timelines((s for s, _, _ in rows), undone=frozenset({(chosen.id, attribute)}))
    # THEN that attribute's timeline is exactly the one made without it, the others unchanged
    without = timelines(s for s, _, _ in rows if s.id != chosen.id)
    key = (chosen.holder, attribute)
    assert undone.by_attribute.get(key, []) == without.by_attribute.get(key, [])
    everything = timelines(s for s, _, _ in rows)
    for other, line in everything.by_attribute.items():
        if other != key:
            assert undone.by_attribute[other] == line


def test_the_issues_example_moves_from_berlin_to_lisbon_and_keeps_both() -> None:
    # GIVEN
    berlin = Statement(
        "m1", "I live in Berlin, in a flat near Tempelhof.", datetime(2026, 3, 10, tzinfo=UTC), "u"
    )
    lisbon = Statement(
        "m2", "I moved to Lisbon last week, my new flat is in Alfama.", datetime(2026, 6, 12, tzinfo=UTC), "u"
    )
    # WHEN
    lines = timelines([lisbon, berlin])  # written in any order
    # THEN Lisbon holds now, Berlin held in April, and each says which replaced which
    assert lines.current("u", "residence") == "m2"
    assert lines.as_of("u", "residence", datetime(2026, 4, 1, tzinfo=UTC)) == "m1"
    [old] = lines.validity("m1")
    assert (old.valid_to, old.superseded_by) == (lisbon.occurred_at, "m2")
    [new] = lines.validity("m2")
    assert (new.valid_from, new.supersedes, new.valid_to) == (lisbon.occurred_at, "m1", None)
