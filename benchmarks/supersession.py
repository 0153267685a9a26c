"""Precision and recall of write-time supersession (`agent_memory.supersession.rules.claims`) on a
labelled set of pairs: updates, restatements (paraphrases) and unrelated facts.

    python benchmarks/supersession.py [--pairs 300] [--seed 11]

Why generated, and why in two halves: no public set labels "this memory updates that one" for
assistant memories, and the decision must hold on wording it was not tuned on. So the pairs are
made from two *families* of phrasings that share no sentence shape: half A (used while writing and
tuning the patterns) and half B (only ever reported). Each pair is an older and a newer memory of
one user, labelled:

* ``update``: the same attribute with another value ("I live in Berlin" → "I moved to Lisbon");
* ``restatement``: the same attribute and value in other words (not an update);
* ``unrelated``: two facts that both hold: different attributes, the same attribute of another
  person ("my sister lives in Rome"), or a trap that only looks like a change ("I went to Berlin
  for a conference" next to "I live in Lisbon").

Printed per half: precision and recall of ``update`` (the decision that changes what search
prefers), the accuracy on restatements, and the confusion table; written to
``benchmarks/results/supersession[-...].json``.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import _corpus
from agent_memory.supersession.rules.claims import Relation, relate

CITIES = [
    "Berlin",
    "Lisbon",
    "Madrid",
    "Oslo",
    "Vienna",
    "Porto",
    "Dublin",
    "Warsaw",
    "Kyoto",
    "Austin",
    "Lyon",
    "Bergen",
]
COMPANIES = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark Industries",
    "Wayne Enterprises",
    "Soylent",
    "Vandelay",
    "Tyrell",
]
ROLES = [
    "teacher",
    "nurse",
    "designer",
    "developer",
    "lawyer",
    "architect",
    "accountant",
    "engineer",
    "pharmacist",
    "manager",
]
DRINKS = [
    "green tea",
    "black coffee",
    "oat milk latte",
    "sparkling water",
    "espresso",
    "chai",
    "mint tea",
    "hot chocolate",
]
PARTNERS = ["Sam", "Alex", "Jordan", "Maria", "Tom", "Priya", "Lena", "Omar"]
EVENTS = ["team offsite", "dentist appointment", "quarterly review", "book club meeting", "product launch"]
DAYS = [
    "Monday, March 3",
    "Friday, April 7",
    "Tuesday",
    "June 12",
    "Thursday at 10",
    "May 20",
    "Saturday",
    "October 1",
]

#: Two families of phrasings per attribute: (state a value, state a new value).
FAMILIES: dict[str, dict[str, tuple[list[str], list[str]]]] = {
    "A": {
        "residence": (
            ["I live in {v}, in a flat near the station.", "I live in {v} with two cats."],
            ["I moved to {v} last week, my new flat is in the old town.", "I moved to {v} in spring."],
        ),
        "employer": (
            ["I work at {v} as an analyst.", "I work for {v} on the payments team."],
            ["I just joined {v}.", "I started at {v} on Monday."],
        ),
        "role": (["I'm a {v}.", "I'm a {v} at a small firm."], ["I work as a {v} now.", "I'm now a {v}."]),
        "favourite": (
            ["My favourite drink is {v}.", "My favourite drink is {v}, no question."],
            ["I switched from {o} to {v}.", "My favourite drink is now {v}."],
        ),
        "partner": (
            ["My partner is {v}.", "My partner is {v}, we met at university."],
            ["My new partner is {v}.", "I'm dating {v} now."],
        ),
        "when": (
            ["The {e} is on {v}.", "The {e} is on {v}, don't forget."],
            ["The {e} was moved to {v}.", "The {e} was rescheduled to {v}."],
        ),
    },
    "B": {
        "residence": (
            ["We're based in {v} these days.", "My home is in {v}."],
            ["We relocated to {v} for my job.", "My new apartment is in {v}."],
        ),
        "employer": (
            ["I'm working for {v} at the moment.", "I worked at {v} for years."],
            ["I got a job at {v}.", "I was hired by {v}."],
        ),
        "role": (
            ["My job is {v}.", "I am an {v} by training."],
            ["My role is now {v}.", "I am a {v} since May."],
        ),
        "favourite": (
            ["My preferred drink is {v}.", "My favorite drink is {v} in the mornings."],
            ["Actually I changed from {o} to {v} this year.", "My new favorite drink is {v}."],
        ),
        "partner": (
            ["My girlfriend is {v}.", "I'm married to {v}."],
            ["I'm seeing {v} now.", "My boyfriend is {v}."],
        ),
        "when": (
            ["The {e} will be on {v}.", "The {e} takes place on {v}."],
            ["The {e} got pushed to {v}.", "The {e} has been postponed to {v}."],
        ),
    },
}
VALUES = {
    "residence": CITIES,
    "employer": COMPANIES,
    "role": ROLES,
    "favourite": DRINKS,
    "partner": PARTNERS,
    "when": DAYS,
}
#: Facts that both hold: another person's, or a visit rather than a move.
TRAPS = [
    ("I live in {a}.", "My sister lives in {b}."),
    ("I live in {a}.", "I went to {b} for a conference."),
    ("I work at {c}.", "My brother works at {d}."),
    ("My favourite drink is {x}.", "I ordered {y} for the team."),
    ("The {e} is on {v}.", "The {f} is on {w}."),
]


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    label: Relation
    kind: str


def pairs(half: str, n: int, seed: int) -> list[Pair]:
    """``n`` labelled pairs of ``half``'s phrasings: a third each updates, restatements, unrelated."""
    rng = random.Random(f"{seed}-{half}")
    family = FAMILIES[half]
    out: list[Pair] = []
    for i in range(n):
        attribute = rng.choice(list(VALUES))
        v1, v2 = rng.sample(VALUES[attribute], 2)
        event = rng.choice(EVENTS)
        kind = ("update", "restatement", "unrelated")[i % 3]
        if kind == "update":
            old = rng.choice(family[attribute][0]).format(v=v1, e=event)
            new = rng.choice(family[attribute][1]).format(v=v2, o=v1, e=event)
            out.append(Pair(old, new, Relation.UPDATE, attribute))
        elif kind == "restatement":
            first, second = rng.sample(family[attribute][0], 2)
            old, new = first.format(v=v1, e=event), second.format(v=v1, e=event)
            out.append(Pair(old, new, Relation.RESTATEMENT, attribute))
        elif rng.random() < 0.5:
            other = rng.choice([a for a in VALUES if a != attribute])
            old = rng.choice(family[attribute][0]).format(v=v1, e=event)
            new = rng.choice(family[other][0]).format(v=rng.choice(VALUES[other]), e=rng.choice(EVENTS))
            out.append(Pair(old, new, Relation.UNRELATED, f"{attribute}/{other}"))
        else:
            a, b = rng.sample(CITIES, 2)
            c, d = rng.sample(COMPANIES, 2)
            x, y = rng.sample(DRINKS, 2)
            e, f = rng.sample(EVENTS, 2)
            old_t, new_t = rng.choice(TRAPS)
            fields = {
                "a": a,
                "b": b,
                "c": c,
                "d": d,
                "x": x,
                "y": y,
                "e": e,
                "f": f,
                "v": rng.choice(DAYS),
                "w": rng.choice(DAYS),
            }
            out.append(Pair(old_t.format(**fields), new_t.format(**fields), Relation.UNRELATED, "trap"))
    return out


def evaluate(labelled: list[Pair]) -> dict[str, Any]:
    confusion: Counter[tuple[str, str]] = Counter()
    misses: list[dict[str, str]] = []
    for pair in labelled:
        got = relate(pair.new, pair.old).relation
        confusion[(pair.label.value, got.value)] += 1
        if got is not pair.label and len(misses) < 12:
            misses.append({"old": pair.old, "new": pair.new, "label": pair.label.value, "got": got.value})
    tp = confusion[("update", "update")]
    predicted = sum(v for (label, got), v in confusion.items() if got == "update")
    actual = sum(v for (label, got), v in confusion.items() if label == "update")
    restated = sum(v for (label, got), v in confusion.items() if label == "restatement")
    return {
        "pairs": len(labelled),
        "update_precision": round(100 * tp / predicted, 1) if predicted else None,
        "update_recall": round(100 * tp / actual, 1) if actual else None,
        "restatement_kept_apart": round(100 * confusion[("restatement", "restatement")] / restated, 1)
        if restated
        else None,
        "confusion": {f"{label}->{got}": v for (label, got), v in sorted(confusion.items())},
        "misses": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    result: dict[str, Any] = {"benchmark": "supersession", "parameters": vars(args)}
    for half in ("A", "B"):
        report = evaluate(pairs(half, args.pairs, args.seed))
        result[half] = report
        role = "tuned on" if half == "A" else "held out"
        print(
            f"half {half} ({role}): {report['pairs']} pairs, update precision "
            f"{report['update_precision']} %, recall {report['update_recall']} %, "
            f"restatements kept apart {report['restatement_kept_apart']} %"
        )
        print(f"  {report['confusion']}")
    name = _corpus.result_name("supersession", vars(args), {"pairs": 300, "seed": 11})
    print(f"written to {_corpus.write_result(name, result)}")


if __name__ == "__main__":
    main()
