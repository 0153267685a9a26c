"""The shipped answer judge, run for real: it loads from the package, reads each pair with its
question in the pairs' order, takes a changed shift or a camera sold and replaced for the answer
now and another attribute or an unrelated turn for none (`test_judges`: the port, the weights
and the refusal without them)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from agent_memory.adapters.judges.minilm_answer_judge import MiniLmAnswerJudge
from agent_memory.adapters.judges.minilm_judge import segments

NIGHTS = "I'm on nights at the depot, 10pm to 6am."
DAYS = "No more nights for me! Rostered onto days from this week, 8 till 4."
CANON = "I shoot with a Canon 700D and the kit lens."
BERLIN = "I live in Berlin, in a flat near Tempelhof."
SONY = "Sold the Canon on eBay and got a used Sony a6400 with the money."


@pytest.fixture(scope="module")
def judge() -> MiniLmAnswerJudge:
    return MiniLmAnswerJudge()


def test_a_changed_value_is_the_answer_now_and_another_attribute_or_an_unrelated_turn_is_not(
    judge: MiniLmAnswerJudge,
) -> None:
    # GIVEN a changed shift and a camera sold and replaced, each asked about, and beside them
    # another attribute of the same person and an unrelated turn
    asked = [
        ("What shift am I on?", NIGHTS, DAYS),
        ("Which camera do I use?", CANON, SONY),
        ("Where do I live?", BERLIN, "I work in Potsdam three days a week."),
        ("Who is my manager?", "My manager is Priya.", "The canteen does a great curry on Fridays."),
    ]
    # WHEN the judge reads each with its question
    probabilities = [judge.answers(q, [(older, newer)])[0] for q, older, newer in asked]
    # THEN only the changed values are likely the answer now
    assert probabilities[0] > 0.8 and probabilities[1] > 0.8
    assert all(p < 0.2 for p in probabilities[2:])
    # AND pairs are read one by one, in order: two at once give the same probabilities
    both = judge.answers("What shift am I on?", [(NIGHTS, DAYS), (CANON, SONY)])
    assert both[0] == pytest.approx(probabilities[0], abs=1e-6)
    assert judge.answers("What shift am I on?", []) == []


def test_the_question_takes_the_first_segment_and_the_statements_the_second_in_the_order_said() -> None:
    # GIVEN a question and two statements
    # WHEN they are made into the model's segments (as training/train_update_judge.py makes them)
    # THEN the question is the first, the older then the newer the second; without a question
    # the two statements are the two segments, as the update judge reads them
    assert segments(NIGHTS, DAYS, "What shift am I on?") == ("What shift am I on?", f"{NIGHTS} [SEP] {DAYS}")
    assert segments(NIGHTS, DAYS) == (NIGHTS, DAYS)
