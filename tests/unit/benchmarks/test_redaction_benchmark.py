"""The redaction benchmark (benchmarks/redaction.py): its labelled set is what it says it is (500
sentences, two disjoint halves, cards that pass Luhn, IBANs that pass mod-97, spans that point at
their values), and the held-out half stays above a floor per kind, so a change to
`writing.rules.redaction` that loses precision or recall fails here rather than in a run nobody reads."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The benchmark scripts import their helpers as top-level modules (they run as scripts).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import redaction
from agent_memory.writing.rules.redaction import PiiKind

#: Precision and recall (in %) every kind keeps on the held-out half.
FLOOR = 90.0
LABELLED = redaction.sentences()


def reference_luhn(digits: str) -> bool:
    total = sum(int(d) for d in digits[-1::-2]) + sum(sum(divmod(2 * int(d), 10)) for d in digits[-2::-2])
    return total % 10 == 0


def reference_mod97(iban: str) -> bool:
    compact = iban.replace(" ", "")
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def test_the_set_has_500_sentences_in_two_disjoint_halves_of_four_languages() -> None:
    # WHEN
    halves = {half: [s for s in LABELLED if s.half == half] for half in redaction.HALVES}

    # THEN
    assert len(LABELLED) == 500
    assert [len(h) for h in halves.values()] == [250, 250]
    assert not {s.index for s in halves["A"]} & {s.index for s in halves["B"]}
    assert not {s.text for s in halves["A"]} & {s.text for s in halves["B"]}
    assert {s.language for s in LABELLED} >= {"en", "de", "fr", "es"}


def test_the_set_is_the_same_on_every_run() -> None:
    # WHEN / THEN
    assert [s.text for s in redaction.sentences()] == [s.text for s in LABELLED]


def test_every_label_points_at_its_value_and_every_value_is_valid() -> None:
    # GIVEN
    items = [(s, item) for s in LABELLED for item in (*s.items, *s.negatives)]

    # WHEN
    cards = [i.value for _, i in items if i.kind == PiiKind.CARD]
    bad_cards = [i.value for _, i in items if i.kind == "non-luhn"]
    ibans = [i.value for _, i in items if i.kind == PiiKind.IBAN]
    bad_ibans = [i.value for _, i in items if i.kind == "bad-iban"]

    # THEN
    assert all(s.text[i.start : i.end] == i.value for s, i in items)
    assert all(i.kind in set(PiiKind) or i.kind in {*redaction.NEGATIVES, "no-secret"} for _, i in items)
    assert len(cards) > 50 and all(reference_luhn(_digits(c)) for c in cards)
    assert all(13 <= len(_digits(c)) <= 19 for c in cards)
    assert bad_cards and not any(reference_luhn(_digits(c)) for c in bad_cards)
    assert len(ibans) > 50 and all(reference_mod97(i) for i in ibans)
    assert bad_ibans and not any(reference_mod97(i) for i in bad_ibans)


def test_every_kind_and_every_hard_negative_is_in_both_halves() -> None:
    # WHEN
    kinds = {half: {i.kind for s in LABELLED if s.half == half for i in s.items} for half in redaction.HALVES}
    negatives = {
        half: {i.kind for s in LABELLED if s.half == half for i in s.negatives} for half in redaction.HALVES
    }

    # THEN
    assert kinds["A"] == kinds["B"] == {k.value for k in PiiKind}
    assert negatives["A"] == negatives["B"] == {*redaction.NEGATIVES, "no-secret"}


@pytest.mark.parametrize("kind", [k.value for k in PiiKind])
def test_the_held_out_half_keeps_precision_and_recall_above_the_floor(kind: str) -> None:
    # WHEN
    report = redaction.evaluate([s for s in LABELLED if s.half == "B"])

    # THEN
    figures = report["kinds"][kind]
    assert figures["items"] >= 30
    assert figures["recall"] >= FLOOR, report["misses"]
    assert figures["precision"] >= FLOOR, report["false_positives"]
