"""When two writes may become one memory: the particulars that tell texts apart, and the owner,
day and speaker rules, decided before any vector is compared."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import memory_record

from agent_memory.model.records import MemoryRecord
from agent_memory.writing.rules.dedup import DedupScope, may_merge, particulars

AT = datetime(2026, 11, 20, 10, tzinfo=UTC)


def record(content: str, at: datetime = AT, **fields: object) -> MemoryRecord:
    record_id = f"mem_{abs(hash((content, at, tuple(fields.items()))))}"
    return memory_record(record_id, content, tenant="t", agent="a", at=at, **fields)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("My phone number is 555-1234.", "My phone number is 555-9876."),
        ("Paid invoice 1001 of $500.", "Paid invoice 1001 of €500."),
        ("Paid $1,000.50 today.", "Paid $1,000.60 today."),
        ("Meet at 10:30.", "Meet at 11:30."),
        ("Due on 2026-11-20.", "Due on 2026-11-21."),
        ("Mail ana@example.com.", "Mail bob@example.com."),
        ("Docs at https://x.io/a.", "Docs at https://x.io/b."),
        ("The code is X7Q9.", "The code is X7Q8."),
        ("The SKU is ABC.", "The SKU is ABD."),
        ("I live in Berlin.", "I live in Lisbon."),
        ("Hannah signed the lease.", "Maria signed the lease."),
        ("It moved to March.", "It moved to April."),
        ("We meet on Monday.", "We meet on Friday."),
    ],
)
def test_texts_naming_different_things_have_different_particulars(a: str, b: str) -> None:
    # WHEN / THEN
    assert particulars(a) != particulars(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The planning meeting moved to Thursday.", "the planning meeting moved to thursday!!"),
        ("Alice owns the checklist.", "Alice owns the checklist, as agreed."),
        ("we should ship the fix soon", "We should ship the fix soon."),
    ],
)
def test_rewordings_of_one_fact_keep_their_particulars(a: str, b: str) -> None:
    # WHEN / THEN
    assert particulars(a) == particulars(b)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=10**12))
def test_two_numbers_in_the_same_sentence_never_look_alike(x: int, y: int) -> None:
    # GIVEN
    a, b = f"Transfer {x} to the savings account.", f"Transfer {y} to the savings account."
    # WHEN / THEN
    assert (particulars(a) == particulars(b)) == (x == y)


def test_owner_scope_day_speaker_and_kind_must_agree() -> None:
    # GIVEN
    base = record("Paid the rent.", user_id="u1", conversation_id="c1", role="user")
    same = record("Paid the rent!", AT + timedelta(hours=3), user_id="u1", conversation_id="c1", role="user")
    # WHEN / THEN
    assert may_merge(base, same, DedupScope.CONVERSATION, "UTC")
    other_user = same.model_copy(update={"user_id": "u2"})
    other_conversation = same.model_copy(update={"conversation_id": "c2"})
    other_day = same.model_copy(update={"occurred_at": AT + timedelta(days=1)})
    other_role = same.model_copy(update={"role": "assistant"})
    other_kind = same.model_copy(update={"kind": "decision"})
    for other in (other_user, other_conversation, other_day, other_role, other_kind):
        assert not may_merge(base, other, DedupScope.CONVERSATION, "UTC")
    # wider scopes: any conversation of the same user; any user of the agent
    assert may_merge(base, other_conversation, DedupScope.USER, "UTC")
    assert not may_merge(base, other_user, DedupScope.USER, "UTC")
    assert may_merge(base, other_user, DedupScope.AGENT, "UTC")


def test_the_day_is_the_local_day_of_the_deployment() -> None:
    # GIVEN
    # 23:30 UTC and 00:30 UTC the next day are one day in New York, two in UTC
    late = record("Paid the rent.", datetime(2026, 11, 20, 23, 30, tzinfo=UTC))
    early = record("Paid the rent!", datetime(2026, 11, 21, 0, 30, tzinfo=UTC))
    # WHEN / THEN
    assert not may_merge(late, early, DedupScope.CONVERSATION, "UTC")
    assert may_merge(late, early, DedupScope.CONVERSATION, "America/New_York")
