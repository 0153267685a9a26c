"""The update judge on the CPU: an older and a newer statement of one person, read together.

Trained by ``training/train_update_judge.py`` (`minilm_judge` says what both judges share): the
probability that the newer statement replaces a value the older one stated. The writer asks it
(`supersession.marking`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_memory.adapters.judges.minilm_judge import MiniLmJudge, segments

MODEL_ID = "minilm-update-judge-int8-v1"
#: The shipped weights (training/train_update_judge.py; training/README.md says how they were made).
MODEL_PATH = Path(__file__).with_name("minilm_update_judge.int8.onnx")


class MiniLmUpdateJudge(MiniLmJudge):
    """Implements the `UpdateJudge` port."""

    name = "update judge"
    setting = "AGENT_MEMORY_UPDATE_JUDGE"
    default_model = MODEL_PATH

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def replaces(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.probabilities([segments(older, newer) for older, newer in pairs])
