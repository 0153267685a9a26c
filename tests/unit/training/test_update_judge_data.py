"""The judges' training data: the written pairs are well formed and counted as the README says,
each has its question, the cases give their fact turns the case's label and every other pair 0,
and half N, held out, can be trained or tuned on by neither judge."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "training"))

import train_answer_judge as answer
import train_update_judge as judge

LABELS = {
    "update-explicit",
    "update-implicit",
    "update-third-person",
    "update-number",
    "restatement",
    "addition",
    "other-attribute",
}


def _rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in judge.DEFAULT_PAIRS.read_text().splitlines() if line.strip()]


def test_every_written_pair_is_labelled_once_and_counted_in_the_readme() -> None:
    # GIVEN the written pairs and the README's line for them
    rows = _rows()
    readme = (judge.ROOT / "training" / "README.md").read_text()
    # WHEN they are counted by label
    counts = Counter(r["label"] for r in rows)
    # THEN every row is an older and a newer turn with a known label, no pair twice
    assert all(set(r) == {"older", "newer", "label"} for r in rows)
    assert all(r["older"].strip() and r["newer"].strip() for r in rows)
    assert set(counts) == LABELS
    assert len({(r["older"], r["newer"]) for r in rows}) == len(rows)
    # AND the README gives the same counts
    updates = sum(n for label, n in counts.items() if label.startswith("update"))
    assert f"{len(rows):,} pairs ({updates} updates, {len(rows) - updates} must-not" in readme


def test_written_pairs_are_one_for_an_update_and_zero_for_a_must_not() -> None:
    # GIVEN the written pairs
    # WHEN they are read for training
    pairs = judge.written_pairs([judge.DEFAULT_PAIRS])
    # THEN an update category is 1 and every must-not category 0
    for pair, row in zip(pairs, _rows(), strict=True):
        assert pair.label == int(row["label"].startswith("update"))
        assert pair.kind == f"fact-{row['label']}"


def test_a_case_gives_its_fact_turns_its_label_and_every_other_pair_zero() -> None:
    # GIVEN the cases of half A
    cases, _ = judge.load(["A"])
    # WHEN their pairs are made
    pairs = judge.case_pairs(cases, random.Random(0))
    # THEN each case gives one fact pair, labelled as the case, and the rest are 0
    facts = [p for p in pairs if p.kind.startswith("fact-")]
    assert len(facts) == len(cases)
    assert sum(p.label for p in pairs) == sum(c.supersede for c in cases)
    assert {p.label for p in pairs if not p.kind.startswith("fact-")} == {0}
    # AND two fact turns of different cases are paired for each case, as 0
    assert sum(p.kind == "cross" for p in pairs) == 2 * len(cases)


def test_a_crossed_pair_puts_one_pairs_older_turn_against_anothers_newer() -> None:
    # GIVEN three written pairs
    written = judge.written_pairs([judge.DEFAULT_PAIRS])[:3]
    # WHEN they are crossed
    crossed = judge.crossed(written, random.Random(0))
    # THEN each older turn meets a newer turn of another pair, as 0
    for pair, cross in zip(written, crossed, strict=True):
        assert cross.older == pair.older and cross.newer != pair.newer
        assert (cross.label, cross.kind) == (0, "cross")


@pytest.mark.parametrize("parser", [judge._parser, answer._parser])
@pytest.mark.parametrize("flag", ["--train", "--test"])
def test_half_n_is_held_out_from_training_and_tuning(flag: str, parser: Any) -> None:
    # GIVEN a run of either judge's training that names half N
    # WHEN its arguments are read
    # THEN it is refused
    with pytest.raises(SystemExit, match="held out"):
        parser().parse_args([flag, "A,N"])


def test_every_written_pair_has_its_question_line_for_line() -> None:
    # GIVEN the written pairs and the questions written for them
    lines = answer.DEFAULT_QUESTIONS.read_text().splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    # WHEN they are read for the answer judge
    pairs = answer.asked_written_pairs(answer.DEFAULT_PAIRS, answer.DEFAULT_QUESTIONS, random.Random(0))
    # THEN each pair has its question, line for line, labelled as the pair, then each crossed as 0
    rows = _rows()
    assert [q["n"] for q in questions] == list(range(1, len(rows) + 1))
    assert all(q["question"].strip() and len(q["question"]) <= 160 for q in questions)
    written, crossed = pairs[: len(rows)], pairs[len(rows) :]
    for pair, row, asked in zip(written, rows, questions, strict=True):
        assert (pair.older, pair.newer, pair.question) == (row["older"], row["newer"], asked["question"])
        assert pair.label == int(row["label"].startswith("update"))
    assert len(crossed) == len(rows) and {p.label for p in crossed} == {0}
    assert all(c.question == w.question and c.newer != w.newer for c, w in zip(crossed, written, strict=True))


def test_a_case_asked_about_the_present_gives_its_fact_turns_the_expected_label_and_the_rest_zero() -> None:
    # GIVEN the cases of half A
    cases, pool = judge.load(["A"])
    # WHEN the answer judge's triples are made
    pairs = answer.asked_case_pairs(cases, pool, random.Random(0))
    # THEN each case not asked about a past time gives one fact triple with its question, 1 when
    # it expects the new statement first, and every other triple is 0
    asked = [c for c in cases if not (c.supersede and c.raw["expect"] == "old")]
    facts = [p for p in pairs if p.kind.startswith("fact-")]
    assert len(facts) == len(asked)
    assert sum(p.label for p in facts) == sum(c.raw["expect"] == "new" for c in asked)
    assert {p.label for p in pairs if not p.kind.startswith("fact-")} == {0}
    assert all(p.question for p in pairs)
