"""The shipped update judge, run for real: it loads from the package, reads each pair in its
order, takes a move for a replacement and a second value or another attribute for none, and
refuses to start without its model."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from agent_memory.adapters.judges.minilm_update_judge import MODEL_PATH, MiniLmUpdateJudge
from agent_memory.errors import ConfigurationError
from agent_memory.ports import UpdateJudge

BERLIN = "I live in Berlin, in a flat near Tempelhof."
MOVED = "We moved to Lisbon last month, the new flat is in Alfama."


@pytest.fixture(scope="module")
def judge() -> MiniLmUpdateJudge:
    return MiniLmUpdateJudge()


def test_the_shipped_judge_is_a_port_and_its_weights_are_in_the_package(judge: MiniLmUpdateJudge) -> None:
    # GIVEN the judge the settings build by default
    # WHEN it is looked at
    # THEN it implements the port, and its weights sit beside it
    assert isinstance(judge, UpdateJudge)
    assert MODEL_PATH.is_file() and MODEL_PATH.parent == Path(__file__).resolve().parents[3].joinpath(
        "functions", "agent_memory", "adapters", "judges"
    )


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


def test_a_judge_without_its_model_refuses_to_start(tmp_path: Path) -> None:
    # GIVEN a model path with no file
    # WHEN a judge is made on it
    # THEN it refuses at once, naming the path
    with pytest.raises(ConfigurationError, match="not found"):
        MiniLmUpdateJudge(tmp_path / "missing.onnx")
