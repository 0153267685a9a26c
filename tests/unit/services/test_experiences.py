"""Experiences on the embedded adapters: feedback counted by the writer, patterns recognised
across runs, and what a forget does to a pattern made from the forgotten experience."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.unit.services.conftest import World, make_world

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.contract.v1 import WriteRequest
from agent_memory.derived.derivation import DerivationParts
from agent_memory.derived.pattern_recognition import PatternRecognitionService
from agent_memory.derived.rules.patterns import PatternJob, PatternRules, is_recognised_pattern
from agent_memory.errors import NotFoundError, ValidationFailedError
from agent_memory.experience.feedback import FeedbackApplier, FeedbackService
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.governance.forget import ForgetService
from agent_memory.model.caller import Caller
from agent_memory.model.commands import FeedbackCommand, parse_command
from agent_memory.model.queries import SearchQuery
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports import AuditAction, AuditQuery

ACME = Caller("acme", key_id="key_a")
FINDING = "The login handler builds its SQL query from raw user input"
OTHER = "Release notes were missing the migration steps for the billing schema"


@dataclass
class Lab:
    world: World
    jobs: LocalFifoQueue
    feedback: FeedbackService
    applier: FeedbackApplier
    patterns: PatternRecognitionService

    def drain(self) -> list[str]:
        """Every queued write and feedback through the writer, as the worker would."""
        outcomes: list[str] = []
        w = self.world
        while batch := w.queue.receive(10):
            for p, m in zip(w.writer.prepare([m.body for m in batch]), batch, strict=True):
                if p.feedback is not None:
                    outcomes.append(self.applier.apply(p.feedback).value)
                else:
                    assert p.command is not None, p.poison_reason
                    outcomes.append(w.writer.apply(p.command, p.vector).value)
                del m
            w.queue.ack(m.receipt_handle for m in batch)
        return outcomes

    def experience(self, content: str, run: str, kind: str = "failure", **fields: object) -> str:
        item = {"content": content, "kind": kind, "run_id": run, **fields}
        [rid] = self.world.write.accept(
            ACME, "bot", WriteRequest.model_validate({"items": [item]}).to_new_memories()
        )
        self.world.clock.advance(minutes=1)
        return rid

    def recognise(self, stale: list[str] | None = None) -> None:
        self.patterns.run(PatternJob(tenant_id="acme", agent_id="bot", stale=stale or []))
        self.drain()

    def patterns_now(self) -> list[MemoryRecord]:
        hits = self.world.search.search(
            "acme", "bot", SearchQuery(kinds=(MemoryKind.PATTERN,), max_results=50)
        )
        return [h.record for h in hits]  # type: ignore[union-attr]

    def get(self, record_id: str) -> MemoryRecord:
        record = self.world.store.get("acme", "bot", record_id)
        assert record is not None
        return record


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    world = make_world(tmp_path, clock)
    jobs = LocalFifoQueue(tmp_path / "jobs.db", max_receive_count=1000)
    rules = PatternRules(min_members=3, min_runs=2, similarity=0.7)
    return Lab(
        world=world,
        jobs=jobs,
        feedback=FeedbackService(world.store, world.queue, world.pending, clock),
        applier=FeedbackApplier(world.store, world.pending, clock),
        patterns=PatternRecognitionService(
            DerivationParts(
                world.store,
                LocalExtractiveSummarizer(world.embedder),
                world.queue,
                world.pending,
                clock,
                timezone="UTC",
                summarizers=None,
            ),
            rules,
            world.embedder,
        ),
    )


# -- feedback -----------------------------------------------------------------------------------


def test_feedback_moves_confidence_by_the_documented_rule_and_is_audited(lab: Lab) -> None:
    # GIVEN a failure written with confidence 0.6 (a prior worth two observations)
    rid = lab.experience(FINDING, "r1", confidence=0.6, outcome="SQL injection", context="review of auth/")
    lab.drain()
    # WHEN it is confirmed twice, refuted once and applied once
    for outcome in ("confirmed", "confirmed", "refuted", "applied"):
        lab.feedback.accept(ACME, "bot", rid, FeedbackOutcome(outcome), note=f"run says {outcome}")
    assert lab.world.pending.count("acme", "bot") == 4
    outcomes = lab.drain()
    # THEN (0.6*2 + 2) / (2 + 2 + 1) = 0.64; applying counts but is no evidence
    e = lab.get(rid).experience
    assert outcomes == ["counted"] * 4
    assert e is not None and (e.confirmations, e.refutations, e.applications) == (2, 1, 1)
    assert e.confidence == pytest.approx(0.64)
    assert lab.world.pending.count("acme", "bot") == 0
    events = lab.world.store.audit_events(AuditQuery("acme", "bot", record_id=rid)).events
    feedback = [e for e in events if e.action == AuditAction.FEEDBACK]
    assert [f.detail["outcome"] for f in reversed(feedback)] == [
        "confirmed",
        "confirmed",
        "refuted",
        "applied",
    ]
    assert [f.detail["confidence"] for f in reversed(feedback)] == pytest.approx([0.733333, 0.8, 0.64, 0.64])
    assert all(f.actor == "key_a" and f.detail["note"] for f in feedback)


def test_a_redelivered_feedback_counts_once(lab: Lab) -> None:
    # GIVEN a confirmation accepted and counted
    rid = lab.experience(FINDING, "r1")
    lab.drain()
    lab.feedback.accept(ACME, "bot", rid, FeedbackOutcome.CONFIRMED, None)
    [message] = lab.world.queue.receive(1)
    command = parse_command(message.body)
    assert isinstance(command, FeedbackCommand)
    # WHEN the same message is applied twice (at-least-once delivery)
    first, second = lab.applier.apply(command), lab.applier.apply(command)
    # THEN it counted once
    assert (first.value, second.value) == ("counted", "replayed")
    assert lab.get(rid).experience.confirmations == 1  # type: ignore[union-attr]


def test_feedback_is_refused_for_memories_that_are_not_experiences_or_not_there(lab: Lab) -> None:
    # GIVEN a plain note and an experience of another tenant
    [note] = lab.world.write.accept(
        ACME, "bot", WriteRequest.model_validate({"items": [{"content": "a note"}]}).to_new_memories()
    )
    theirs = lab.world.write.accept(
        Caller("other"),
        "bot",
        WriteRequest.model_validate({"items": [{"content": FINDING, "kind": "failure"}]}).to_new_memories(),
    )[0]
    lab.drain()
    # WHEN / THEN a note takes no feedback, and another tenant's experience is not found
    with pytest.raises(ValidationFailedError, match="not an experience"):
        lab.feedback.accept(ACME, "bot", note, FeedbackOutcome.CONFIRMED, None)
    with pytest.raises(NotFoundError):
        lab.feedback.accept(ACME, "bot", theirs, FeedbackOutcome.CONFIRMED, None)
    assert lab.world.queue.receive(10) == []


def test_feedback_on_an_experience_forgotten_before_it_was_counted_changes_nothing(lab: Lab) -> None:
    # GIVEN a refutation queued, then the experience forgotten
    rid = lab.experience(FINDING, "r1")
    lab.drain()
    lab.feedback.accept(ACME, "bot", rid, FeedbackOutcome.REFUTED, None)
    lab.world.forget.forget("acme", "bot", rid, actor="key_a")
    # WHEN the writer reaches it
    outcomes = lab.drain()
    # THEN it is dropped, the record stays forgotten and nobody waits for it
    assert outcomes == ["gone"]
    assert lab.get(rid).deleted_at is not None
    assert lab.world.pending.count("acme", "bot") == 0


# -- patterns -----------------------------------------------------------------------------------


def test_a_pattern_needs_enough_members_from_enough_runs(lab: Lab) -> None:
    # GIVEN the same finding three times in ONE run, and an unrelated one
    for _ in range(3):
        lab.experience(FINDING, "r1")
    lab.experience(OTHER, "r1")
    lab.drain()
    # WHEN patterns are recognised
    lab.recognise()
    # THEN none: three repeats in one run are not a pattern across runs
    assert lab.patterns_now() == []
    # WHEN the finding comes back in a second run
    lab.experience(FINDING + " again", "r2", confidence=0.9)
    lab.drain()
    lab.recognise()
    # THEN one pattern, linking its four members, with a prior derived from them
    [pattern] = lab.patterns_now()
    assert is_recognised_pattern(pattern) and len(pattern.source_ids) == 4
    e = pattern.experience
    assert e is not None and (e.members, e.runs) == (4, 2)
    assert e.confidence == pytest.approx((1 + 0.5 * 3 + 0.9) / 6, abs=1e-6)
    assert FINDING in pattern.content


def test_recognising_again_changes_nothing_and_keeps_feedback(lab: Lab) -> None:
    # GIVEN a recognised pattern with two confirmations counted
    for run in ("r1", "r2", "r3"):
        lab.experience(FINDING, run)
    lab.drain()
    lab.recognise()
    [pattern] = lab.patterns_now()
    for _ in range(2):
        lab.feedback.accept(ACME, "bot", pattern.id, FeedbackOutcome.CONFIRMED, None)
    lab.drain()
    # WHEN the job runs again, then once more after a new member in a fourth run
    rerun = lab.patterns.run(PatternJob(tenant_id="acme", agent_id="bot"))
    queued_by_rerun = lab.world.queue.receive(10)
    lab.experience(FINDING, "r4")
    lab.drain()
    lab.recognise()
    # THEN the first re-run wrote nothing, the second refreshed the same pattern, feedback kept
    assert (rerun.made, rerun.refreshed, rerun.unchanged) == (0, 0, 1)
    assert queued_by_rerun == []
    [refreshed] = lab.patterns_now()
    assert refreshed.id == pattern.id and len(refreshed.source_ids) == 4
    assert refreshed.experience is not None and refreshed.experience.confirmations == 2
    assert refreshed.experience.runs == 4


def test_feedback_queued_before_a_refresh_is_not_lost(lab: Lab) -> None:
    # GIVEN a pattern, a confirmation queued but not yet counted, then a refresh made
    for run in ("r1", "r2", "r3"):
        lab.experience(FINDING, run)
    lab.drain()
    lab.recognise()
    [pattern] = lab.patterns_now()
    lab.feedback.accept(ACME, "bot", pattern.id, FeedbackOutcome.CONFIRMED, None)
    lab.experience(FINDING, "r4")
    lab.patterns.run(
        PatternJob(tenant_id="acme", agent_id="bot")
    )  # reads the pattern before the feedback counts
    # WHEN the writer takes the group in order: the feedback, the new member, then the refresh
    lab.drain()
    # THEN the refresh kept the confirmation counted before it was stored
    refreshed = lab.get(pattern.id)
    assert refreshed.experience is not None and refreshed.experience.confirmations == 1


def test_forgetting_a_member_hides_the_pattern_and_its_job_remakes_or_drops_it(
    lab: Lab, tmp_path: Path
) -> None:
    # GIVEN a pattern of four members from three runs
    ids = [lab.experience(FINDING, run) for run in ("r1", "r2", "r3", "r3")]
    lab.drain()
    lab.recognise()
    [pattern] = lab.patterns_now()
    forget = ForgetService(lab.world.store, LocalJobQueue(lab.jobs), lab.world.clock)
    # WHEN one member is forgotten
    result = forget.forget("acme", "bot", ids[0], actor="key_a")
    # THEN the pattern is hidden at once, and a pattern job names it
    assert pattern.id in result.stale_summaries
    assert lab.patterns_now() == []
    jobs = [json.loads(m.body) for m in lab.jobs.receive(10)]
    [job] = [j for j in jobs if j.get("job") == "patterns"]
    assert job["stale"] == [pattern.id]
    # WHEN the job runs
    lab.recognise(stale=job["stale"])
    # THEN the pattern is back under its id, without the forgotten member
    [remade] = lab.patterns_now()
    assert remade.id == pattern.id and ids[0] not in remade.source_ids and len(remade.source_ids) == 3
    # WHEN two more are forgotten, leaving one member
    for rid in ids[1:3]:
        forget.forget("acme", "bot", rid, actor="key_a")
    lab.recognise(stale=[pattern.id])
    # THEN the pattern is dropped, with the reason in the audit trail
    assert lab.patterns_now() == []
    events = lab.world.store.audit_events(AuditQuery("acme", "bot", record_id=pattern.id)).events
    assert events[0].action == AuditAction.PATTERN_DROPPED


def test_a_pattern_never_mixes_two_end_users(lab: Lab) -> None:
    # GIVEN the same finding for two end users, two runs each but too few for either alone
    for user, run in (("u1", "r1"), ("u1", "r2"), ("u2", "r1"), ("u2", "r2")):
        lab.experience(FINDING, run, user_id=user)
    lab.drain()
    # WHEN patterns are recognised
    lab.recognise()
    # THEN none: four members together, but no user has three
    assert lab.patterns_now() == []
    # WHEN u1 gets a third
    lab.experience(FINDING, "r3", user_id="u1")
    lab.drain()
    lab.recognise()
    # THEN u1's pattern holds u1's experiences only, and says whose it is
    [pattern] = lab.patterns_now()
    members = [lab.get(i) for i in pattern.source_ids]
    assert pattern.user_id == "u1" and {m.user_id for m in members} == {"u1"}


def test_a_forgotten_pattern_is_not_recognised_again_and_client_patterns_are_left_alone(lab: Lab) -> None:
    # GIVEN a recognised pattern the user forgot, and a pattern a client wrote itself
    for run in ("r1", "r2", "r3"):
        lab.experience(FINDING, run)
    lab.drain()
    lab.recognise()
    [pattern] = lab.patterns_now()
    lab.world.forget.forget("acme", "bot", pattern.id, actor="key_a")
    mine = lab.experience("Always run the linter before review", "r9", kind="pattern", confidence=0.9)
    lab.drain()
    # WHEN the job runs again
    lab.recognise()
    # THEN the forgotten one stays forgotten and the client's is untouched
    assert [p.id for p in lab.patterns_now()] == [mine]
    assert lab.get(pattern.id).deleted_at is not None


def test_search_filters_by_confidence_and_puts_patterns_first(lab: Lab) -> None:
    # GIVEN a pattern confirmed until it is sure, a doubtful insight, and a plain note that matches best
    for run in ("r1", "r2", "r3"):
        lab.experience(FINDING, run, confidence=0.8)
    lab.experience("The login handler may need review", "r4", kind="insight", confidence=0.2)
    lab.world.write.accept(
        ACME,
        "bot",
        WriteRequest.model_validate(
            {"items": [{"content": "login handler SQL query user input login handler"}]}
        ).to_new_memories(),
    )
    lab.drain()
    lab.recognise()
    [pattern] = lab.patterns_now()
    for _ in range(3):
        lab.feedback.accept(ACME, "bot", pattern.id, FeedbackOutcome.CONFIRMED, None)
    lab.drain()
    query = "login handler SQL query user input"
    # WHEN searching with a confidence floor, and with patterns first
    sure = lab.world.search.search("acme", "bot", SearchQuery(query=query, min_confidence=0.7))
    first = lab.world.search.search(
        "acme", "bot", SearchQuery(query=query, patterns_first=True, max_results=3)
    )
    # THEN only experiences at or above the floor, and the pattern leads
    assert sure and all(h.record.experience and h.record.experience.confidence >= 0.7 for h in sure)  # type: ignore[union-attr]
    assert first[0].id == pattern.id
    assert len(first) == 3


def test_two_experiences_of_one_finding_in_one_request_are_two_records(lab: Lab) -> None:
    # GIVEN one request with the same finding from two runs and with two outcomes, at one instant
    items = [
        {"content": FINDING, "kind": "failure", "run_id": "r1"},
        {"content": FINDING, "kind": "failure", "run_id": "r2"},
        {"content": FINDING, "kind": "failure", "run_id": "r2", "outcome": "fixed"},
    ]
    # WHEN it is accepted and stored
    ids = lab.world.write.accept(ACME, "bot", WriteRequest.model_validate({"items": items}).to_new_memories())
    outcomes = lab.drain()
    # THEN three records: none was taken for a retry of another
    assert len(set(ids)) == 3
    assert outcomes == ["inserted"] * 3
