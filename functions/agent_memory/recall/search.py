"""Search: one agent's memory by meaning and by a window of days before ``as_of``, and, when
asked (``sources``), the tenant's shared knowledge in the same ranking.

The store returns candidates with their evidence (vector similarity, lexical match); ranking
happens here (`recall.rules.scoring`) so every store ranks identically. The window is
``[as_of - max_days_ago, as_of - min_days_ago]``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import NamedTuple

import numpy as np

from agent_memory.errors import DependencyError
from agent_memory.knowledge.topics import TopicCache
from agent_memory.model.queries import Found, Hit, SearchQuery, SharedHit
from agent_memory.model.records import MemoryKind
from agent_memory.model.types import shifted
from agent_memory.model.words import STOPWORDS
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    Clock,
    Embedder,
    PassageQuery,
    Reranker,
    SearchableKnowledge,
    SearchableMemory,
    StoreQuery,
    Vector,
)
from agent_memory.recall.rules.folding import fold_summaries
from agent_memory.recall.rules.newer_first import asks_about_now, compared, newer_first
from agent_memory.recall.rules.scoring import RankingWeights, relevance, score
from agent_memory.recall.rules.timehints import TimeHint, time_hints
from agent_memory.recall.rules.validity import SUPERSEDED_FACTOR, after_superseders
from agent_memory.tenancy.models import TenantEmbedders, spaces_of
from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE
from agent_memory.tenancy.settings import SettingsCache
from agent_memory.writing.memo_embedder import Memos
from agent_memory.writing.rules.contextual import dedup_text

#: How many candidates to pull per signal for each result asked for: fusion needs head-room.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 40


#: Meaningful words of a query that a zero-hit log line keeps.
TOPIC_WORDS = 4


def query_topic(query: str | None) -> str | None:
    """The query's subject for logs: its first `TOPIC_WORDS` words that are not function words."""
    if not query:
        return None
    words = [w for w in re.findall(r"\w+", query.lower()) if w not in STOPWORDS]
    return " ".join(words[:TOPIC_WORDS]) or None


def named_speakers(query: str | None, speakers: Iterable[str | None]) -> frozenset[str]:
    """The speakers among ``speakers`` that ``query`` names, case-folded: every word of the
    speaker's name is a whole word of the query ("Mary Ann" in "what did mary ann say?")."""
    if not query:
        return frozenset()
    words = set(re.findall(r"\w+", query.casefold()))
    named = {s.casefold() for s in speakers if s}
    return frozenset(s for s in named if (parts := re.findall(r"\w+", s)) and words.issuperset(parts))


def without_names(text: str, names: Iterable[str]) -> str | None:
    """``text`` without the words of ``names`` (whole words, any case, a possessive ``'s`` with
    them); None when only function words are left. The lexical query of a search that names a
    speaker: that person's name in it matches every turn that merely addresses them ("Hey Tim!")
    or quotes them in its context, while what they said themselves is lifted by the speaker
    boost instead."""
    words = sorted({w for name in names for w in re.findall(r"\w+", name)}, key=len, reverse=True)
    if not words:
        return text
    pattern = r"\b(?:" + "|".join(map(re.escape, words)) + r")(?:['\u2019]s)?\b"
    left = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    # Function words alone would be matched as words (a store keeps them when nothing else is left)
    return left if any(w not in STOPWORDS for w in re.findall(r"\w+", left.lower())) else None


def rerank_depth(wanted: int) -> int:
    """How many of the first ranking a reranker re-scores: enough head-room to promote from."""
    return min(max(2 * wanted, 20), 100)


class SearchService:
    def __init__(
        self,
        store: SearchableMemory,
        embedder: Embedder,
        clock: Clock,
        weights: RankingWeights,
        topics: TopicCache | None = None,
        reranker: Reranker | None = None,
        knowledge: SearchableKnowledge | None = None,
        settings: SettingsCache | None = None,
        embedders: TenantEmbedders | None = None,
    ) -> None:
        self._store = store
        self._embedders = embedders
        #: A tenant's ranking defaults (`TenantSettings.ranking`) come between ours and a search's.
        self._settings = settings
        #: The tenant's shared knowledge, searched when a query asks for ``shared``.
        self._knowledge = knowledge
        #: An optional cross-encoder that re-scores the head of the ranking (`_rerank`).
        self._reranker = reranker
        self._embedder = embedder
        self._clock = clock
        self._weights = weights
        #: The tenant's topic dictionary widens the lexical query (knowledge/topics.py).
        self._topics = topics
        #: Statements' own vectors, kept between searches (`_newer_first`).
        self._memos = Memos()

    def _tenant_weights(self, tenant_id: str) -> RankingWeights:
        if self._settings is None:
            return self._weights
        return self._weights.with_overrides(self._settings.settings(tenant_id).ranking.overrides())

    def _rerank(
        self, query: str, ranked: list[Found], relevance: dict[str, float], wanted: int
    ) -> list[Found]:
        """Re-score the head of the ranking with the reranker: its relevance replaces ours, the
        dampers (recency, importance, time) stay. The rest keeps its order below the head. A
        reranker that fails leaves the ranking as it was: a search never fails for it."""
        assert self._reranker is not None
        head, tail = ranked[: rerank_depth(wanted)], ranked[rerank_depth(wanted) :]
        try:
            scores = self._reranker.rerank(query, [r.text for r in head])
        except DependencyError:
            logger.warning("reranker failed; keeping the first ranking", exc_info=True)
            metrics.add_metric(name="RerankFailures", unit=MetricUnit.Count, value=1)
            return ranked
        rescored = [
            replace(r, score=round(r.score / max(relevance[r.id], 1e-9) * new, 6))
            for r, new in zip(head, scores, strict=True)
        ]
        rescored.sort(key=lambda x: (-x.score, x.id))
        floor = min((r.score for r in rescored), default=0.0)
        # what was not reranked stays below what was, in its own order
        return rescored + [replace(r, score=min(r.score, floor)) for r in tail]

    def _newer_first(self, ranked: list[Found], embedder: Embedder, query: Vector | None) -> list[Found]:
        """`recall.rules.newer_first.newer_first`: the head's statements embedded by their own
        words (one model call at most, none for most searches, none for a statement embedded
        recently), compared with each other and with the question (``query``: the question's
        vector by the same model). A model that fails leaves the ranking as it was: a search never
        fails for it."""
        statements = compared(ranked)
        if not statements:
            return ranked
        try:
            vectors = self._memos.of(embedder).embed([dedup_text(h.record) for h in statements])
        except DependencyError:
            logger.warning("statement embedding failed; ranking kept", exc_info=True)
            return ranked
        own = {h.id: v for h, v in zip(statements, vectors, strict=True)}
        asked = None if query is None else (lambda h: float(np.dot(query, own[h.id])))
        return newer_first(ranked, statements, lambda a, b: float(np.dot(own[a.id], own[b.id])), asked)

    def _private(
        self,
        tenant_id: str,
        agent_id: str,
        request: SearchQuery,
        now: datetime,
        as_of: datetime,
        vector: Vector | None,
        text: str | None,
        weights: RankingWeights,
        hints: list[TimeHint],
        space: str,
        relevance_of: dict[str, float],
    ) -> list[Found]:
        """The agent's memories the store found, scored (`recall.rules.scoring`)."""
        store_query = StoreQuery(
            tenant_id=tenant_id,
            agent_id=agent_id,
            now=now,
            grains=None if request.grain is None else (request.grain,),
            vector=vector,
            text=text,
            start=shifted(as_of, -timedelta(days=request.max_days_ago))
            if request.max_days_ago is not None
            else None,
            end=shifted(as_of, -timedelta(days=request.min_days_ago)),
            kinds=tuple(request.kinds),
            tags=tuple(request.tags),
            user_id=request.user_id,
            min_confidence=request.min_confidence,
            limit=max(MIN_CANDIDATES, request.max_results * CANDIDATE_FACTOR),
            space=space,
        )
        candidates = self._store.search(store_query)
        query = request.query
        named = (
            named_speakers(query, (c.record.speaker for c in candidates))
            if weights.speaker_boost
            else frozenset()
        )
        if named and text:
            # The speakers named are known only from what the store found: ask again, with their
            # names out of the words matched (`without_names`); the boost stands in for them.
            lexical = without_names(text, named)
            if lexical != text:
                candidates = self._store.search(replace(store_query, text=lexical))
        # A question that names a time asks what held then, not at ``as_of`` ("where did I live
        # in March?"): a memory superseded since still answers it.
        asked_about = min([as_of, *(h.end for h in hints)]) if hints else as_of
        hits: list[Found] = []
        for c in candidates:
            s = score(c.record, as_of, weights, c.similarity, c.lexical, query is not None, hints, named)
            relevance_of[c.record.id] = s.relevance
            current = not c.record.superseded_at(asked_about)
            damped = s.score * weights.private_weight * (1.0 if current else SUPERSEDED_FACTOR)
            hits.append(
                Hit(
                    record=c.record,
                    score=round(damped, 6),
                    similarity=round(c.similarity, 6) if c.similarity is not None else None,
                    recency=round(s.recency, 6),
                    current=current,
                )
            )
        return hits

    def _shared(
        self,
        tenant_id: str,
        request: SearchQuery,
        as_of: datetime,
        vector: Vector | None,
        text: str | None,
        weights: RankingWeights,
        relevance_of: dict[str, float],
    ) -> list[Found]:
        """The tenant's passages the knowledge store found, valid on ``as_of``: relevance alone
        (`recall.rules.scoring.relevance`) times the shared weight. Only for a query: browsing (no
        query) lists memories; documents have their own listing."""
        assert self._knowledge is not None
        candidates = self._knowledge.search_passages(
            PassageQuery(
                tenant_id=tenant_id,
                vector=vector,
                text=text,
                on=as_of.date(),
                tags=tuple(request.tags),
                limit=max(MIN_CANDIDATES, request.max_results * CANDIDATE_FACTOR),
            )
        )
        hits: list[Found] = []
        for c in candidates:
            rel = relevance(c.similarity, c.lexical, weights.lexical_weight)
            relevance_of[c.passage.id] = rel
            hits.append(
                SharedHit(
                    passage=c.passage,
                    score=round(rel * weights.shared_weight, 6),
                    similarity=round(c.similarity, 6) if c.similarity is not None else None,
                )
            )
        return hits

    def _patterns_first(
        self, tenant_id: str, agent_id: str, request: SearchQuery, scoring: _Scoring, ranked: list[Found]
    ) -> list[Found]:
        """The agent's patterns sure enough (`SearchQuery.pattern_floor`), best first, then the
        rest of ``ranked`` without them. Patterns are looked for on their own, so one that ranked
        below the list's cut still comes first; they are scored as the main ranking scored them
        (the same weights and time hints), and the search's filters hold for them too."""
        if request.kinds and MemoryKind.PATTERN not in request.kinds:
            return ranked
        own = replace(request, kinds=(MemoryKind.PATTERN,), min_confidence=request.pattern_floor)
        patterns = self._private(tenant_id, agent_id, own, *scoring, {})
        if request.min_score is not None:
            patterns = [p for p in patterns if p.score >= request.min_score]
        if request.query is not None:
            patterns.sort(key=lambda x: (-x.score, x.id))
        else:
            patterns.sort(key=_newest_first, reverse=True)
        first = {p.id for p in patterns}
        return [*patterns, *(r for r in ranked if r.id not in first)]

    def search(self, tenant_id: str, agent_id: str, request: SearchQuery) -> list[Found]:
        """The hits, best first (newest first without a query), at most ``max_results``."""
        started = time.perf_counter()
        now = self._clock.now()
        as_of = request.as_of or now
        query = request.query
        weights = self._tenant_weights(tenant_id).with_overrides(request.ranking)
        hints = time_hints(query, as_of) if weights.time_hints else []
        # The tenant's own model when it chose one: its vectors live in a space of their own.
        searched = spaces_of(self._embedders, self._embedder, tenant_id).search
        vector = searched.embedder.embed([query])[0] if query else None
        text = self._topics.expand_query(tenant_id, query) if self._topics else query
        relevance_of: dict[str, float] = {}
        results: list[Found] = []
        if "private" in request.sources:
            results.extend(
                self._private(
                    tenant_id,
                    agent_id,
                    request,
                    now,
                    as_of,
                    vector,
                    text,
                    weights,
                    hints,
                    searched.space,
                    relevance_of,
                )
            )
        if "shared" in request.sources and self._knowledge is not None and query is not None:
            # Passages are in the deployment's space only: another space's vector never meets them.
            in_space = vector if searched.space == DEFAULT_SPACE else None
            results.extend(self._shared(tenant_id, request, as_of, in_space, text, weights, relevance_of))
        if query is not None:
            results.sort(key=lambda x: (-x.score, x.id))
            if self._reranker is not None and results:
                results = self._rerank(query, results, relevance_of, request.max_results)
        else:  # no query: newest first, as the store returned them
            results.sort(key=_newest_first, reverse=True)
        results = after_superseders(results)
        if request.min_score is not None:
            results = [r for r in results if r.score >= request.min_score]
        if request.grain is None:  # several grains: a fact quoted up the cascade takes one place
            results = _fold(results)
        if query is not None and "private" in request.sources and asks_about_now(query, bool(hints)):
            results = self._newer_first(results, searched.embedder, vector)
        if request.patterns_first and "private" in request.sources:
            scoring = _Scoring(now, as_of, vector, text, weights, hints, searched.space)
            results = self._patterns_first(tenant_id, agent_id, request, scoring, results)
        results = results[: request.max_results]
        private = [r.id for r in results if isinstance(r, Hit)]
        shared = [r.passage.doc_id for r in results if isinstance(r, SharedHit)]
        if private:
            self._store.record_access(tenant_id, agent_id, private, now)
        if shared and self._knowledge is not None:
            self._knowledge.record_document_hits(tenant_id, shared, now)
        self._store.record_search(tenant_id, agent_id, now, len(results))
        elapsed_ms = (time.perf_counter() - started) * 1000
        metrics.add_metric(name="SearchLatency", unit=MetricUnit.Milliseconds, value=elapsed_ms)
        metrics.add_metric(name="Searches", unit=MetricUnit.Count, value=1)
        if not results:
            metrics.add_metric(name="ZeroHitSearches", unit=MetricUnit.Count, value=1)
            # What was asked about, without logging the whole question (it may hold personal data):
            # its first few meaningful words, and the time it named.
            logger.info(
                "zero-hit search",
                extra={
                    "agent_id": agent_id,
                    "query_topic": query_topic(query),
                    "time_hints": [h.phrase for h in hints],
                    "grain": str(request.grain or "all"),
                },
            )
        logger.info(
            "search",
            extra={
                "agent_id": agent_id,
                "grain": str(request.grain or "all"),
                "hits": len(results),
                "ms": round(elapsed_ms, 2),
            },
        )
        return results


class _Scoring(NamedTuple):
    """What one search computed once and scores every candidate with (`SearchService._private`'s
    arguments after the query)."""

    now: datetime
    as_of: datetime
    vector: Vector | None
    text: str | None
    weights: RankingWeights
    hints: list[TimeHint]
    #: The embedding space ``vector`` is in (the tenant's active one).
    space: str


def _fold(ranked: list[Found]) -> list[Found]:
    """`fold_summaries` over the memories of a blended list; passages keep their places."""
    kept = {h.id: h for h in fold_summaries([r for r in ranked if isinstance(r, Hit)])}
    return [kept[r.id] if isinstance(r, Hit) else r for r in ranked if not isinstance(r, Hit) or r.id in kept]


def _newest_first(found: Found) -> tuple[datetime, str]:
    """Sort key (reversed) of a browse: memories by when they happened (passages come only with
    a query, so never here; they would sort as of their document's last update)."""
    when = found.record.occurred_at if isinstance(found, Hit) else found.passage.updated_at
    return when, found.id
