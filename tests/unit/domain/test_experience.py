"""The confidence rule and pattern clustering, each against a plain reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.fakes import utc

from agent_memory.derived.rules.patterns import (
    Cluster,
    Member,
    PatternRules,
    cluster,
    match,
    merged_members,
    qualifies,
)
from agent_memory.experience.rules.confidence import Experience, FeedbackOutcome, pattern_prior, posterior
from agent_memory.model.records import MemoryKind, MemoryRecord

OUTCOMES = st.lists(st.sampled_from(list(FeedbackOutcome)), max_size=40)
PRIORS = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _reference(prior: float, outcomes: list[FeedbackOutcome]) -> float:
    """Beta(2 * prior, 2 * (1 - prior)) updated by each confirmation and refutation, by hand."""
    alpha, beta = 2 * prior, 2 * (1 - prior)
    for o in outcomes:
        if o is FeedbackOutcome.CONFIRMED:
            alpha += 1
        elif o is FeedbackOutcome.REFUTED:
            beta += 1
    return alpha / (alpha + beta)


@given(PRIORS, OUTCOMES)
def test_confidence_is_the_beta_posterior_of_the_feedback(
    prior: float, outcomes: list[FeedbackOutcome]
) -> None:
    # GIVEN an experience stated at ``prior``
    e = Experience(prior=prior)
    # WHEN each feedback is counted in turn
    for o in outcomes:
        before = e.confidence
        e = e.after(o)
        # THEN each step moves it the right way (applied: not at all)
        if o is FeedbackOutcome.CONFIRMED:
            assert e.confidence >= before
        elif o is FeedbackOutcome.REFUTED:
            assert e.confidence <= before
        else:
            assert e.confidence == before
    assert e.confidence == pytest.approx(_reference(prior, outcomes), abs=1e-6)
    assert 0.0 <= e.confidence <= 1.0
    assert e.applications == outcomes.count(FeedbackOutcome.APPLIED)


def test_one_refutation_does_not_erase_a_well_confirmed_pattern() -> None:
    # GIVEN a pattern confirmed ten times
    e = Experience(prior=0.7)
    for _ in range(10):
        e = e.after(FeedbackOutcome.CONFIRMED)
    # WHEN it is refuted once
    refuted = e.after(FeedbackOutcome.REFUTED)
    # THEN it drops a little, not to the floor
    assert e.confidence == pytest.approx(0.95)
    assert 0.85 < refuted.confidence < e.confidence


@given(PRIORS, OUTCOMES)
def test_a_stored_experience_reads_back_equal_and_its_confidence_cannot_be_forged(
    prior: float, outcomes: list[FeedbackOutcome]
) -> None:
    # GIVEN an experience with feedback
    e = Experience(prior=prior)
    for o in outcomes:
        e = e.after(o)
    # WHEN its JSON comes back, and a copy claims another confidence
    back = Experience.model_validate_json(e.model_dump_json())
    forged = Experience.model_validate({**e.model_dump(), "confidence": 1.0 - e.confidence + 0.001})
    # THEN both say what the evidence says
    assert back == e
    assert forged.confidence == e.confidence


@given(st.lists(PRIORS, min_size=1, max_size=30))
def test_a_patterns_prior_rises_with_agreeing_members(confidences: list[float]) -> None:
    # WHEN / THEN a uniform prior updated by fractional members, and one more sure member lifts it
    prior, weight = pattern_prior(confidences)
    assert weight == 2 + len(confidences)
    assert prior == pytest.approx((1 + sum(confidences)) / weight, abs=1e-6)
    assert pattern_prior([*confidences, 1.0])[0] >= prior - 1e-6
    assert posterior(prior, weight, 0, 0) == pytest.approx(prior, abs=1e-6)


# -- clustering ---------------------------------------------------------------------------------


def _reference_clusters(vectors: np.ndarray, bound: float) -> list[list[int]]:
    """Average link, greedily in order, written out with plain loops."""
    unit = [v / max(float(np.linalg.norm(v)), 1e-12) for v in vectors]
    groups: list[list[int]] = []
    for i, v in enumerate(unit):
        best, best_mean = None, bound
        for g, group in enumerate(groups):
            mean = sum(float(v @ unit[j]) for j in group) / len(group)
            if mean >= best_mean:
                best, best_mean = g, mean
        if best is None:
            groups.append([i])
        else:
            groups[best].append(i)
    return groups


VECTORS = st.integers(min_value=1, max_value=25).flatmap(
    lambda n: st.lists(
        st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0]), min_size=4, max_size=4).filter(any),
        min_size=n,
        max_size=n,
    )
)


@settings(max_examples=200, deadline=None)  # a first example may wait on a loaded machine
@given(VECTORS, st.sampled_from([0.3, 0.6, 0.75, 0.9]))
def test_clusters_are_the_reference_average_link_and_cover_every_member_once(
    rows: list[list[float]], bound: float
) -> None:
    # GIVEN members with vectors
    vectors = np.asarray(rows, dtype=np.float32)
    members = [Member(f"m{i}", f"run:{i % 3}") for i in range(len(rows))]
    # WHEN they are clustered
    found = cluster(members, vectors, bound)
    # THEN the same groups as the reference, every member in exactly one, typical one inside
    assert [[int(m.id[1:]) for m in c.members] for c in found] == _reference_clusters(vectors, bound)
    ids = [m.id for c in found for m in c.members]
    assert sorted(ids) == sorted(m.id for m in members)
    assert all(c.typical in {m.id for m in c.members} for c in found)
    assert cluster(members, vectors, bound) == found  # deterministic


def test_a_cluster_is_a_pattern_only_with_enough_members_and_runs() -> None:
    # GIVEN rules of three members from two runs
    rules = PatternRules(min_members=3, min_runs=2)
    one_run = [Member(f"m{i}", "run:a") for i in range(5)]
    two_runs = [Member("m0", "run:a"), Member("m1", "run:a"), Member("m2", "day:2026-11-20")]
    # WHEN / THEN
    assert not qualifies(one_run, rules)
    assert not qualifies(two_runs[:2], rules)
    assert qualifies(two_runs, rules)


def _pattern(pid: str, members: list[str], created: int) -> MemoryRecord:
    return MemoryRecord(
        id=pid,
        tenant_id="t",
        agent_id="a",
        kind=MemoryKind.PATTERN,
        content="p",
        source_ids=members,
        content_hash="h",
        created_at=utc(2026, 11, created),
        updated_at=utc(2026, 11, created),
        occurred_at=utc(2026, 11, created),
    )


def test_each_stored_pattern_is_continued_by_the_cluster_sharing_most_with_it() -> None:
    # GIVEN two stored patterns and three clusters, two of which overlap the first
    p1, p2 = _pattern("pat_a", ["m1", "m2", "m3"], 1), _pattern("pat_b", ["m9"], 2)
    clusters = [
        Cluster((Member("m1", "r"),), "m1"),
        Cluster((Member("m2", "r"), Member("m3", "r")), "m2"),
        Cluster((Member("m9", "r"), Member("m10", "r")), "m9"),
    ]
    # WHEN they are matched
    matched = match(clusters, [p1, p2])
    # THEN the larger overlap wins the first pattern; the lone one starts a pattern of its own
    assert {c: p.id for c, p in matched.items()} == {1: "pat_a", 2: "pat_b"}


def test_a_continued_pattern_keeps_its_members_and_adds_new_ones_last() -> None:
    # GIVEN kept members and a cluster repeating one of them
    kept = [Member("m1", "r1"), Member("m2", "r2")]
    joined = [Member("m2", "r2"), Member("m3", "r3")]
    # WHEN / THEN
    assert [m.id for m in merged_members(kept, joined)] == ["m1", "m2", "m3"]
