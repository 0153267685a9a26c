"""Models of the HTTP contract (v1) for shared knowledge: documents put, listed, read, deleted.

A document's text is bounded (`knowledge.rules.passages.MAX_DOCUMENT_CHARS`) so that it travels the write
queue whole; its passages are made by the service (`knowledge.rules.passages.split_passages`), never sent.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agent_memory.contract.strict import STRICT as _STRICT
from agent_memory.knowledge.rules.passages import (
    MAX_DOCUMENT_CHARS,
    MAX_TITLE_CHARS,
    MAX_URI_CHARS,
    PASSAGE_CHARS,
    DocumentFormat,
    DocumentVersion,
    KnowledgeDocument,
    NewDocument,
    Passage,
    PutOutcome,
    check_validity,
    seen,
)
from agent_memory.model.limits import MAX_TAGS
from agent_memory.model.types import Day, Tag

if TYPE_CHECKING:  # read by attribute; importing the ports at run time would make the client need numpy
    from agent_memory.ports import DocumentPage


class DocumentBody(BaseModel):
    """``PUT /v1/knowledge/documents/{doc_id}``: one version of a document (idempotent by id and
    version: the same version with the same content again changes nothing, with other content is
    a 409)."""

    model_config = _STRICT

    version: DocumentVersion = Field(description="Names this text (v3, 2026-11-01, a commit...).")
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    text: str = Field(
        max_length=MAX_DOCUMENT_CHARS,
        description=f"The document (markdown or plain text), at most {MAX_DOCUMENT_CHARS} characters. "
        f"It is split into passages of at most {PASSAGE_CHARS} characters at headings, paragraphs "
        "and sentence ends.",
    )
    format: DocumentFormat = Field(default="markdown", description="markdown: cut at headings too.")
    source_uri: str | None = Field(
        default=None, max_length=MAX_URI_CHARS, description="Where it is published."
    )
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    valid_from: Day | None = Field(
        default=None, description="First day it holds (searches as of earlier skip it)."
    )
    valid_until: Day | None = Field(default=None, description="Last day it holds.")

    @field_validator("title", "text")
    @classmethod
    def _visible(cls, value: str) -> str:
        return seen(value)

    @model_validator(mode="after")
    def _validity(self) -> DocumentBody:
        check_validity(self.valid_from, self.valid_until)
        return self

    def to_new(self, redact: Callable[[str], str] | None = None) -> NewDocument:
        """The document to store; ``redact`` (redaction on write) applied to its title and text."""
        return NewDocument(
            version=self.version,
            title=redact(self.title) if redact is not None else self.title,
            text=redact(self.text) if redact is not None else self.text,
            format=self.format,
            source_uri=self.source_uri,
            tags=tuple(self.tags),
            valid_from=self.valid_from,
            valid_until=self.valid_until,
        )


class DocumentPutResponse(BaseModel):
    doc_id: str
    version: str
    status: Literal["accepted", "unchanged"] = Field(
        description="accepted (202): queued, searchable within seconds; unchanged (200): this version "
        "with this content is stored already."
    )
    passages: int = Field(description="How many passages it is split into.")

    @classmethod
    def of(cls, outcome: PutOutcome) -> DocumentPutResponse:
        d = outcome.document
        return cls(doc_id=d.doc_id, version=d.version, status=outcome.status.value, passages=d.passages)


class DocumentOut(BaseModel):
    doc_id: str
    version: str
    title: str
    format: DocumentFormat
    source_uri: str | None
    tags: list[str]
    valid_from: date | None
    valid_until: date | None
    passages: int
    created_at: datetime
    updated_at: datetime
    hits: int = Field(description="Search results its passages have been.")
    last_hit_at: datetime | None
    text: str | None = Field(
        default=None, description="The whole text (reading one document; not in a listing)."
    )

    @classmethod
    def of(cls, d: KnowledgeDocument, *, whole: bool) -> DocumentOut:
        return cls(
            **d.model_dump(exclude={"tenant_id", "content_hash", "text"}),
            text=d.text if whole else None,
        )


class DocumentsResponse(BaseModel):
    documents: list[DocumentOut]
    next_cursor: str | None
    pending: int = Field(description="Documents accepted and not yet stored.")

    @classmethod
    def of(cls, page: DocumentPage, pending: int) -> DocumentsResponse:
        return cls(
            documents=[DocumentOut.of(d, whole=False) for d in page.documents],
            next_cursor=page.next_cursor,
            pending=pending,
        )


class PassageOut(BaseModel):
    id: str
    ordinal: int
    heading_path: list[str]
    text: str
    start: int
    end: int

    @classmethod
    def of(cls, p: Passage) -> PassageOut:
        return cls(
            id=p.id, ordinal=p.ordinal, heading_path=p.heading_path, text=p.text, start=p.start, end=p.end
        )


class PassagesResponse(BaseModel):
    doc_id: str
    version: str
    passages: list[PassageOut]


class DocumentDeleteResponse(BaseModel):
    doc_id: str
    passages_removed: int = Field(description="Passages gone from search (0: nothing was stored).")
