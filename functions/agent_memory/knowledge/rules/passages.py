"""Shared knowledge: what a whole tenant knows (specs, decision records, runbooks), as documents
split into passages.

An agent's memory is what it was told; a tenant's knowledge is what the organisation published.
A document belongs to the tenant, not to an agent: every agent of the tenant reads it, none writes
it (only an ``admin`` or ``knowledge`` key does). A document is stored whole (to read it back)
and as passages (to find it): search ranks passages, and a passage carries its document's id,
title, version and heading path so an agent can cite "per ADR-12, Consequences".

Passages are made here, deterministically, so a re-sent document makes the same passages with
the same ids (`split_passages`):

* a markdown document is cut at its headings (``#`` to ``######``), and each passage keeps the
  path of headings above it (``["Runbook", "Failover", "DNS"]``); plain text has one section;
* a section longer than `PASSAGE_CHARS` is cut at paragraph breaks, then at sentence ends, and
  a sentence longer than that at white space (never inside a word unless a word is longer);
* each passage keeps its offsets in the document's text (``text[start:end]`` is the passage).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from agent_memory.model.ids import digest
from agent_memory.model.limits import MAX_TAGS
from agent_memory.model.types import Day, Tag, TenantId, UtcDatetime, visible

#: The most characters of one passage (about 250 tokens of English): small enough that a hit is
#: one point of a document, large enough to carry its sentence's context.
PASSAGE_CHARS = 1_200
#: A document's text, at most (characters). Its passages are embedded by the writer in one job.
MAX_DOCUMENT_CHARS = 200_000
MAX_TITLE_CHARS = 300
MAX_URI_CHARS = 2_048
#: Headings kept in a passage's path (deeper ones are part of the text).
MAX_HEADING_DEPTH = 6
MAX_HEADING_CHARS = 200

#: Between a passage's title and headings when it is cited (``ADR-12 > Consequences``, with a
#: typographic angle quote: a heading may hold ``>`` itself).
CITATION_SEPARATOR = " \u203a "

DocumentId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
DocumentVersion = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")]
DocumentFormat = Literal["markdown", "text"]


def seen(value: str) -> str:
    """A title or text must show something (white space and control characters alone do not)."""
    if not visible(value):
        raise ValueError("must have a visible character")
    return value


def check_validity(valid_from: date | None, valid_until: date | None) -> None:
    """A document's validity is a range of days, both included, not inside out."""
    if valid_from and valid_until and valid_until < valid_from:
        raise ValueError("valid_until must not be before valid_from")


class KnowledgeDocument(BaseModel):
    """One document of a tenant's knowledge, whole. ``passages`` counts what it was split into."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: TenantId
    doc_id: DocumentId
    version: DocumentVersion
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    text: str = Field(max_length=MAX_DOCUMENT_CHARS)
    format: DocumentFormat = "markdown"
    source_uri: str | None = Field(default=None, max_length=MAX_URI_CHARS)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    valid_from: Day | None = None
    valid_until: Day | None = None
    content_hash: str
    passages: int = Field(default=0, ge=0)
    created_at: UtcDatetime
    updated_at: UtcDatetime
    #: What searches made of it: how many results it gave and when it last gave one.
    hits: int = Field(default=0, ge=0)
    last_hit_at: UtcDatetime | None = None

    @field_validator("title")
    @classmethod
    def _title_visible(cls, value: str) -> str:
        return seen(value)

    @model_validator(mode="after")
    def _validity(self) -> KnowledgeDocument:
        check_validity(self.valid_from, self.valid_until)
        return self

    def valid_on(self, day: date) -> bool:
        """Whether the document holds on ``day`` (no dates: always)."""
        return (self.valid_from is None or self.valid_from <= day) and (
            self.valid_until is None or day <= self.valid_until
        )

    def same_as(self, other: KnowledgeDocument) -> bool:
        """The same version with the same content: putting it again changes nothing."""
        return self.version == other.version and self.fingerprint == other.fingerprint

    @property
    def fingerprint(self) -> str:
        """Everything a put can change about what is found and shown, hashed."""
        return digest(
            self.content_hash,
            self.title,
            self.format,
            self.source_uri or "",
            "\x1f".join(self.tags),
            str(self.valid_from or ""),
            str(self.valid_until or ""),
            length=32,
        )


def document_hash(text: str) -> str:
    """The exact text's hash: unlike a memory's `content_hash` (which ignores case and spacing to
    find duplicates), any change to a document changes its passages, so it is another text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Passage(BaseModel):
    """One passage of a document: what search finds and cites."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    tenant_id: TenantId
    doc_id: DocumentId
    version: DocumentVersion
    title: str
    heading_path: list[str] = Field(default_factory=list)
    text: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    ordinal: int = Field(ge=0)
    source_uri: str | None = None
    tags: list[str] = Field(default_factory=list)
    valid_from: date | None = None
    valid_until: date | None = None
    updated_at: datetime

    @property
    def embedded_text(self) -> str:
        """What is embedded and indexed: the passage under its title and headings, so a passage
        that says "it" of its section's subject is still found by the subject."""
        return f"{self.citation}: {self.text}"

    @property
    def citation(self) -> str:
        """``ADR-12 > Consequences``: where the passage is, as an agent would cite it."""
        return CITATION_SEPARATOR.join([self.title, *self.heading_path])


@dataclass(frozen=True, slots=True)
class PassageCandidate:
    """A passage a knowledge search found, with its evidence (as `ports.Candidate`)."""

    passage: Passage
    similarity: float | None
    lexical: float | None


@dataclass(frozen=True, slots=True)
class DocumentPage:
    """One page of a tenant's documents (listed without their text)."""

    documents: list[KnowledgeDocument]
    next_cursor: str | None


def passage_id(tenant_id: str, doc_id: str, version: str, ordinal: int) -> str:
    return "psg_" + digest(tenant_id, doc_id, version, str(ordinal))


@dataclass(frozen=True, slots=True)
class PassageSpan:
    """Where a passage is in its document, and the headings above it."""

    start: int
    end: int
    heading_path: tuple[str, ...]


#: An ATX heading: 1-6 ``#``, a space, a title with something visible, and an optional closing
#: run of ``#`` after a space (so "# Using C#" keeps its ``#``).
_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
#: A fence line: three or more backticks or tildes, then an info string (an opener may have one).
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$", re.MULTILINE)
_SPACE = re.compile(r"\s")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])[\"')\]]*\s+")


def _fenced(text: str) -> list[tuple[int, int]]:
    """The spans of fenced code blocks: a ``#`` line inside one is code, not a heading. A block
    is closed only by a bare fence of its own character at least as long as its opener (as in
    CommonMark): a ``~~~`` or ```` ```python ```` line inside a ```` ``` ```` block is code."""
    spans: list[tuple[int, int]] = []
    opener: tuple[int, str] | None = None
    for m in _FENCE.finditer(text):
        run, rest = m.group(1), m.group(2)
        if opener is None:
            if not (run[0] == "`" and "`" in rest):  # a backtick fence's info has no backtick
                opener = (m.start(), run)
        elif run[0] == opener[1][0] and len(run) >= len(opener[1]) and not rest.strip():
            spans.append((opener[0], m.end()))
            opener = None
    if opener is not None:  # an unclosed fence runs to the end
        spans.append((opener[0], len(text)))
    return spans


def _sections(text: str, markdown: bool) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """``(start, end, heading path)`` of each section's body (the text after a heading line)."""
    if not markdown:
        yield 0, len(text), ()
        return
    fences = _fenced(text)
    headings = [m for m in _HEADING.finditer(text) if not any(a <= m.start() < b for a, b in fences)]
    path: list[tuple[int, str]] = []
    position = 0
    current: tuple[str, ...] = ()
    for m in headings:
        yield position, m.start(), current
        level = len(m.group(1))
        path = [(lvl, t) for lvl, t in path if lvl < level]
        path.append((level, " ".join(m.group(2).split())[:MAX_HEADING_CHARS]))
        current = tuple(t for _, t in path)
        position = m.end()
    yield position, len(text), current


def _pieces(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """``text[start:end]`` cut after each match of ``pattern`` (the separator stays with the left)."""
    cuts = [m.end() for m in pattern.finditer(text, start, end)]
    bounds = [start, *cuts, end]
    return [(a, b) for a, b in itertools.pairwise(bounds) if a < b]


def _hard_cut(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut at the last white space before each ``limit``; mid-word only when a word is longer."""
    out: list[tuple[int, int]] = []
    while end - start > limit:
        spaces = [m.start() for m in _SPACE.finditer(text, start + 1, start + limit)]
        cut = spaces[-1] + 1 if spaces else start + limit
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out


def _units(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Paragraphs, or sentences of a long paragraph, or white-space cuts of a long sentence."""
    units: list[tuple[int, int]] = []
    for a, b in _pieces(text, start, end, _PARAGRAPH):
        if b - a <= limit:
            units.append((a, b))
            continue
        for c, d in _pieces(text, a, b, _SENTENCE_END):
            units.extend([(c, d)] if d - c <= limit else _hard_cut(text, c, d, limit))
    return units


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without its leading and trailing white space; None when nothing visible is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end and visible(text[start:end]) else None


def split_passages(
    text: str, format: DocumentFormat = "markdown", limit: int = PASSAGE_CHARS
) -> list[PassageSpan]:
    """The passages of a document, in order: sections at headings, each packed greedily from
    paragraphs (then sentences) up to ``limit`` characters. Every visible character of the
    document's body is in exactly one passage; heading lines are in the path, not the text."""
    if limit < 1:
        raise ValueError("a passage holds at least one character")
    spans: list[PassageSpan] = []
    for start, end, path in _sections(text, format == "markdown"):
        current: tuple[int, int] | None = None
        for a, b in _units(text, start, end, limit):
            if current is not None and b - current[0] <= limit:
                current = (current[0], b)
                continue
            if current is not None and (kept := _trimmed(text, *current)):
                spans.append(PassageSpan(kept[0], kept[1], path))
            current = (a, b)
        if current is not None and (kept := _trimmed(text, *current)):
            spans.append(PassageSpan(kept[0], kept[1], path))
    return spans


def _under_title(path: tuple[str, ...], title: str) -> list[str]:
    """A heading path without a top heading that only repeats the title (``# ADR-12`` over a
    document titled ADR-12): the citation would say it twice."""
    return list(path[1:] if path and path[0] == title else path)


def passages_of(document: KnowledgeDocument) -> list[Passage]:
    """The document's passages, with their ids and what they inherit from the document."""
    return [
        Passage(
            id=passage_id(document.tenant_id, document.doc_id, document.version, i),
            tenant_id=document.tenant_id,
            doc_id=document.doc_id,
            version=document.version,
            title=document.title,
            heading_path=_under_title(span.heading_path, document.title),
            text=document.text[span.start : span.end],
            start=span.start,
            end=span.end,
            ordinal=i,
            source_uri=document.source_uri,
            tags=list(document.tags),
            valid_from=document.valid_from,
            valid_until=document.valid_until,
            updated_at=document.updated_at,
        )
        for i, span in enumerate(split_passages(document.text, document.format))
    ]


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A document as a client puts it; the id comes from the path."""

    version: str
    title: str
    text: str
    format: DocumentFormat = "markdown"
    source_uri: str | None = None
    tags: Sequence[str] = ()
    valid_from: date | None = None
    valid_until: date | None = None


class PutStatus(StrEnum):
    ACCEPTED = "accepted"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class PutOutcome:
    status: PutStatus
    document: KnowledgeDocument
