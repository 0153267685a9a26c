"""What an agent learned from outcomes: experiences, their confidence, and how feedback moves it.

An experience is a memory of kind ``success``, ``failure``, ``insight`` or ``pattern``
(`records.EXPERIENCE_KINDS`) that also carries what was happening (``context``), what resulted
(``outcome``), the run it came from, and a confidence in [0, 1].

**Confidence is a Beta posterior.** A stated confidence ``c`` is a prior worth ``w``
observations (``w`` = `PRIOR_WEIGHT` for an experience an agent wrote; for a pattern the members
it was recognised from, see `pattern_prior`). With ``k`` confirmations and ``r`` refutations::

    confidence = (c * w + k) / (w + k + r)

So confidence rises with evidence and falls with counter-evidence, by less the more evidence
there already is: a pattern confirmed ten times (0.95) keeps 0.88 after one refutation. An
``applied`` feedback says the agent acted on it, which is not evidence that it holds: it is
counted (``applications``) and audited but leaves the confidence as it was.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_memory.model.types import Score

#: How many observations an agent's stated confidence is worth.
PRIOR_WEIGHT = 2.0
#: The confidence of an experience written without one.
DEFAULT_CONFIDENCE = 0.5
#: Longest ``context`` / ``outcome`` / feedback ``note``, in characters.
MAX_EXPERIENCE_TEXT = 4_000
MAX_NOTE_CHARS = 1_000
MAX_RUN_ID = 128
#: The most members a pattern lists (the newest are kept).
MAX_PATTERN_MEMBERS = 500


class FeedbackOutcome(StrEnum):
    """What an agent reports about an experience it used."""

    APPLIED = "applied"  # acted on it (no evidence either way)
    CONFIRMED = "confirmed"  # it held
    REFUTED = "refuted"  # it did not


class Experience(BaseModel):
    """The learning part of an experience memory; ``confidence`` is always the posterior of the
    rest (recomputed on every construction, so it can never disagree with its evidence)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context: str | None = Field(default=None, max_length=MAX_EXPERIENCE_TEXT)
    outcome: str | None = Field(default=None, max_length=MAX_EXPERIENCE_TEXT)
    run_id: str | None = Field(default=None, max_length=MAX_RUN_ID)
    #: The confidence the experience started with, and how many observations it is worth.
    prior: Score = DEFAULT_CONFIDENCE
    prior_weight: float = Field(default=PRIOR_WEIGHT, gt=0, le=1_000_000)
    confirmations: int = Field(default=0, ge=0)
    refutations: int = Field(default=0, ge=0)
    applications: int = Field(default=0, ge=0)
    #: A pattern's members (how many experiences it was recognised from) and distinct runs.
    members: int = Field(default=0, ge=0)
    runs: int = Field(default=0, ge=0)
    #: A pattern's members' runs, in the order of its ``source_ids``: a member that retention
    #: deleted still counts toward its pattern, by the run it came from.
    member_runs: list[str] = Field(default_factory=list, max_length=MAX_PATTERN_MEMBERS)
    confidence: Score = DEFAULT_CONFIDENCE

    @model_validator(mode="before")
    @classmethod
    def _posterior(cls, data: object) -> object:
        if isinstance(data, dict):
            prior = float(data.get("prior", DEFAULT_CONFIDENCE))
            weight = float(data.get("prior_weight", PRIOR_WEIGHT))
            confirmed, refuted = int(data.get("confirmations", 0)), int(data.get("refutations", 0))
            data = {**data, "confidence": posterior(prior, weight, confirmed, refuted)}
        return data

    def after(self, outcome: FeedbackOutcome) -> Experience:
        """This experience with one more feedback of ``outcome`` counted."""
        field = {
            FeedbackOutcome.APPLIED: "applications",
            FeedbackOutcome.CONFIRMED: "confirmations",
            FeedbackOutcome.REFUTED: "refutations",
        }[outcome]
        data = self.model_dump()
        data[field] += 1
        return Experience.model_validate(data)


def posterior(prior: float, weight: float, confirmations: int, refutations: int) -> float:
    """``(prior * weight + confirmations) / (weight + confirmations + refutations)``, rounded so
    a stored confidence compares equal after a round trip."""
    value = (prior * weight + confirmations) / (weight + confirmations + refutations)
    return round(min(max(value, 0.0), 1.0), 6)


def pattern_prior(member_confidences: list[float]) -> tuple[float, float]:
    """A pattern's prior and its weight: a uniform Beta(1, 1) updated by each member as a
    fractional observation (a member of confidence 0.8 is 0.8 of a confirmation and 0.2 of a
    refutation). More agreeing members, a firmer and higher prior; members the agent doubted,
    a lower one."""
    weight = 2.0 + len(member_confidences)
    return round((1.0 + sum(member_confidences)) / weight, 6), weight
