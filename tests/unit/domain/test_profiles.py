"""Choosing a profile's statements: who a memory speaks for, what counts as a statement about
them, and the bounds (per profile, per day), checked against a plain reference model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.derived.rules.profiles import (
    ProfileRules,
    Subject,
    by_subject,
    disclosure,
    is_statement,
    profile_id,
    statements,
    subject_of,
)
from agent_memory.model.ids import content_hash
from agent_memory.model.records import MemoryKind, MemoryRecord

T0 = datetime(2026, 5, 1, 9, tzinfo=UTC)


def record(
    rid: str,
    content: str,
    *,
    speaker: str | None = None,
    user_id: str | None = None,
    role: str | None = None,
    kind: MemoryKind = MemoryKind.CONVERSATION,
    at: datetime = T0,
) -> MemoryRecord:
    return MemoryRecord(
        id=rid,
        tenant_id="acme",
        agent_id="bot",
        user_id=user_id,
        kind=kind,
        role=role,  # type: ignore[arg-type]
        speaker=speaker,
        content=content,
        content_hash=content_hash(content),
        created_at=at,
        updated_at=at,
        occurred_at=at,
    )


def test_a_memory_speaks_for_its_speaker_or_its_end_user_and_never_for_the_agent() -> None:
    # GIVEN / WHEN / THEN
    assert subject_of(record("a", "x", speaker="  Mary   Ann ", user_id="u1")) == Subject("u1", "Mary Ann")
    assert subject_of(record("b", "x", role="user", user_id="u1")) == Subject("u1", None)
    assert subject_of(record("c", "x", role="assistant", user_id="u1")) is None
    assert subject_of(record("d", "x", role="user")) is None  # no end user, no name: no one


def test_statements_are_first_person_or_stating_kinds_and_not_bare_questions() -> None:
    # GIVEN / WHEN / THEN
    assert is_statement(record("a", "I moved to Lisbon last spring for my job."))
    assert is_statement(record("b", "I\u2019ve adopted a dog."))  # a typographic apostrophe
    assert not is_statement(record("c", "Do you like my new haircut?"))
    assert is_statement(record("d", "Do you like it? I painted my kitchen blue."))
    assert not is_statement(record("e", "The weather was lovely."))
    assert is_statement(record("f", "Prefers tea to coffee", kind=MemoryKind.PREFERENCE))
    assert not is_statement(record("g", "I said so", kind=MemoryKind.SUMMARY))


def test_disclosing_statements_rank_above_small_talk() -> None:
    # GIVEN / WHEN / THEN
    assert disclosure("I love painting and my sister Anna taught me in 2019.") > disclosure("I am fine.")
    assert disclosure("ok") == 0


def test_the_same_name_under_two_end_users_is_two_subjects_and_case_does_not_split_one() -> None:
    # GIVEN
    rs = [
        record("a", "I run.", speaker="Mel", user_id="u1"),
        record("b", "I swim.", speaker="mel", user_id="u1"),
        record("c", "I ski.", speaker="Mel", user_id="u2"),
    ]
    # WHEN
    groups = by_subject(rs)
    # THEN
    assert {s: [r.id for r in g] for s, g in groups.items()} == {
        Subject("u1", "Mel"): ["a", "b"],
        Subject("u2", "Mel"): ["c"],
    }
    assert profile_id("acme", "bot", Subject("u1", "Mel")) == profile_id("acme", "bot", Subject("u1", "MEL"))
    assert profile_id("acme", "bot", Subject("u1", "Mel")) != profile_id("acme", "bot", Subject("u2", "Mel"))


def test_at_most_per_day_statements_come_from_one_day() -> None:
    # GIVEN six disclosing turns on one day and one on another
    rs = [record(f"d1-{i}", f"I love climbing with my brother number {i}.", at=T0) for i in range(6)]
    rs.append(record("d2", "I work as a nurse.", at=T0 + timedelta(days=1)))
    day_of = {r.id: r.occurred_at.date().isoformat() for r in rs}
    # WHEN
    chosen = statements(rs, day_of, ProfileRules(per_day=3, max_statements=10))
    # THEN three from the busy day, and the other day's one
    assert len([r for r in chosen if r.id.startswith("d1")]) == 3
    assert "d2" in [r.id for r in chosen]


_speakers = st.sampled_from([None, "Ann", "ann", "Bo"])
_users = st.sampled_from([None, "u1", "u2"])
_texts = st.sampled_from(
    [
        "I love my garden.",
        "My dad was a pilot and I flew with him in 1999.",
        "Is it raining?",
        "The meeting moved.",
        "I work at the bakery on Main Street.",
        "Sure.",
    ]
)
_kinds = st.sampled_from([MemoryKind.CONVERSATION, MemoryKind.FACT, MemoryKind.SUMMARY, MemoryKind.PATTERN])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _speakers, _users, st.sampled_from([None, "user", "assistant"]), _texts, _kinds, st.integers(0, 9)
        ),
        max_size=40,
    ),
    st.integers(1, 8),
    st.integers(1, 4),
)
def test_chosen_statements_match_a_plain_reference_model(
    rows: list[tuple[str | None, str | None, str | None, str, MemoryKind, int]], most: int, per_day: int
) -> None:
    # GIVEN records of several people, end users and days
    rs = [
        record(f"r{i:03d}", text, speaker=sp, user_id=u, role=role, kind=kind, at=T0 + timedelta(days=day))
        for i, (sp, u, role, text, kind, day) in enumerate(rows)
    ]
    day_of = {r.id: r.occurred_at.date().isoformat() for r in rs}
    rules = ProfileRules(max_statements=most, per_day=per_day)
    # WHEN
    groups = by_subject(rs)
    # THEN every record is in the group of exactly the person it speaks for ...
    for subject, members in groups.items():
        for r in members:
            assert r.user_id == subject.user_id
            if subject.speaker is None:
                assert r.speaker is None and r.role == "user"
            else:
                assert r.speaker is not None and r.speaker.casefold() == subject.speaker.casefold()
    assert sum(len(m) for m in groups.values()) == sum(1 for r in rs if subject_of(r) is not None)
    for members in groups.values():
        chosen = statements(members, day_of, rules)
        eligible = [r for r in members if is_statement(r)]
        # ... its statements are its own eligible ones, within both bounds, oldest first
        assert {r.id for r in chosen} <= {r.id for r in eligible}
        assert len(chosen) == min(most, _reference_capacity(eligible, day_of, per_day))
        for day in {day_of[r.id] for r in chosen}:
            assert sum(1 for r in chosen if day_of[r.id] == day) <= per_day
        assert chosen == sorted(chosen, key=lambda r: (r.occurred_at, r.id))


def _reference_capacity(eligible: list[MemoryRecord], day_of: dict[str, str], per_day: int) -> int:
    """How many statements the per-day bound alone allows: the per-day cap summed over days."""
    days: dict[str, int] = {}
    for r in eligible:
        days[day_of[r.id]] = days.get(day_of[r.id], 0) + 1
    return sum(min(n, per_day) for n in days.values())
