"""The committed knowledge-update cases are what the benchmark and its README say they are: a case
file that a hand edit broke would otherwise show up only as a lower figure, or as a half that
quietly lost cases."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

# The benchmark scripts import their helpers as top-level modules (they run as scripts).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import knowledge_update

FILES = sorted(knowledge_update.DATA.glob("cases*.jsonl"))
POOL = len((knowledge_update.DATA / "distractors.jsonl").read_text().splitlines())
UPDATES = {"update-explicit", "update-implicit", "update-third-person", "update-number"}
MUST_NOT = {"restatement", "addition", "other-attribute"}


def _cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_case_holds_the_fields_the_benchmark_reads(path: Path) -> None:
    halves = knowledge_update.file_halves(path)
    for case in _cases(path):
        # its half is the file's, its category and expectation agree with whether it supersedes
        assert case["half"] in halves, case["id"]
        assert case["category"] in UPDATES | MUST_NOT, case["id"]
        assert case["supersede"] == (case["category"] in UPDATES), case["id"]
        expected = {"new", "old"} if case["supersede"] else {"either", "old", "new"}
        assert case["expect"] in expected, case["id"]
        old, new = date.fromisoformat(case["old"]["date"]), date.fromisoformat(case["new"]["date"])
        asked = date.fromisoformat(case["question"]["date"])
        assert old < new, case["id"]
        for session in ("old", "new"):
            assert 0 <= case[session]["fact"] < len(case[session]["turns"]), case["id"]
        # distractor sessions name turns of the pool
        assert all(0 <= i < POOL for d in case["distractors"] for i in d["pool"]), case["id"]
        if case["supersede"] and case["expect"] == "old":
            # an update that expects the old statement asks about a time before the change
            assert old < asked < new, case["id"]
        else:
            assert asked > new, case["id"]


def test_ids_are_unique_across_the_halves() -> None:
    ids = Counter(case["id"] for path in FILES for case in _cases(path))
    assert [i for i, n in ids.items() if n > 1] == []


#: Each half written by writers who read neither the rules nor the earlier cases, as its README
#: counts it: its categories, and the updates asked about a time between the two statements.
WRITTEN_BLIND = {
    "J": (
        {
            "update-explicit": 14,
            "update-implicit": 13,
            "update-third-person": 10,
            "update-number": 10,
            "restatement": 9,
            "addition": 10,
            "other-attribute": 10,
        },
        ["kj-005", "kj-022", "kj-047", "kj-053"],
    ),
    "K": (
        {
            "update-explicit": 14,
            "update-implicit": 12,
            "update-third-person": 11,
            "update-number": 11,
            "restatement": 9,
            "addition": 9,
            "other-attribute": 10,
        },
        ["kk-008", "kk-022", "kk-048", "kk-059"],
    ),
}


@pytest.mark.parametrize("half", sorted(WRITTEN_BLIND))
def test_a_half_written_blind_is_as_its_readme_counts_it(half: str) -> None:
    # GIVEN the categories and past-time updates its README gives (J: 47 updates, 29 must-not;
    # K: 48 updates, 28 must-not; 76 cases each)
    categories, past_time = WRITTEN_BLIND[half]
    # WHEN the half is loaded as the benchmark loads it
    cases, _ = knowledge_update.load([half])
    # THEN its categories are as counted
    assert Counter(c.raw["category"] for c in cases) == categories
    # AND four updates ask about a time between the old statement and the new
    assert sorted(c.raw["id"] for c in cases if c.raw["supersede"] and c.raw["expect"] == "old") == past_time
