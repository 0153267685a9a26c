"""Search: one agent's memory by meaning and by a window of days before ``as_of``, and, when
asked (``sources``), the tenant's shared knowledge in the same ranking.

The store returns candidates with their evidence (vector similarity, lexical match); ranking
happens here, in one call of `recall.rules.ranking.rank`, so every store ranks identically. The
window is ``[as_of - max_days_ago, as_of - min_days_ago]``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from typing import NamedTuple, TypeVar

from agent_memory.errors import DependencyError
from agent_memory.knowledge.topics import TopicCache
from agent_memory.model.queries import Found, Hit, SearchQuery, SharedHit
from agent_memory.model.records import MemoryKind
from agent_memory.model.types import shifted
from agent_memory.model.words import STOPWORDS
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    AnswerJudge,
    Candidate,
    Clock,
    Embedder,
    Matrix,
    PassageCandidate,
    PassageQuery,
    Reranker,
    SearchableKnowledge,
    SearchableMemory,
    StoreQuery,
    Vector,
)
from agent_memory.recall.rules.ranking import (
    Asked,
    Candidates,
    ModelCalls,
    RankingWeights,
    patterns_first,
    rank,
    scored,
)
from agent_memory.recall.rules.timehints import time_hints
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


T = TypeVar("T")


def _or_none(call: Callable[[], T], failed: str, counted: str | None = None) -> T | None:
    """``call()``, or None when its model failed (logged as ``failed``, and counted in the metric
    ``counted`` when named): a search never fails for a model that only refines its ranking
    (`recall.rules.ranking.ModelCalls`)."""
    try:
        return call()
    except DependencyError:
        logger.warning(failed, exc_info=True)
        if counted is not None:
            metrics.add_metric(name=counted, unit=MetricUnit.Count, value=1)
        return None


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
        answer_judge: AnswerJudge | None = None,
    ) -> None:
        self._store = store
        self._embedders = embedders
        #: A tenant's ranking defaults (`TenantSettings.ranking`) come between ours and a search's.
        self._settings = settings
        #: The tenant's shared knowledge, searched when a query asks for ``shared``.
        self._knowledge = knowledge
        #: An optional cross-encoder that re-scores the head of the ranking (`ModelCalls.rerank`).
        self._reranker = reranker
        self._embedder = embedder
        self._clock = clock
        self._weights = weights
        #: The tenant's topic dictionary widens the lexical query (knowledge/topics.py).
        self._topics = topics
        #: Statements' own vectors, kept between searches (`ModelCalls.statements`).
        self._memos = Memos()
        #: An optional cross-encoder that reads a question with two statements (`ModelCalls.answers`).
        self._answer_judge = answer_judge

    def _tenant_weights(self, tenant_id: str) -> RankingWeights:
        if self._settings is None:
            return self._weights
        return self._weights.with_overrides(self._settings.settings(tenant_id).ranking.overrides())

    def _model_calls(self, embedder: Embedder) -> ModelCalls:
        """The model calls the ranking may make (`ModelCalls`): the reranker, when there is one, and
        ``embedder`` on statements by their own words (one call at most, none for most searches,
        none for a statement embedded recently)."""

        def statements(hits: list[Hit]) -> Matrix | None:
            texts = [dedup_text(h.record) for h in hits]
            return _or_none(
                lambda: self._memos.of(embedder).embed(texts), "statement embedding failed; ranking kept"
            )

        rerank = None if self._reranker is None else partial(_rerank, self._reranker)
        answers = None if self._answer_judge is None else partial(_answers, self._answer_judge)
        return ModelCalls(rerank=rerank, statements=statements, answers=answers)

    def _memories(
        self, tenant_id: str, agent_id: str, request: SearchQuery, lookup: _Lookup
    ) -> tuple[list[Candidate], frozenset[str]]:
        """The agent's memories the store found, and the speakers the question names among them."""
        now, as_of, vector, text, weights, space = lookup
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
        named = (
            named_speakers(request.query, (c.record.speaker for c in candidates))
            if weights.speaker_boost
            else frozenset()
        )
        if named and text:
            # The speakers named are known only from what the store found: ask again, with their
            # names out of the words matched (`without_names`); the boost stands in for them.
            lexical = without_names(text, named)
            if lexical != text:
                candidates = self._store.search(replace(store_query, text=lexical))
        return candidates, named

    def _passages(
        self, tenant_id: str, request: SearchQuery, as_of: datetime, vector: Vector | None, text: str | None
    ) -> list[PassageCandidate]:
        """The tenant's passages the knowledge store found, valid on ``as_of``. Only for a query:
        browsing (no query) lists memories; documents have their own listing."""
        assert self._knowledge is not None
        return self._knowledge.search_passages(
            PassageQuery(
                tenant_id=tenant_id,
                vector=vector,
                text=text,
                on=as_of.date(),
                tags=tuple(request.tags),
                limit=max(MIN_CANDIDATES, request.max_results * CANDIDATE_FACTOR),
            )
        )

    def _patterns_first(
        self, tenant_id: str, agent_id: str, asked: Asked, lookup: _Lookup, ranked: list[Found]
    ) -> list[Found]:
        """`recall.rules.ranking.patterns_first` with the agent's patterns sure enough
        (`SearchQuery.pattern_floor`), looked for on their own and scored as the main ranking
        scored them (the same weights and time hints); the search's filters hold for them too."""
        request = asked.request
        if request.kinds and MemoryKind.PATTERN not in request.kinds:
            return ranked
        own = replace(request, kinds=(MemoryKind.PATTERN,), min_confidence=request.pattern_floor)
        memories, named = self._memories(tenant_id, agent_id, own, lookup)
        patterns, _ = scored(Candidates(memories), replace(asked, request=own, named=named), lookup.weights)
        return patterns_first(patterns, ranked, request)

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
        lookup = _Lookup(now, as_of, vector, text, weights, searched.space)
        memories, named = (
            self._memories(tenant_id, agent_id, request, lookup)
            if "private" in request.sources
            else ([], frozenset())
        )
        passages: list[PassageCandidate] = []
        if "shared" in request.sources and self._knowledge is not None and query is not None:
            # Passages are in the deployment's space only: another space's vector never meets them.
            in_space = vector if searched.space == DEFAULT_SPACE else None
            passages = self._passages(tenant_id, request, as_of, in_space, text)
        asked = Asked(request, as_of, hints, named, vector)
        results = rank(Candidates(memories, passages), asked, weights, self._model_calls(searched.embedder))
        if request.patterns_first and "private" in request.sources:
            results = self._patterns_first(tenant_id, agent_id, asked, lookup, results)
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


def _rerank(reranker: Reranker, query: str, texts: list[str]) -> Sequence[float] | None:
    """The reranker's relevance of each text; None when it failed (counted)."""
    failed = "reranker failed; keeping the first ranking"
    return _or_none(lambda: reranker.rerank(query, texts), failed, "RerankFailures")


def _answers(judge: AnswerJudge, question: str, pairs: list[tuple[Hit, Hit]]) -> Sequence[float] | None:
    """The answer judge's probability for each (older, newer) pair of hits, by what each says; None
    when it failed (counted)."""
    texts = [(older.record.content, newer.record.content) for older, newer in pairs]
    failed = "answer judge failed; ranking kept"
    return _or_none(lambda: judge.answers(question, texts), failed, "AnswerJudgeFailures")


class _Lookup(NamedTuple):
    """What one search computed once and asks the store for memories with (`SearchService._memories`)."""

    now: datetime
    as_of: datetime
    vector: Vector | None
    text: str | None
    weights: RankingWeights
    #: The embedding space ``vector`` is in (the tenant's active one).
    space: str
