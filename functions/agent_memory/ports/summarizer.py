"""The summarizer: one model call that folds dated inputs into one text (a period's summary, a
pattern, a profile, or a review of supersession pairs), and what it is asked and answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from agent_memory.model.grains import Grain

__all__ = ["Summarizer", "SummaryInput", "SummaryRequest", "SummaryText"]


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """One child of a summary as a summarizer reads it: what it is dated, and what it says."""

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One summarizer call: the children of ``period`` at ``grain``; ``part=(i, n)`` when they are
    the i-th of n chunks of a period too large for one call (the prompt says so).

    ``purpose="pattern"``: the children are experiences that say the same thing across runs,
    the most typical first; the answer is one statement of what they have in common (a
    summarizer without a model states the first). ``purpose="profile"``: the children are what
    ``subject`` said about themselves, oldest first; the answer is what is known about them.
    ``purpose="supersession"``: the children are numbered pairs of an older and a newer memory;
    the answer is one line per pair, ``"<n>: yes"`` when the newer replaces the older, else
    ``"<n>: no"`` (a summarizer without a model answers nothing)."""

    grain: Grain
    period: str
    children: Sequence[SummaryInput]
    part: tuple[int, int] | None = None
    purpose: Literal["period", "pattern", "profile", "supersession"] = "period"
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryText:
    """What one summarizer call made, and what made it (recorded on the summary).

    Token counts are the model's own (0 where the summarizer runs no model).
    """

    text: str
    model_id: str
    prompt_version: str
    input_tokens: int = 0
    output_tokens: int = 0


@runtime_checkable
class Summarizer(Protocol):
    """Folds the children of one period into one dated summary text, in one call.

    The caller keeps each call within ``max_input_chars`` of children (it folds more in chunks:
    each chunk summarized with ``part=(i, n)``, then the partial summaries summarized again), and
    relies on an answer of at most ``max_output_chars``. The same inputs give the same text (a
    model at temperature 0, or a deterministic algorithm), so re-runs are cheap to compare.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    @property
    def max_input_chars(self) -> int: ...

    @property
    def max_output_chars(self) -> int: ...

    def summarize(self, request: SummaryRequest) -> SummaryText: ...
