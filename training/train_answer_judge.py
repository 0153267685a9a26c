"""Train the answer judge: MiniLM reading a question and two statements of one person together.

    python training/train_answer_judge.py --train A,B,C,D,E,F,G,H,I,J [--test K] [--epochs N]
        [--lr F] [--out DIR] [--export]

Why a second judge: the update judge (`train_update_judge`) decides on the write path, where a
new statement is compared with the earlier one nearest to it, whatever it is about; it must be
sure (a false mark hides a fact), so it marks few of the changes said in everyday words. A search
knows more: the question, and two statements of one person it found for that question, so both
are about what is asked. "Picked up the e-bike, rode in to the office this morning" does not
read as replacing "I take bus 31 to work" on its own; asked "How do I get to work?", it does.
The answer judge reads the question and both statements in one pass and says whether the newer
one is the answer now (`recall.rules.current_first`, *Answered first*).

Data (labels: 1 when the newer statement is what the question should be answered with first):

- the knowledge-update cases of ``--train`` (benchmarks/data/knowledge_update; never the half
  held out, `train_update_judge.HELD_OUT`): each case's question with its old and new fact turns
  (1 when the case expects the new one: an update, or another attribute asked about the new
  statement's; 0 for restatements, additions and another attribute asked about the old one; a
  question about a past time is left out, as a search asked about one never calls the judge),
  the old fact against the new session's other turns, against two distractor turns said after
  it and against another case's new fact (0);
- the written pairs (``training/data/update-pairs.jsonl``) with the question written for each
  (``training/data/update-questions.jsonl``, line for line: the older statement's attribute,
  asked as its speaker would): 1 for an update, 0 otherwise, and each pair's older statement and
  question against another pair's newer statement (0).

Model, loss and export as the update judge's, which differ only in what they read: segment A is
the question and segment B the older and the newer statement joined by ``[SEP]``
(`adapters.judges.minilm_judge.segments`). ``--export`` writes ``model.int8.onnx`` and ``training.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_update_judge import (
    DEFAULT_PAIRS,
    ROOT,
    Pair,
    _fact,
    add_training_arguments,
    finish,
    load,
    sha256,
    trained,
)

DEFAULT_OUT = ROOT / ".build" / "judges" / "minilm-answer"
DEFAULT_QUESTIONS = ROOT / "training" / "data" / "update-questions.jsonl"


def asked_case_pairs(cases: Sequence[Any], pool: Sequence[str], rng: random.Random) -> list[Pair]:
    """The labelled (question, older, newer) triples of ``cases`` (module docstring)."""
    out: list[Pair] = []
    for case in cases:
        raw = case.raw
        if case.supersede and raw["expect"] == "old":
            continue  # a past time is asked about
        question, old, new = raw["question"]["text"], _fact(case, "old"), raw["new"]
        label, kind = int(raw["expect"] == "new"), f"fact-{raw['category']}"
        out.append(Pair(old, _fact(case, "new"), label, kind, question))
        out += [Pair(old, t, 0, "turns", question) for j, t in enumerate(new["turns"]) if j != new["fact"]]
        later = [pool[i] for s in raw["distractors"] if s["date"] > raw["old"]["date"] for i in s["pool"]]
        out += [Pair(old, t, 0, "distractor", question) for t in rng.sample(later, min(2, len(later)))]
        others = [c for c in cases if c.half == case.half and c.id != case.id]
        if others:
            out.append(Pair(old, _fact(rng.choice(others), "new"), 0, "cross", question))
    return out


def asked_written_pairs(pairs_path: Path, questions_path: Path, rng: random.Random) -> list[Pair]:
    """The written pairs with their questions, and each crossed with another pair's newer one."""
    rows = [json.loads(line) for line in pairs_path.read_text().splitlines() if line.strip()]
    questions = [json.loads(line) for line in questions_path.read_text().splitlines() if line.strip()]
    if [q["n"] for q in questions] != list(range(1, len(rows) + 1)):
        raise SystemExit(f"{questions_path} must hold one question per line of {pairs_path}, in order")
    out = []
    for row, asked in zip(rows, questions, strict=True):
        label = str(row["label"])
        answered = int(label.startswith("update"))
        out.append(Pair(row["older"], row["newer"], answered, f"fact-{label}", asked["question"]))
    crossed = []
    for n, pair in enumerate(out):
        other = out[(n + rng.randrange(1, len(out))) % len(out)]
        crossed.append(Pair(pair.older, other.newer, 0, "cross", pair.question))
    return out + crossed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_training_arguments(parser, "A,B,C,D,E,F,G,H,I,J", DEFAULT_OUT)
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    rng = random.Random(args.seed)
    cases, pool = load(args.train)
    written = asked_written_pairs(args.pairs, args.questions, rng)
    pairs = asked_case_pairs(cases, pool, rng) + written
    answered = sum(p.label for p in pairs)
    print(f"{len(pairs)} triples ({answered} answered by the newer)", flush=True)
    data = {
        "rows": len(pairs),
        "answered_by_newer": answered,
        "sha256": {p.name: sha256(p) for p in (args.pairs, args.questions)},
    }
    model, tok, record = trained(args, pairs, data)
    tested: list[Pair] = []
    if args.test:
        test_cases, test_pool = load(args.test)
        tested = asked_case_pairs(test_cases, test_pool, random.Random(args.seed + 1))
    finish(args, model, tok, record, tested)
    return 0


if __name__ == "__main__":
    sys.exit(main())
