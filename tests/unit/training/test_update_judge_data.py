"""The update judge's training data: the written pairs are well formed and counted as the README
says, the cases give their fact turns the case's label and every other pair 0, and half K, held
out, can be neither trained nor tuned on."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "training"))

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


@pytest.mark.parametrize("flag", ["--train", "--test"])
def test_half_k_is_held_out_from_training_and_tuning(flag: str) -> None:
    # GIVEN a run that names half K
    # WHEN its arguments are read
    # THEN it is refused
    with pytest.raises(SystemExit, match="held out"):
        judge._parser().parse_args([flag, "A,K"])
