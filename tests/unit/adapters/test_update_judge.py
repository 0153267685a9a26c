"""The shipped update judge, run for real: it loads from the package, reads each pair in its
order, takes a move for a replacement and a second value or another attribute for none
(`test_judges`: the port, the weights and the refusal without them)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from agent_memory.adapters.judges.minilm_update_judge import MiniLmUpdateJudge

BERLIN = "I live in Berlin, in a flat near Tempelhof."
MOVED = "We moved to Lisbon last month, the new flat is in Alfama."


@pytest.fixture(scope="module")
def judge() -> MiniLmUpdateJudge:
    return MiniLmUpdateJudge()


def test_a_move_is_read_as_a_replacement_and_a_second_value_or_another_attribute_as_none(
    judge: MiniLmUpdateJudge,
) -> None:
    # GIVEN a move, a second instrument beside the first, another attribute of the same topic and
    # two unrelated statements
    pairs = [
        (BERLIN, MOVED),
        ("I play the guitar in a band.", "Bought a secondhand keyboard to mess around with."),
        (BERLIN, "I work in Potsdam three days a week."),
        ("My manager is Priya.", "The canteen does a great curry on Fridays."),
    ]
    # WHEN the judge reads them
    probabilities = judge.replaces(pairs)
    # THEN only the move is likely a replacement
    assert probabilities[0] > 0.5
    assert all(p < 0.5 for p in probabilities[1:])
    # AND each pair is read alone: the same pair gives the same probability in another batch
    again = judge.replaces([pairs[2], pairs[0]])
    assert again == pytest.approx([probabilities[2], probabilities[0]], abs=1e-6)
    assert judge.replaces([]) == []
