"""The answer judge on the CPU: a question and two statements of one person, read together.

Trained by ``training/train_answer_judge.py`` (`minilm_judge` says what both judges share): the
probability that the newer statement is what the question should be answered with now, the older
one no longer. A search asks it (`recall.rules.current_first`, *Answered first*), where both statements
were found for the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_memory.adapters.judges.minilm_judge import MiniLmJudge, segments

MODEL_ID = "minilm-answer-judge-int8-v1"
#: The shipped weights (training/train_answer_judge.py; training/README.md says how they were made).
MODEL_PATH = Path(__file__).with_name("minilm_answer_judge.int8.onnx")


class MiniLmAnswerJudge(MiniLmJudge):
    """Implements the `AnswerJudge` port."""

    name = "answer judge"
    setting = "AGENT_MEMORY_ANSWER_JUDGE"
    default_model = MODEL_PATH

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def answers(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.probabilities([segments(older, newer, question) for older, newer in pairs])
