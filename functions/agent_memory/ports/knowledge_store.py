"""The knowledge store's port: a tenant's shared documents and their passages (part of
`agent_memory.ports.MemoryStore`, kept in a module of its own)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from agent_memory.knowledge.rules.passages import DocumentPage, KnowledgeDocument, Passage, PassageCandidate
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


class DocumentLookup(Protocol):
    """A document by id."""

    def get_document(self, tenant_id: str, doc_id: str) -> KnowledgeDocument | None: ...


class DocumentListing(Protocol):
    """A tenant's documents, page by page."""

    def list_documents(self, tenant_id: str, cursor: str | None = None, limit: int = 50) -> DocumentPage:
        """The tenant's documents by id, paginated (the text is left out: ``text`` is empty)."""
        ...


class DocumentPassages(Protocol):
    """A document's passages."""

    def passages(self, tenant_id: str, doc_id: str) -> builtins.list[Passage]:
        """The document's passages, in document order."""
        ...


class DocumentDeletes(Protocol):
    """Documents deleted, with a tombstone."""

    @writes
    def delete_document(self, tenant_id: str, doc_id: str, at: datetime) -> int:
        """Remove the document and every passage of it, and leave a tombstone at ``at`` (a put
        accepted before it is not applied); the number of passages removed."""
        ...


class DocumentTombstones(Protocol):
    """When a document was deleted (a put accepted before it is not applied)."""

    def deleted_at(self, tenant_id: str, doc_id: str) -> datetime | None:
        """When the document was last deleted (its tombstone), if it was."""
        ...


class DocumentPuts(Protocol):
    """A document version stored with its passages."""

    @writes
    def put_document(self, document: KnowledgeDocument, passages: Sequence[StoredPassage]) -> None:
        """Store the document and exactly these passages, in one step: the passages of any
        version stored before are gone when this returns, and none are visible before."""
        ...


class PassageSearch(Protocol):
    """Passages by meaning and by words."""

    def search_passages(self, query: PassageQuery) -> builtins.list[PassageCandidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by passage id."""
        ...


class DocumentHits(Protocol):
    """Counts of searches that returned a document's passages."""

    @counts
    def record_document_hits(self, tenant_id: str, doc_ids: Sequence[str], at: datetime) -> None:
        """Best effort: count that searches returned passages of these documents."""
        ...


class KnowledgeStore(
    DocumentLookup,
    DocumentListing,
    DocumentPassages,
    DocumentDeletes,
    DocumentTombstones,
    DocumentPuts,
    PassageSearch,
    DocumentHits,
    Protocol,
):
    """A tenant's shared knowledge: documents whole, and their passages with vectors (a sibling
    of the memory store: no agent, no grain, nothing the cascade or retention touches)."""


class ManagedKnowledge(DocumentLookup, DocumentListing, DocumentPassages, DocumentDeletes, Protocol):
    """What the knowledge API reads and deletes (`knowledge.documents.DocumentsService`)."""


class WritableKnowledge(DocumentLookup, DocumentTombstones, DocumentPuts, Protocol):
    """What storing a document version needs (`knowledge.documents.KnowledgeWriter`)."""


class SearchableKnowledge(PassageSearch, DocumentHits, Protocol):
    """What a search of shared knowledge needs (`recall.search`)."""
