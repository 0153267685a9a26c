"""Models of the HTTP contract (v1) for experiences: what an experience shows, feedback on one,
and a run of pattern recognition."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.experience.rules.confidence import MAX_NOTE_CHARS, Experience, FeedbackOutcome

if TYPE_CHECKING:  # read by attribute; importing it at run time would make the client need numpy
    from agent_memory.derived.rules.patterns import PatternReport


class ExperienceOut(BaseModel):
    """An experience's learning part: how sure the agent is, and on what evidence."""

    context: str | None
    outcome: str | None
    run_id: str | None
    confidence: float = Field(
        description="The posterior: (prior * prior_weight + confirmations) / "
        "(prior_weight + confirmations + refutations)."
    )
    prior: float = Field(description="The confidence it started with (a pattern's: from its members).")
    prior_weight: float = Field(description="How many observations the prior is worth.")
    confirmations: int
    refutations: int
    applications: int = Field(description="Times it was applied (counted, not evidence).")
    members: int = Field(description="A pattern's member experiences (0 for others).")
    runs: int = Field(description="The distinct runs (or days) a pattern's members came from.")

    @classmethod
    def of(cls, experience: Experience | None) -> ExperienceOut | None:
        return None if experience is None else cls.model_validate(experience.model_dump())


class FeedbackRequest(BaseModel):
    """What happened when the agent used an experience."""

    model_config = _STRICT

    outcome: FeedbackOutcome = Field(
        description="applied: acted on it (counted, confidence unchanged); confirmed: it held "
        "(confidence rises); refuted: it did not (confidence falls)."
    )
    note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS, description="Why, for the audit trail.")


class FeedbackResponse(BaseModel):
    id: str = Field(description="The experience.")
    feedback_id: str
    outcome: FeedbackOutcome
    status: Literal["queued"] = Field(
        default="queued",
        description="Counted by the writer in order with the agent's writes (under a second).",
    )


class PatternRunRequest(BaseModel):
    """Recognise patterns now, for one agent or every agent of the tenant."""

    model_config = _STRICT

    agent_id: str | None = Field(
        default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
    )


class PatternRunResponse(BaseModel):
    agents: int = Field(description="Agents whose experiences were looked at.")
    experiences: int = Field(description="Experiences clustered.")
    clusters: int = Field(description="Clusters at or above the member and run thresholds.")
    made: int = Field(description="Patterns recognised for the first time.")
    refreshed: int = Field(description="Patterns whose members, statement or prior changed.")
    unchanged: int
    dropped: int = Field(description="Patterns whose members no longer make one, deleted.")
    queued: int = Field(
        description="Agents queued for a run (every agent of the tenant, when none is named)."
    )

    @classmethod
    def of(cls, report: PatternReport) -> PatternRunResponse:
        return cls.model_validate(report, from_attributes=True)
