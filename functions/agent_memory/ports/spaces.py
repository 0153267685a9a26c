"""The store's embedding spaces: vectors of a tenant's own model beside the deployment's (part of
`agent_memory.ports.MemoryStore`; see `agent_memory.tenancy.rules.embedding_spaces`).

A record has at most one vector per space. ``""`` is the deployment's space (the vector a
`StoredRecord` carries as ``vector``, None when the tenant's records are not embedded by the
deployment's model); any other space is a tenant's model (``StoredRecord.spaces``). A `put`
replaces all of a record's vectors with the ones it carries: a vector never outlives the content
it was made from. Queries name their space and read no other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_memory.model.records import MemoryRecord
from agent_memory.ports.effects import writes
from agent_memory.ports.embedding import Vector


@dataclass(frozen=True, slots=True)
class SpaceVector:
    """A record's vector in one space."""

    space: str
    vector: Vector


class EmbeddingSpaces(Protocol):
    """What the re-embedding job needs of the store."""

    def missing_in_space(self, tenant_id: str, space: str, limit: int) -> list[MemoryRecord]:
        """Up to ``limit`` of the tenant's live records (any agent) with no vector in ``space``,
        in the order they were stored (so a killed job resumes where it stopped)."""
        ...

    def count_missing(self, tenant_id: str, space: str) -> int:
        """How many of the tenant's live records have no vector in ``space``."""
        ...

    @writes
    def put_space_vectors(
        self, tenant_id: str, space: str, items: Sequence[tuple[MemoryRecord, Vector]]
    ) -> int:
        """Give each record its vector in ``space``, if it is still live and unchanged since it
        was read (the same ``updated_at``): a record changed since was embedded again by its
        writer. How many were stored."""
        ...

    @writes
    def drop_space(self, tenant_id: str, space: str) -> int:
        """Remove every vector of the tenant's records in ``space``; how many were removed."""
        ...
