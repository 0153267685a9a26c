"""Experiences through the LLM tools: `record_outcome` writes one, `give_feedback` moves its
confidence, and `search_memory` narrows to them and shows each one's kind and confidence."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from tests.unit.tools.conftest import NOW, FakeMemoryApi

from agent_memory.contract.v1 import SearchResult
from agent_memory.contract.v1_experience import ExperienceOut
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.tools import MemoryTools
from agent_memory.tools.models import SearchMemoryArgs
from agent_memory.tools.text import experience_label, search_results_text

ID = re.compile(r"\(id (mem_[a-z2-7]+)\)")
LESSON = "Uploading in batches of 100 avoids the gateway timeout."
PATTERN_ID = "pat_abcdefghijklmnopqrstuvwxyz"


def tools_for(api: FakeMemoryApi, user_id: str | None = None) -> MemoryTools:
    return MemoryTools(api, "support-bot", user_id=user_id, clock=lambda: NOW)


def pattern(confirmations: int, refutations: int, confidence: float) -> SearchResult:
    """A recognised pattern as the service answers it."""
    return SearchResult(
        id=PATTERN_ID, grain=Grain.WORKING, time_key=None, kind=MemoryKind.PATTERN,
        content="Large uploads time out unless batched.", text="", score=0.9, similarity=0.9, recency=0.9,
        importance=0.7, occurred_at=datetime(2026, 11, 20, tzinfo=UTC), topic=None, user_id=None,
        conversation_id=None, source=None, metadata={}, tags=[],
        experience=ExperienceOut(
            context=None, outcome=None, run_id=None, confidence=confidence, prior=0.7, prior_weight=6.0,
            confirmations=confirmations, refutations=refutations, applications=2, members=4, runs=3,
        ),
    )  # fmt: skip


# --- record_outcome -------------------------------------------------------------------------------


def test_record_outcome_writes_an_experience_for_the_bound_agent_and_user(api: FakeMemoryApi) -> None:
    # GIVEN
    tools = tools_for(api, user_id="u-7")
    arguments = {
        "kind": "success", "content": LESSON, "context": "importing 4,000 rows",
        "outcome": "all rows uploaded in 40 s", "confidence": 0.8, "run_id": "run-42",
    }  # fmt: skip

    # WHEN
    text, is_error = tools.call("record_outcome", arguments)

    # THEN the item went out as an experience, dated by the clock, for the bound user
    assert not is_error
    [(memory_id, (agent, item))] = api.stored.items()
    assert (agent, item.user_id, item.occurred_at, item.kind) == (
        "support-bot",
        "u-7",
        NOW,
        MemoryKind.SUCCESS,
    )
    assert (item.context, item.outcome, item.confidence, item.run_id) == (
        "importing 4,000 rows",
        "all rows uploaded in 40 s",
        0.8,
        "run-42",
    )
    # AND the result is its line, with its kind and the confidence it starts with
    assert text.splitlines() == [
        "Recorded (searchable within seconds):",
        f"[2026-11-22 · working · success · confidence 0.80] {LESSON} (id {memory_id})",
    ]


def test_an_outcome_recorded_without_a_confidence_starts_at_the_default(api: FakeMemoryApi) -> None:
    # WHEN
    text, is_error = tools_for(api).call(
        "record_outcome", {"kind": "failure", "content": "Retrying blindly."}
    )

    # THEN
    assert not is_error
    assert "· failure · confidence 0.50] Retrying blindly." in text
    [(_, item)] = api.stored.values()
    assert item.confidence is None  # left for the service's default, not sent


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"kind": "fact", "content": "x"}, "Invalid arguments for record_outcome: kind:"),
        ({"content": "x"}, "kind: Field required"),
        ({"kind": "insight", "content": "x", "confidence": 2}, "confidence:"),
        ({"kind": "insight", "content": "x", "run_id": "two words"}, "run_id:"),
        ({"kind": "insight", "content": "   "}, "Invalid arguments for record_outcome: "),
    ],
)
def test_an_outcome_the_contract_refuses_is_an_error_result_and_nothing_is_written(
    api: FakeMemoryApi, arguments: dict[str, object], expected: str
) -> None:
    # WHEN
    text, is_error = tools_for(api).call("record_outcome", arguments)

    # THEN
    assert is_error
    assert expected in text
    assert api.stored == {}


# --- give_feedback --------------------------------------------------------------------------------


def test_feedback_moves_the_confidence_search_shows(api: FakeMemoryApi) -> None:
    # GIVEN an experience the agent recorded
    tools = tools_for(api)
    [memory_id] = ID.findall(tools.call("record_outcome", {"kind": "insight", "content": LESSON})[0])

    # WHEN it is confirmed twice and refuted once
    confirmed, is_error = tools.call("give_feedback", {"memory_id": memory_id, "outcome": "confirmed"})
    tools.call("give_feedback", {"memory_id": memory_id, "outcome": "confirmed", "note": "held again"})
    tools.call("give_feedback", {"memory_id": memory_id, "outcome": "refuted"})

    # THEN each reached the client for the bound agent, with its note
    assert not is_error
    assert confirmed == f"Feedback on {memory_id}: confirmed, its confidence rises (counted within a second)."
    assert [(a, m, f.outcome, f.note) for a, m, f in api.feedbacks] == [
        ("support-bot", memory_id, FeedbackOutcome.CONFIRMED, None),
        ("support-bot", memory_id, FeedbackOutcome.CONFIRMED, "held again"),
        ("support-bot", memory_id, FeedbackOutcome.REFUTED, None),
    ]
    # AND a search shows the posterior and the evidence it rests on: (0.5 * 2 + 2) / (2 + 3) = 0.6
    found, _ = tools.call("search_memory", {"query": "batches"})
    assert found.splitlines()[1] == (
        "[2026-11-22 · working · insight · confidence 0.60 (2 confirmed, 1 refuted)] "
        f"{LESSON} (id {memory_id})"
    )


@pytest.mark.parametrize(
    ("outcome", "effect"),
    [
        ("applied", "counted as applied; its confidence stays as it is until confirmed or refuted"),
        ("refuted", "its confidence falls"),
    ],
)
def test_the_feedback_result_says_what_the_outcome_does(
    api: FakeMemoryApi, outcome: str, effect: str
) -> None:
    # GIVEN
    tools = tools_for(api)
    [memory_id] = ID.findall(tools.call("record_outcome", {"kind": "success", "content": LESSON})[0])

    # WHEN
    text, is_error = tools.call("give_feedback", {"memory_id": memory_id, "outcome": outcome})

    # THEN
    assert not is_error
    assert text == f"Feedback on {memory_id}: {outcome}, {effect} (counted within a second)."


def test_feedback_on_what_is_not_an_experience_or_is_gone_is_an_error_result(api: FakeMemoryApi) -> None:
    # GIVEN a plain memory
    tools = tools_for(api)
    [fact_id] = ID.findall(tools.call("remember", {"content": "Alice prefers email."})[0])

    # WHEN feedback is given on it, on an id never stored, and with an outcome that does not exist
    not_experience, refused = tools.call("give_feedback", {"memory_id": fact_id, "outcome": "confirmed"})
    unknown, missing = tools.call(
        "give_feedback", {"memory_id": "mem_abcdefghijklmnopqrstuvwxyz", "outcome": "confirmed"}
    )
    invalid, wrong = tools.call("give_feedback", {"memory_id": fact_id, "outcome": "maybe"})

    # THEN each is an error result the model can read, and nothing was counted
    assert refused and missing and wrong
    assert not_experience.startswith("The memory service refused give_feedback:")
    assert "not an experience" in not_experience
    assert unknown.startswith("Not found:")
    assert invalid == (
        "Invalid arguments for give_feedback: outcome: Input should be 'applied', 'confirmed' or 'refuted'."
    )
    assert api.feedbacks == []


# --- search_memory ----------------------------------------------------------------------------------


def test_search_sends_the_experience_filters_and_says_what_narrowed_it(api: FakeMemoryApi) -> None:
    # GIVEN
    tools = tools_for(api)
    arguments = {"kinds": ["pattern", "insight"], "min_confidence": 0.7, "patterns_first": True}

    # WHEN
    text, is_error = tools.call("search_memory", arguments)

    # THEN the filters reached the client as the contract's fields
    assert not is_error
    [(_, request)] = api.searches
    assert (request.kinds, request.min_confidence, request.patterns_first) == (
        [MemoryKind.PATTERN, MemoryKind.INSIGHT],
        0.7,
        True,
    )
    # AND the answer says what was searched, so "nothing" is not read as "no memories at all"
    assert text == (
        "No memories found (grain all, any time, kinds pattern, insight, confidence at least 0.7, "
        "patterns first)."
    )


def test_a_search_without_experience_filters_sends_none_and_reads_as_before(api: FakeMemoryApi) -> None:
    # GIVEN
    tools = tools_for(api)
    [memory_id] = ID.findall(tools.call("remember", {"content": "Alice prefers email."})[0])

    # WHEN
    text, _ = tools.call("search_memory", {"query": "email"})

    # THEN
    [(_, request)] = api.searches
    assert (request.kinds, request.min_confidence, request.patterns_first) == ([], None, None)
    assert text.splitlines() == [
        "1 memory (grain all, any time), best match first:",
        f"[2026-11-22 · working] Alice prefers email. (id {memory_id})",
    ]


def test_a_pattern_shows_its_kind_confidence_and_evidence_in_either_kind_of_search(
    api: FakeMemoryApi,
) -> None:
    # GIVEN a pattern the service recognised, confirmed five times and refuted once
    api.summaries = [pattern(confirmations=5, refutations=1, confidence=0.82)]
    tools = tools_for(api)

    # WHEN it is found in memory alone, then in memory and shared knowledge
    alone, _ = tools.call("search_memory", {"patterns_first": True})
    blended, _ = tools.call("search_memory", {"query": "uploads", "sources": ["private", "shared"]})

    # THEN its line carries its kind, its confidence and the evidence, after the source tag
    assert alone.splitlines()[1] == (
        "[2026-11-20 · working · pattern · confidence 0.82 (5 confirmed, 1 refuted)] "
        f"Large uploads time out unless batched. (id {PATTERN_ID})"
    )
    assert blended.splitlines()[1] == (
        "[2026-11-20 · working · private · pattern · confidence 0.82 (5 confirmed, 1 refuted)] "
        f"Large uploads time out unless batched. (id {PATTERN_ID})"
    )


@pytest.mark.parametrize(
    ("confirmations", "refutations", "label"),
    [
        (0, 0, "pattern · confidence 0.82"),
        (3, 0, "pattern · confidence 0.82 (3 confirmed)"),
        (0, 1, "pattern · confidence 0.82 (1 refuted)"),
        (5, 1, "pattern · confidence 0.82 (5 confirmed, 1 refuted)"),
    ],
)
def test_the_evidence_is_named_only_when_there_is_some(
    confirmations: int, refutations: int, label: str
) -> None:
    # WHEN / THEN
    assert experience_label("pattern", 0.8234, confirmations, refutations) == label


def test_a_superseded_memory_reads_as_no_longer_holding_and_as_of_reaches_the_search() -> None:
    # GIVEN a search result a newer memory replaced, and a current one
    base = {
        "grain": "working", "time_key": None, "kind": "fact", "text": "", "score": 0.5, "similarity": 0.5,
        "recency": 0.5, "importance": 0.5, "topic": None, "user_id": None, "conversation_id": None,
        "source": None, "metadata": {}, "tags": [],
    }  # fmt: skip
    old = SearchResult.model_validate(
        {**base, "id": "mem_old", "content": "I live in Berlin.", "occurred_at": "2026-03-10T09:00:00Z",
         "current": False, "valid_to": "2026-06-12T09:00:00Z", "superseded_by": "mem_new"}
    )  # fmt: skip
    new = SearchResult.model_validate(
        {**base, "id": "mem_new", "content": "I moved to Lisbon.", "occurred_at": "2026-06-12T09:00:00Z",
         "supersedes": ["mem_old"]}
    )  # fmt: skip
    # WHEN they are written for the model
    text = search_results_text([new, old], "grain all, any time")
    # THEN the current one reads as before and the old one says since when it no longer holds
    assert text.splitlines()[1:] == [
        "[2026-06-12 · working] I moved to Lisbon. (id mem_new)",
        "[2026-03-10 · working · no longer holds since 2026-06-12, see mem_new] I live in Berlin."
        " (id mem_old)",
    ]
    assert "as_of" in SearchMemoryArgs.model_fields
