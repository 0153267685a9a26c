"""Per-tenant topic dictionaries, and the unknown topics writes named (`domain.topics`)."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from agent_memory.knowledge.rules.topic_dictionary import TopicDictionary, TopicProposal

__all__ = ["StoredTopicDictionary", "TopicStore"]


@dataclass(frozen=True, slots=True)
class StoredTopicDictionary:
    """A tenant's topic dictionary as stored, and when it was last replaced."""

    dictionary: TopicDictionary
    updated_at: datetime


class TopicStore(Protocol):
    """Per-tenant topic dictionaries and the unknown topics writes named (`domain.topics`).

    Every method takes the tenant from the caller's key; nothing here reads across tenants.
    """

    def get_dictionary(self, tenant_id: str) -> StoredTopicDictionary | None:
        """The tenant's dictionary, or None when it has none."""
        ...

    def put_dictionary(self, tenant_id: str, dictionary: TopicDictionary, at: datetime) -> None:
        """Replace the tenant's dictionary; an empty one removes it."""
        ...

    def record_proposals(self, tenant_id: str, counts: Mapping[str, int], at: datetime) -> None:
        """Add ``counts`` to the tenant's unknown topics (normalised), seen last at ``at``."""
        ...

    def list_proposals(self, tenant_id: str, now: datetime) -> builtins.list[TopicProposal]:
        """The tenant's unknown topics seen within `PROPOSAL_TTL_DAYS` of ``now``, in any order."""
        ...
