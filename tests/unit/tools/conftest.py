"""An in-memory stand-in for the client: it keeps what the tools wrote, and answers searches from it
(an experience with its confidence, moved by the feedback given on it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.client.api_errors import BadRequestError, NotFoundError
from agent_memory.contract.v1 import (
    AcceptedItem,
    ContextItem,
    ContextRequest,
    ContextResponse,
    ForgetResponse,
    SearchRequest,
    SearchResponse,
    SearchResult,
    WriteItem,
    WriteResponse,
)
from agent_memory.contract.v1_experience import ExperienceOut, FeedbackRequest, FeedbackResponse
from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.ids import memory_id
from agent_memory.model.records import MemoryKind

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@dataclass
class FakeMemoryApi:
    """`MemoryApi` over a dict; substring search, so tests can predict what is found."""

    stored: dict[str, tuple[str, WriteItem]] = field(default_factory=dict)
    searches: list[tuple[str, SearchRequest]] = field(default_factory=list)
    contexts: list[tuple[str, ContextRequest]] = field(default_factory=list)
    #: What a forget answers as the summaries made stale by it.
    stale_summaries: list[str] = field(default_factory=list)
    summaries: list[SearchResult] = field(default_factory=list)
    fail_with: Exception | None = None
    #: The experiences among ``stored``, by id, with the feedback counted on them.
    experiences: dict[str, Experience] = field(default_factory=dict)
    feedbacks: list[tuple[str, str, FeedbackRequest]] = field(default_factory=list)

    def search(self, agent_id: str, query: Any = None, **fields: Any) -> SearchResponse:
        request = SearchRequest.model_validate({"query": query, **fields})
        self.searches.append((agent_id, request))
        if self.fail_with is not None:
            raise self.fail_with
        hits = [
            self._result(mid, item)
            for mid, (owner, item) in self.stored.items()
            if owner == agent_id and (not request.query or request.query.lower() in item.content.lower())
        ]
        return SearchResponse(results=[*hits, *self.summaries][: request.max_results])

    def _result(self, mid: str, item: WriteItem) -> SearchResult:
        return SearchResult(
            id=mid, grain=Grain.WORKING, time_key=None, kind=item.kind or MemoryKind.NOTE,
            content=item.content, text=item.content, score=1.0, similarity=1.0, recency=1.0,
            importance=item.importance or 0.5, occurred_at=item.occurred_at or NOW, topic=item.topic,
            user_id=item.user_id, conversation_id=None, source=None, metadata={}, tags=[],
            experience=ExperienceOut.of(self.experiences.get(mid)),
        )  # fmt: skip

    def context(self, agent_id: str, query: Any, /, **fields: Any) -> ContextResponse:
        """Matches by any word of the query, packed in storage order at one token a word, so a
        test can tell exactly which fit the budget."""
        request = ContextRequest.model_validate({"query": query, **fields})
        self.contexts.append((agent_id, request))
        if self.fail_with is not None:
            raise self.fail_with
        words = set(request.query.lower().split())
        matches = [
            (mid, item)
            for mid, (owner, item) in self.stored.items()
            if owner == agent_id and words & set(item.content.lower().rstrip(".").split())
        ]
        lines: list[str] = []
        items: list[ContextItem] = []
        for mid, item in matches:
            line = f"[{(item.occurred_at or NOW).date().isoformat()} · working] {item.content}"
            cost = len(line.split())
            if sum(i.tokens for i in items) + cost > request.token_budget:
                break
            lines.append(line)
            at = item.occurred_at or NOW
            items.append(ContextItem(id=mid, grain=Grain.WORKING, time_key=None, occurred_at=at, score=1.0,
                                     tokens=cost))  # fmt: skip
        return ContextResponse(
            context="\n".join(lines), tokens=sum(i.tokens for i in items), token_budget=request.token_budget,
            items=items, dropped=len(matches) - len(items),
        )  # fmt: skip

    def write(self, agent_id: str, items: Sequence[Any]) -> WriteResponse:
        if self.fail_with is not None:
            raise self.fail_with
        accepted = []
        for raw in items:
            item = WriteItem.model_validate(raw)
            mid = memory_id(agent_id, item.content)
            self.stored[mid] = (agent_id, item)
            if (experience := item.to_new_memory().experience) is not None:
                self.experiences[mid] = experience
            accepted.append(AcceptedItem(id=mid))
        return WriteResponse(accepted=accepted)

    def feedback(
        self, agent_id: str, memory_id: str, outcome: Any, note: str | None = None
    ) -> FeedbackResponse:
        """Counted at once (the service counts it in the writer, within a second)."""
        request = FeedbackRequest.model_validate({"outcome": outcome, "note": note})
        if self.fail_with is not None:
            raise self.fail_with
        if memory_id not in self.stored or self.stored[memory_id][0] != agent_id:
            raise NotFoundError(404, "not_found", "memory not found")
        if memory_id not in self.experiences:
            raise BadRequestError(400, "validation_error", f"memory {memory_id} is not an experience")
        self.feedbacks.append((agent_id, memory_id, request))
        self.experiences[memory_id] = self.experiences[memory_id].after(request.outcome)
        feedback_id = f"fb_{len(self.feedbacks)}"
        return FeedbackResponse(id=memory_id, feedback_id=feedback_id, outcome=request.outcome)

    def forget(self, agent_id: str, memory_id: str) -> ForgetResponse:
        if memory_id not in self.stored or self.stored[memory_id][0] != agent_id:
            raise NotFoundError(404, "not_found", f"no memory {memory_id}")
        del self.stored[memory_id]
        return ForgetResponse(id=memory_id, stale_summaries=self.stale_summaries)


@pytest.fixture
def api() -> FakeMemoryApi:
    return FakeMemoryApi()
