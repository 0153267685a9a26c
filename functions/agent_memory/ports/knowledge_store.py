"""The knowledge store's port: a tenant's shared documents and their passages (part of
`agent_memory.ports.MemoryStore`, kept in a module of its own)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from agent_memory.domain.knowledge import DocumentPage, KnowledgeDocument, Passage, PassageCandidate
from agent_memory.ports.effects import counts, writes
from agent_memory.ports.embedding import Vector


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage with its embedding, as the writer hands it to the knowledge store."""

    passage: Passage
    vector: Vector


@dataclass(frozen=True, slots=True)
class PassageQuery:
    """A search of one tenant's shared knowledge. The tenant is mandatory: there is no global
    search. ``on``: only passages of documents valid that day; ``tags``: of documents with every
    one of them."""

    tenant_id: str
    vector: Vector | None = None
    text: str | None = None
    on: date | None = None
    tags: tuple[str, ...] = ()
    limit: int = 50


class KnowledgeStore(Protocol):
    """A tenant's shared knowledge: documents whole, and their passages with vectors (a sibling
    of the memory store: no agent, no grain, nothing the cascade or retention touches)."""

    @writes
    def put_document(self, document: KnowledgeDocument, passages: Sequence[StoredPassage]) -> None:
        """Store the document and exactly these passages, in one step: the passages of any
        version stored before are gone when this returns, and none are visible before."""
        ...

    def get_document(self, tenant_id: str, doc_id: str) -> KnowledgeDocument | None: ...

    def list_documents(self, tenant_id: str, cursor: str | None = None, limit: int = 50) -> DocumentPage:
        """The tenant's documents by id, paginated (the text is left out: ``text`` is empty)."""
        ...

    def passages(self, tenant_id: str, doc_id: str) -> builtins.list[Passage]:
        """The document's passages, in document order."""
        ...

    @writes
    def delete_document(self, tenant_id: str, doc_id: str, at: datetime) -> int:
        """Remove the document and every passage of it, and leave a tombstone at ``at`` (a put
        accepted before it is not applied); the number of passages removed."""
        ...

    def deleted_at(self, tenant_id: str, doc_id: str) -> datetime | None:
        """When the document was last deleted (its tombstone), if it was."""
        ...

    def search_passages(self, query: PassageQuery) -> builtins.list[PassageCandidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by passage id."""
        ...

    @counts
    def record_document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        """Best effort: count that searches returned passages of these documents."""
        ...
