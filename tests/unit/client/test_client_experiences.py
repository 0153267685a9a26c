"""The client's experience calls over the scripted transport: `record_outcome` (one experience on the
write route), `feedback`, `run_patterns`, and the experience fields of search and context (sent
only when given, so an older server sees no change)."""

from __future__ import annotations

import typing
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError
from tests.unit.client.test_client import ACCEPTED, CONTEXT, NOW, RESULT, error, make, ok

from agent_memory.client import BadRequestError, NotFoundError
from agent_memory.client.client import ExperienceKind
from agent_memory.contract.v1_experience import PatternRunResponse
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.model.records import EXPERIENCE_KINDS, MemoryKind

MEMORY_ID = "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa"
FEEDBACK = {"id": MEMORY_ID, "feedback_id": "fb_0123456789abcdef", "outcome": "confirmed", "status": "queued"}
REPORT = {
    "agents": 0, "experiences": 0, "clusters": 0, "made": 0, "refreshed": 0, "unchanged": 0, "dropped": 0,
    "queued": 3,
}  # fmt: skip
EXPERIENCE = {
    "context": "importing 4,000 rows", "outcome": "uploaded in 40 s", "run_id": "run-42", "confidence": 0.82,
    "prior": 0.7, "prior_weight": 6.0, "confirmations": 5, "refutations": 1, "applications": 2, "members": 4,
    "runs": 3,
}  # fmt: skip


# --- record_outcome --------------------------------------------------------------------------------


def test_record_outcome_writes_one_experience_and_returns_its_id() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))

    # WHEN
    memory_id = client.record_outcome(
        "bot",
        "Uploading in batches of 100 avoids the gateway timeout.",
        kind="insight",
        context="importing 4,000 rows",
        outcome="uploaded in 40 s",
        confidence=0.8,
        run_id="run-42",
        tags=["uploads"],
        user_id="u-7",
        metadata={"tool": "importer"},
    )

    # THEN one item went to the write route, dated by the client's clock, with no Idempotency-Key
    assert memory_id == MEMORY_ID
    [sent] = transport.sent
    assert (sent.method, sent.path) == ("POST", "/prod/v1/agents/bot/memories")
    assert "Idempotency-Key" not in sent.headers
    assert sent.json() == {
        "items": [{
            "content": "Uploading in batches of 100 avoids the gateway timeout.", "kind": "insight",
            "context": "importing 4,000 rows", "outcome": "uploaded in 40 s", "confidence": 0.8,
            "run_id": "run-42", "tags": ["uploads"], "user_id": "u-7", "metadata": {"tool": "importer"},
            "occurred_at": "2026-11-22T12:00:00Z", "links": [],
        }]
    }  # fmt: skip


def test_record_outcome_leaves_out_what_was_not_given_and_defaults_to_a_success() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))
    when = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)

    # WHEN
    client.record_outcome("bot", "Retrying fixed it.", occurred_at=when, idempotency_key="run-42/step-3")

    # THEN the service's defaults hold for every field left out (its confidence among them)
    [sent] = transport.sent
    assert sent.json() == {
        "items": [{"content": "Retrying fixed it.", "kind": "success", "occurred_at": "2026-11-01T09:30:00Z",
                   "tags": [], "links": [], "metadata": {}}]
    }  # fmt: skip
    # AND the idempotency key went out as the route's header
    assert sent.headers["Idempotency-Key"] == "run-42/step-3"


def test_write_sends_an_idempotency_key_on_every_attempt() -> None:
    # GIVEN a service that fails once, then accepts
    client, transport, _ = make(error(503, "dependency_unavailable"), ok(ACCEPTED, 202))

    # WHEN
    client.write("bot", ["x"], idempotency_key="k-1")

    # THEN the retry carries the same key and the same body, so the service replays instead of queueing twice
    first, second = transport.sent
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"] == "k-1"
    assert first.body == second.body


def test_record_outcome_refuses_what_is_not_an_experience_before_sending() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValueError, match="kind must be one of failure, insight, pattern, success"):
        client.record_outcome("bot", "Alice prefers email.", kind="fact")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="confidence"):
        client.record_outcome("bot", "x", confidence=1.5)
    with pytest.raises(ValidationError, match="run_id"):
        client.record_outcome("bot", "x", run_id="two words")
    assert transport.sent == []


def test_record_outcome_takes_the_kind_as_the_enum_too() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))

    # WHEN
    client.record_outcome("bot", "Batches of 100 always work.", kind=MemoryKind.PATTERN)

    # THEN
    assert transport.sent[0].json()["items"][0]["kind"] == "pattern"


def test_the_experience_kind_type_names_exactly_the_domains_experience_kinds() -> None:
    # WHEN / THEN
    assert set(typing.get_args(ExperienceKind)) == {k.value for k in EXPERIENCE_KINDS}


# --- feedback ----------------------------------------------------------------------------------------


def test_feedback_posts_the_outcome_and_note_to_the_memorys_feedback_route() -> None:
    # GIVEN
    client, transport, _ = make(ok(FEEDBACK, 202), ok({**FEEDBACK, "outcome": "refuted"}, 202))

    # WHEN
    confirmed = client.feedback("bot", MEMORY_ID, "confirmed", note="held on the second import")
    refuted = client.feedback("bot", MEMORY_ID, FeedbackOutcome.REFUTED)

    # THEN
    first, second = transport.sent
    assert (first.method, first.path) == ("POST", f"/prod/v1/agents/bot/memories/{MEMORY_ID}/feedback")
    assert first.json() == {"outcome": "confirmed", "note": "held on the second import"}
    assert second.json() == {"outcome": "refuted"}
    # AND the answers are typed
    assert (confirmed.id, confirmed.feedback_id, confirmed.status) == (
        MEMORY_ID,
        "fb_0123456789abcdef",
        "queued",
    )
    assert refuted.outcome is FeedbackOutcome.REFUTED


def test_feedback_refuses_a_bad_outcome_or_id_before_sending() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="outcome"):
        client.feedback("bot", MEMORY_ID, "maybe")
    with pytest.raises(ValidationError, match="note"):
        client.feedback("bot", MEMORY_ID, "applied", note="n" * 1001)
    with pytest.raises(ValueError, match="memory_id is empty"):
        client.feedback("bot", "", "applied")
    assert transport.sent == []


def test_feedback_on_a_memory_that_is_not_an_experience_or_is_gone_raises_typed_errors() -> None:
    # GIVEN
    client, transport, _ = make(error(400, "validation_error"), error(404, "not_found"))

    # WHEN / THEN
    with pytest.raises(BadRequestError):
        client.feedback("bot", MEMORY_ID, "confirmed")
    with pytest.raises(NotFoundError):
        client.feedback("bot", "mem_x/../../admin", "confirmed")
    assert transport.sent[1].path == "/prod/v1/agents/bot/memories/mem_x%2F..%2F..%2Fadmin/feedback"


# --- run_patterns ------------------------------------------------------------------------------------


def test_run_patterns_posts_to_the_admin_route_for_the_tenant_or_one_agent() -> None:
    # GIVEN
    client, transport, _ = make(ok(REPORT, 202), ok({**REPORT, "queued": 1}, 202))

    # WHEN
    every_agent = client.run_patterns()
    one_agent = client.run_patterns("support-bot")

    # THEN
    assert [(s.method, s.path) for s in transport.sent] == [("POST", "/prod/v1/admin/patterns")] * 2
    assert transport.sent[0].json() == {}
    assert transport.sent[1].json() == {"agent_id": "support-bot"}
    assert isinstance(every_agent, PatternRunResponse)
    assert (every_agent.queued, one_agent.queued) == (3, 1)


def test_run_patterns_refuses_an_agent_id_the_contract_refuses_before_sending() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="agent_id"):
        client.run_patterns("not an agent")
    assert transport.sent == []


# --- search and context -------------------------------------------------------------------------------


def test_search_sends_the_experience_fields_only_when_given_and_reads_the_experience() -> None:
    # GIVEN
    pattern = {**RESULT, "id": "pat_aaaaaaaaaaaaaaaaaaaaaaaaaa", "kind": "pattern", "experience": EXPERIENCE}
    client, transport, _ = make(ok({"results": [pattern, RESULT]}), ok({"results": []}))

    # WHEN
    found = client.search(
        "bot", "uploads", kinds=["pattern", "insight"], min_confidence=0.7, patterns_first=True,
        pattern_confidence=0.8,
    )  # fmt: skip
    client.search("bot", "uploads")

    # THEN
    first, second = (s.json() for s in transport.sent)
    sent = {k: first[k] for k in ("kinds", "min_confidence", "patterns_first", "pattern_confidence")}
    assert sent == {
        "kinds": ["pattern", "insight"], "min_confidence": 0.7, "patterns_first": True,
        "pattern_confidence": 0.8,
    }  # fmt: skip
    assert not {"min_confidence", "patterns_first", "pattern_confidence"} & set(second)
    # AND an experience comes back with its evidence; another memory with none
    hit, plain = found.results
    assert hit.experience is not None
    assert (hit.experience.confidence, hit.experience.confirmations, hit.experience.refutations) == (
        0.82,
        5,
        1,
    )
    assert plain.experience is None


def test_context_sends_kinds_and_the_experience_fields_only_when_given() -> None:
    # GIVEN
    client, transport, _ = make(ok(CONTEXT), ok(CONTEXT))

    # WHEN
    client.context("bot", "uploads", kinds=["pattern"], min_confidence=0.6, patterns_first=True)
    client.context("bot", "uploads")

    # THEN
    first, second = (s.json() for s in transport.sent)
    assert (first["kinds"], first["min_confidence"], first["patterns_first"]) == (["pattern"], 0.6, True)
    assert not {"kinds", "min_confidence", "patterns_first", "pattern_confidence"} & set(second)


def test_experience_fields_the_contract_refuses_fail_before_anything_is_sent() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="min_confidence"):
        client.search("bot", "x", min_confidence=1.2)
    with pytest.raises(ValidationError, match="kinds"):
        client.context("bot", "x", kinds=["lesson"])
    assert transport.sent == []


def test_the_clock_dates_an_outcome_recorded_without_a_time() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))

    # WHEN
    client.record_outcome("bot", "x", kind="failure")

    # THEN
    assert transport.sent[0].json()["items"][0]["occurred_at"] == NOW.isoformat().replace("+00:00", "Z")
