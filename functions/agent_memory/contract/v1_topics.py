"""The tenant's topic dictionary in the contract (v1): the body that replaces it, what it answers,
and the unknown topics proposed for it (``/v1/topics``). Importable from
`agent_memory.contract.v1` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, field_validator

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.knowledge.rules.topic_dictionary import MAX_CANONICAL_TERMS, TopicDictionary
from agent_memory.model.types import UtcDatetime

if TYPE_CHECKING:  # the store's types, read by attribute when a response is built
    from agent_memory.knowledge.rules.topic_dictionary import TopicProposal
    from agent_memory.ports import StoredTopicDictionary


class TopicDictionaryBody(BaseModel):
    """The whole dictionary, replacing the one before; ``{"terms": {}}`` removes it."""

    model_config = _STRICT

    terms: dict[str, list[str]] = Field(
        description="Canonical term -> its synonyms, e.g. "
        '{"launch date": ["release date", "go-live"]}. '
        "Terms are matched case- and space-insensitively and stored normalised.",
        max_length=MAX_CANONICAL_TERMS,
    )

    @field_validator("terms")
    @classmethod
    def _valid(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        TopicDictionary.build(value)  # blank, too long, ambiguous or too large: a 400 saying which
        return value


class TopicDictionaryResponse(BaseModel):
    """The tenant's dictionary as stored (normalised); ``terms`` is empty when it has none."""

    terms: dict[str, list[str]]
    updated_at: UtcDatetime | None = None

    @classmethod
    def of(cls, stored: StoredTopicDictionary | None) -> TopicDictionaryResponse:
        if stored is None or not stored.dictionary:
            return cls(terms={})
        return cls(terms=stored.dictionary.as_dict(), updated_at=stored.updated_at)


class TopicProposalOut(BaseModel):
    topic: str = Field(description="The topic as normalised (lower case, single spaces).")
    count: int = Field(description="How many written memories named it.")
    first_seen: UtcDatetime
    last_seen: UtcDatetime


class TopicProposalsResponse(BaseModel):
    """Unknown topics, most named first (then most recently seen)."""

    items: list[TopicProposalOut]

    @classmethod
    def of(cls, proposals: Sequence[TopicProposal]) -> TopicProposalsResponse:
        return cls(items=[TopicProposalOut.model_validate(p, from_attributes=True) for p in proposals])
