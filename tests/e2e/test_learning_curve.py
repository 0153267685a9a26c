"""The learning curve through the HTTP API of the local runtime: a simulated agent reviews the
same document set ten times (benchmarks/learning_curve.py is the simulation and prints the
curve); patterns appear once the threshold is met, confidence rises with confirmation and falls
with refutation, and the last run gets its patterns first."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from urllib.error import HTTPError

import pytest
from tests.e2e.conftest import unique
from tests.environment import configure_local_env

from agent_memory import container
from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from learning_curve import Http, RunRecord, simulate


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shared local runtime's settings, with the similarity bound set for the hashing
    embedder (its cosines sit higher than a neural model's: 0.85 there is 0.7 for MiniLM)."""
    with pytest.MonkeyPatch.context() as mp:
        data_dir = tmp_path_factory.mktemp("e2e") / "data"
        configure_local_env(mp, data_dir)
        mp.setenv("AGENT_MEMORY_PATTERN_SIMILARITY", "0.85")
        container.reset()
        yield data_dir
        container.reset()


@pytest.fixture(scope="module")
def reviewer(runtime: LocalRuntime) -> Http:
    _, key = runtime.keys.create(NewKey(unique("t"), "pro", admin=True))
    return Http(runtime.url, key)


@pytest.fixture(scope="module")
def curve(reviewer: Http) -> list[RunRecord]:
    return simulate(reviewer, "reviewer")


def _by_issue(record: RunRecord) -> dict[str, float]:
    return {p.issue: p.confidence for p in record.patterns}


def test_patterns_appear_once_the_threshold_is_met_and_not_before(curve: list[RunRecord]) -> None:
    # WHEN / THEN nothing after runs 1-2 (three members from two runs needed); the three issues
    # seen in every early run after run 3; the late issue once it has three runs behind it
    assert [len(r.patterns) for r in curve[:2]] == [0, 0]
    assert set(_by_issue(curve[2])) == {"alt-text", "style-guide-link", "date-format"}
    assert "glossary" not in _by_issue(curve[6])
    assert set(_by_issue(curve[7])) == {"alt-text", "style-guide-link", "date-format", "glossary"}
    assert all("noise" not in _by_issue(r) for r in curve)


def test_confidence_rises_with_confirmation_and_falls_with_refutation(curve: list[RunRecord]) -> None:
    # GIVEN the confidence of each pattern after each run
    alt = [_by_issue(r)["alt-text"] for r in curve[2:]]
    dates = [_by_issue(r)["date-format"] for r in curve[2:]]
    # WHEN / THEN confirmed every run: up each run; fixed after run 5: down every run after it
    assert all(b > a for a, b in pairwise(alt))
    assert dates[-1] < dates[2] and all(b < a for a, b in pairwise(dates[3:]))
    assert curve[-1].applied["date-format"] == "refuted" and curve[-1].applied["alt-text"] == "confirmed"
    final = {p.issue: p for p in curve[-1].patterns}
    assert (final["alt-text"].confirmations, final["alt-text"].refutations) == (7, 0)
    assert final["date-format"].refutations == 5


def test_the_last_run_retrieves_its_patterns_first(curve: list[RunRecord]) -> None:
    # WHEN / THEN the first results of a patterns-first search are the patterns above the bar
    last = curve[-1]
    confident = [p for p in curve[-2].patterns if p.confidence >= 0.5]
    assert last.first_results[: len(confident)] == ["pattern"] * len(confident)
    assert len(confident) >= 3


def test_a_confidence_floor_through_the_api_keeps_only_what_is_that_sure(
    curve: list[RunRecord], reviewer: Http
) -> None:
    # WHEN the agent asks for what it is at least 0.7 sure of
    path = "/v1/agents/reviewer/memories/search"
    sure = reviewer("POST", path, {"query": "handbook review", "min_confidence": 0.7, "max_results": 50})
    # THEN experiences at or above the floor only: the refuted date-format pattern is not among them
    confidences = [r["experience"]["confidence"] for r in sure["results"]]
    assert confidences and min(confidences) >= 0.7
    assert "date-format" not in {issue for issue, p in _final(curve).items() if p >= 0.7}
    assert all("date format" not in r["content"].lower() for r in sure["results"] if r["kind"] == "pattern")


def test_another_tenant_neither_sees_nor_confirms_the_patterns(
    curve: list[RunRecord], runtime: LocalRuntime
) -> None:
    # GIVEN another tenant's key, for an agent of the same name
    _, key = runtime.keys.create(NewKey(unique("t"), "pro", admin=True))
    stranger = Http(runtime.url, key)
    pattern = curve[-1].patterns[0].id
    # WHEN it searches for patterns and posts feedback on one of the reviewer's
    found = stranger("POST", "/v1/agents/reviewer/memories/search", {"kinds": ["pattern"]})
    # THEN nothing of the other tenant, and the feedback is a 404
    assert found["results"] == []
    with pytest.raises(HTTPError) as refused:
        stranger("POST", f"/v1/agents/reviewer/memories/{pattern}/feedback", {"outcome": "refuted"})
    assert refused.value.code == 404


def _final(curve: list[RunRecord]) -> dict[str, float]:
    return _by_issue(curve[-1])
