"""The `MemoryStore` contract for conversation turns: the tail a new turn is embedded with, the
turn's speaker and context, and lexical search over them.

Runs over SQLite always and over OpenSearch when ``OPENSEARCH_URL`` is set (conftest.py). Times
are whole seconds, so both stores are held to exactly the same answers.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from tests.contract.test_store_contract import DAY, NOW, forget, ids, put, query, rec, summary

from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports import MemoryStore

MINUTE = timedelta(minutes=1)
START = NOW - DAY  # the conversation began a day ago, one turn a minute


def said(
    record_id: str, minute: int, content: str | None = None, conversation: str = "c-1", **fields: object
) -> MemoryRecord:
    """A conversation turn ``minute`` minutes into the conversation."""
    values: dict[str, object] = {
        "role": "user",
        "kind": MemoryKind.CONVERSATION,
        "conversation_id": conversation,
    }
    return rec(record_id, occurred=START + minute * MINUTE, content=content, **(values | fields))


def tail(
    store: MemoryStore, before: datetime, limit: int, conversation: str = "c-1", agent: str = "a1"
) -> list[str]:
    return [r.id for r in store.conversation_tail("t1", agent, conversation, before, limit)]


# ------------------------------------------------------------------------------------------------
# conversation_tail
# ------------------------------------------------------------------------------------------------


def test_the_tail_is_the_last_turns_before_an_instant_oldest_first(store: MemoryStore) -> None:
    # GIVEN six turns, one a minute, stored out of order
    put(store, *(said(f"mem_{m}", m) for m in (3, 0, 5, 1, 4, 2)))

    # WHEN asking for the three turns before minute 5
    found = tail(store, START + 5 * MINUTE, 3)

    # THEN minutes 2, 3, 4, oldest first: not minute 5 itself, nothing after it
    assert found == ["mem_2", "mem_3", "mem_4"]
    # AND a limit above what there is returns every earlier turn; nothing is before the first
    assert tail(store, START + 3 * MINUTE, 10) == ["mem_0", "mem_1", "mem_2"]
    assert tail(store, START, 10) == []


def test_turns_at_the_same_instant_are_ordered_by_id(store: MemoryStore) -> None:
    # GIVEN three turns sent together (one instant), and one earlier
    put(store, said("mem_b", 1), said("mem_c", 1), said("mem_a", 1), said("mem_0", 0))

    # WHEN / THEN the last two before minute 2 are the two greatest ids of that instant, oldest first
    assert tail(store, START + 2 * MINUTE, 2) == ["mem_b", "mem_c"]
    assert tail(store, START + 2 * MINUTE, 4) == ["mem_0", "mem_a", "mem_b", "mem_c"]


def test_the_tail_keeps_to_one_conversation_of_one_agent_and_to_working_memory(store: MemoryStore) -> None:
    # GIVEN the conversation's turns, and around them: another conversation, a note without one,
    # the same conversation id in another agent and another tenant, and a summary naming it
    put(
        store,
        said("mem_mine", 1),
        said("mem_other_conv", 2, conversation="c-2"),
        rec("mem_note", occurred=START + 3 * MINUTE),
        said("mem_other_agent", 4, agent="a2"),
        said("mem_other_tenant", 5, tenant="t2"),
        summary("sum_day", Grain.DAILY, START.date().isoformat(), conversation_id="c-1"),
    )

    # WHEN reading the tail of c-1 in t1/a1
    found = tail(store, NOW, 10)

    # THEN only that conversation's working turns of that agent
    assert found == ["mem_mine"]
    assert tail(store, NOW, 10, agent="a2") == ["mem_other_agent"]
    assert tail(store, NOW, 10, conversation="c-404") == []


def test_forgotten_turns_are_left_out_and_expired_ones_are_not(store: MemoryStore) -> None:
    # GIVEN three turns: one forgotten, one expired since (the port passes no clock)
    put(
        store,
        said("mem_0", 0),
        said("mem_1", 1, expires_at=START + 2 * MINUTE),
        said("mem_2", 2),
    )
    assert forget(store, "mem_2", at=START + 3 * MINUTE)

    # WHEN reading the tail
    found = tail(store, NOW, 10)

    # THEN the forgotten turn is gone, the expired one is still what was said before
    assert found == ["mem_0", "mem_1"]


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_an_empty_tail(store: MemoryStore, limit: int) -> None:
    # GIVEN
    put(store, said("mem_0", 0))

    # WHEN / THEN
    assert tail(store, NOW, limit) == []


def test_tail_records_carry_every_field_including_speaker_and_context(store: MemoryStore) -> None:
    # GIVEN
    turn = said("mem_0", 0, speaker="Alice", context="Bob: Ready?\nuser: Alice is ready", topic="launch")
    put(store, turn)

    # WHEN
    [found] = store.conversation_tail("t1", "a1", "c-1", NOW, 1)

    # THEN
    assert found == turn


# ------------------------------------------------------------------------------------------------
# speaker and context: stored, read back, searched
# ------------------------------------------------------------------------------------------------


def test_speaker_and_context_round_trip(store: MemoryStore) -> None:
    # GIVEN a turn with a speaker and the speaker-labelled turns before it
    context = "Bob: When do we launch?\nAlice: March 3, after the audit.\nAlice: And the café opens then."
    turn = said("mem_1", 1, content="And the café opens then.", speaker="Alice", context=context)

    # WHEN stored and read back
    put(store, turn)

    # THEN both come back verbatim, and the content is still only the turn's own words
    found = store.get("t1", "a1", "mem_1")
    assert found == turn
    assert found is not None and (found.speaker, found.context) == ("Alice", context)
    assert found.content == "And the café opens then."


def test_a_word_said_only_in_the_context_finds_the_turn(store: MemoryStore) -> None:
    # GIVEN a reply whose own words do not name the subject, which the turn before it does
    put(
        store,
        said("mem_q", 0, content="Where should the offsite be?", speaker="Bob"),
        said(
            "mem_a",
            1,
            content="Yes, let us do that!",
            speaker="Alice",
            context="Bob: Where should the offsite be?\nAlice: Yes, let us do that!",
        ),
        said("mem_x", 2, content="Unrelated remark", speaker="Carol"),
    )

    # WHEN searching lexically for the subject
    found = ids(store.search(query(text="offsite")))

    # THEN the reply is found through its context (and the question through its content)
    assert set(found) == {"mem_q", "mem_a"}


def test_the_speakers_name_finds_their_turns_even_without_context(store: MemoryStore) -> None:
    # GIVEN the first turn of a conversation (no context yet) said by Alice, and one by Bob
    put(
        store,
        said("mem_alice", 0, content="The budget is approved.", speaker="Alice"),
        said("mem_bob", 1, content="Great news about the budget.", speaker="Bob"),
    )

    # WHEN asking what Alice said
    found = ids(store.search(query(text="What did Alice say?")))

    # THEN her turn is found by her name; the question's function words match nothing
    assert found == ["mem_alice"]


def test_words_meet_their_stems_and_their_accents(store: MemoryStore) -> None:
    # GIVEN
    put(
        store,
        said("mem_camp", 0, content="We camped by the lake."),
        said("mem_cafe", 1, content="Meet me at the café."),
        said("mem_none", 2, content="Nothing to see here."),
    )

    # WHEN / THEN
    assert ids(store.search(query(text="camping"))) == ["mem_camp"]
    assert ids(store.search(query(text="cafe"))) == ["mem_cafe"]


def test_stopwords_in_a_query_match_nothing_by_themselves(store: MemoryStore) -> None:
    # GIVEN two records that share only function words with the query
    put(
        store,
        said("mem_launch", 0, content="The launch moved to March."),
        said("mem_audit", 1, content="The audit is about to start and it is on."),
    )

    # WHEN a query holds one meaningful word among stopwords
    found = ids(store.search(query(text="what is the launch about")))

    # THEN only the record holding that word matches
    assert found == ["mem_launch"]
