"""Finding records by meaning and by words: the store's search (`Retrieval`) and its queries, and
search as a service sees it (`Searcher`).

Score contract: similarities are cosine similarities of L2-normalised vectors, higher = more
similar, in [-1, 1]. Lexical scores are normalised by the store into [0, 1], higher = better."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from agent_memory.model.grains import Grain
from agent_memory.model.queries import Found, SearchQuery
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.ports.embedding import Vector

__all__ = [
    "Candidate",
    "NearestQuery",
    "NearestRecord",
    "Neighbourhood",
    "RecordSearch",
    "Retrieval",
    "Searcher",
    "StoreQuery",
]


@dataclass(frozen=True, slots=True)
class StoreQuery:
    """A search over one agent's memory. Tenant and agent are mandatory: there is no global search.

    ``start``/``end`` bound the window: a record matches when its span (its period, or its
    ``occurred_at``) overlaps ``[start, end]``. Deleted records and records expired at ``now``
    never match.
    """

    tenant_id: str
    agent_id: str
    now: datetime
    grains: tuple[Grain, ...] | None = None
    vector: Vector | None = None
    text: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    kinds: tuple[MemoryKind, ...] = ()
    tags: tuple[str, ...] = ()
    user_id: str | None = None
    #: Only experiences at least this sure (records without a confidence never match).
    min_confidence: float | None = None
    #: The embedding space ``vector`` is in (`agent_memory.ports.spaces`).
    space: str = ""
    limit: int = 50


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """Which records a new write may be merged into (`writing.rules.dedup`), as a store filter.

    The store applies it inside the vector search, so the nearest record it returns is one the
    write may merge with (filtering after a top-1 search would let another user's record hide
    this user's duplicate). ``match_user``/``match_conversation``: the candidate's ``user_id`` /
    ``conversation_id`` equals the given one (None matches only records without one);
    ``since``/``until``: its ``occurred_at`` lies in ``[since, until)``.
    """

    user_id: str | None = None
    conversation_id: str | None = None
    match_user: bool = False
    match_conversation: bool = False
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class NearestQuery:
    """The live record of ``grain`` closest to ``vector`` (``within`` a neighbourhood, if
    given): what dedup-on-write asks before it stores a record."""

    tenant_id: str
    agent_id: str
    grain: Grain
    vector: Vector
    now: datetime
    within: Neighbourhood | None = None
    space: str = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record the store found, with the evidence it found it by.

    ``similarity`` is the cosine to the query vector (present for every candidate when the query
    had a vector); ``lexical`` is the normalised lexical score (None: no lexical match). The
    order and the scores follow the fusion rule (`recall.rules.ranking`), on every store.
    """

    record: MemoryRecord
    similarity: float | None = None
    lexical: float | None = None


class NearestRecord(Protocol):
    """The one record nearest a vector (dedup on write)."""

    def nearest(self, query: NearestQuery) -> tuple[MemoryRecord, float] | None:
        """The record `NearestQuery` asks for, and its cosine; None when there is none."""
        ...


class RecordSearch(Protocol):
    """Candidates by meaning and by words."""

    def search(self, query: StoreQuery) -> list[Candidate]:
        """Up to ``limit`` vector hits and up to ``limit`` lexical hits, merged by record id.

        Without vector and text: the newest live records in the window, newest first.
        """
        ...


class Retrieval(NearestRecord, RecordSearch, Protocol):
    """Finding records by meaning and by words: the raw evidence, ranked by the services
    (the fusion rule of `recall.rules.ranking` says how it is handed over)."""


class Searcher(Protocol):
    """What `ContextService` needs of search (`recall.search.SearchService` is one)."""

    def search(self, tenant_id: str, agent_id: str, request: SearchQuery) -> list[Found]: ...
