"""What both shipped judges must do, run for real: each implements its port with its weights in
the package, and refuses to start without its model."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from agent_memory.adapters.judges import minilm_answer_judge as answer
from agent_memory.adapters.judges import minilm_update_judge as update
from agent_memory.adapters.judges.minilm_judge import MiniLmJudge
from agent_memory.errors import ConfigurationError
from agent_memory.ports import AnswerJudge, UpdateJudge

JUDGES = [
    pytest.param(update.MiniLmUpdateJudge, UpdateJudge, update.MODEL_PATH, id="update"),
    pytest.param(answer.MiniLmAnswerJudge, AnswerJudge, answer.MODEL_PATH, id="answer"),
]


@pytest.mark.parametrize(("judge", "port", "weights"), JUDGES)
def test_the_shipped_judge_is_a_port_and_its_weights_are_in_the_package(
    judge: type[MiniLmJudge], port: type, weights: Path
) -> None:
    # GIVEN the judge the settings build by default
    # WHEN it is looked at
    # THEN it implements the port, and its weights sit beside it
    assert isinstance(judge(), port)
    assert weights.is_file() and weights.parent == Path(__file__).resolve().parents[3].joinpath(
        "functions", "agent_memory", "adapters", "judges"
    )


@pytest.mark.parametrize(("judge", "port", "weights"), JUDGES)
def test_a_judge_without_its_model_refuses_to_start(
    judge: type[MiniLmJudge], port: type, weights: Path, tmp_path: Path
) -> None:
    # GIVEN a model path with no file
    # WHEN a judge is made on it
    # THEN it refuses at once, naming the path
    with pytest.raises(ConfigurationError, match="not found"):
        judge(tmp_path / "missing.onnx")
