"""`MemoryClient`: the HTTP contract (v1) as typed Python calls.

Requests and responses are the contract's own pydantic models (`agent_memory.contract.v1`), so
the client validates what it sends before it sends it (a bad field fails here, with pydantic's
message, not as a 400 after a round trip) and every answer comes back typed.

    with MemoryClient("http://127.0.0.1:8000", api_key="...") as memory:
        memory.write("support-bot", ["Alice moved the launch to March 3."])
        hits = memory.search("support-bot", "when is the launch?", grain="working").results
        block = memory.context("support-bot", "when is the launch?", token_budget=500).context
        memory.put_document("adr-12", version="v3", title="ADR-12: failover", text=markdown)
        cited = memory.search("support-bot", "how do we fail over?", sources=["shared"]).results
        tip = memory.record_outcome("support-bot", "Retrying with a smaller batch fixed the import.",
                                    kind="success", outcome="import done", confidence=0.7)
        memory.feedback("support-bot", tip, "confirmed")  # it held again: its confidence rises

Every route of the contract has one method; docs/client.md is the reference.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from agent_memory.client.admin_calls import AdminCalls
from agent_memory.client.knowledge_calls import KnowledgeCalls
from agent_memory.contract.v1 import (
    AuditEventOut,
    AuditResponse,
    ContextRequest,
    ContextResponse,
    ConversationMessage,
    EraseResponse,
    ForgetResponse,
    ListResponse,
    MemoryOut,
    SearchRequest,
    SearchResponse,
    StatsResponse,
    WriteItem,
    WriteRequest,
    WriteResponse,
)
from agent_memory.contract.v1_experience import FeedbackRequest, FeedbackResponse
from agent_memory.contract.v1_history import MemoryHistoryResponse, RestoreResponse
from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.model.grains import Grain
from agent_memory.model.records import EXPERIENCE_KINDS, MemoryKind

ItemLike = WriteItem | Mapping[str, Any] | str
#: The kinds of an experience (`records.EXPERIENCE_KINDS`), for type checkers.
ExperienceKind = Literal["success", "failure", "insight", "pattern"]
MessageLike = ConversationMessage | Mapping[str, Any]

#: ``sources="both"`` (or ``"private"``, ``"shared"``) for the contract's list of sources.
SOURCE_SHORTHANDS: Mapping[str, list[str]] = {
    "both": ["private", "shared"],
    "private": ["private"],
    "shared": ["shared"],
}


def _with_sources(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with a ``sources`` shorthand (``"both"``, ``"private"``, ``"shared"``) spelt as
    the contract's list; a list (or any other value) is left for the request model to judge."""
    sources = fields.get("sources")
    if isinstance(sources, str) and sources in SOURCE_SHORTHANDS:
        return {**fields, "sources": list(SOURCE_SHORTHANDS[sources])}
    return dict(fields)


class MemoryClient(KnowledgeCalls, AdminCalls):
    """A synchronous, thread-safe client. ``api_key`` sends ``Authorization: Bearer``; pass
    ``auth=SigV4Auth(...)`` instead for IAM-authorized deployments.

    ``sleep`` and ``clock`` are injectable so that retries and defaults can be tested without
    waiting and without a real clock.
    """

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> MemoryClient:
        """``AGENT_MEMORY_URL`` and ``AGENT_MEMORY_API_KEY`` (the names the MCP server reads)."""
        env = os.environ if environ is None else environ
        url = env.get("AGENT_MEMORY_URL")
        if not url:
            raise ValueError("set AGENT_MEMORY_URL (e.g. http://127.0.0.1:8000)")
        return cls(url, env.get("AGENT_MEMORY_API_KEY") or None, **kwargs)

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryClient({self.base_url!r}, auth={self._auth!r})"

    # --- memories ------------------------------------------------------------------------------

    def write(
        self, agent_id: str, items: Sequence[ItemLike], *, idempotency_key: str | None = None
    ) -> WriteResponse:
        """Write items to working memory (202: queued). A plain string is an item with only
        ``content``. Items without ``occurred_at`` get the client's now, so a retried request is
        byte-identical and the service deduplicates it instead of storing it twice.
        ``idempotency_key`` is sent as the ``Idempotency-Key`` header: the same key and request
        get the first answer again (a `ConflictError` with another request)."""
        now = self._clock()
        built = [self._item(item, now) for item in items]
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None
        return self._send(
            "POST",
            self._agent_path(agent_id, "memories"),
            WriteResponse,
            WriteRequest(items=built),
            headers=headers,
        )

    def write_conversation(
        self,
        agent_id: str,
        messages: Sequence[MessageLike],
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
    ) -> WriteResponse:
        """The conversation form: turns of one conversation, stored as ``conversation`` memories."""
        now = self._clock()
        built = [ConversationMessage.model_validate(m) for m in messages]
        built = [m if m.occurred_at else m.model_copy(update={"occurred_at": now}) for m in built]
        request = WriteRequest(messages=built, conversation_id=conversation_id, user_id=user_id)
        return self._send("POST", self._agent_path(agent_id, "memories"), WriteResponse, request)

    def remember(self, agent_id: str, content: str, **fields: Any) -> str:
        """One item (``content`` and any `WriteItem` field); returns its id."""
        return self.write(agent_id, [{"content": content, **fields}]).accepted[0].id

    def record_outcome(
        self,
        agent_id: str,
        content: str,
        *,
        kind: ExperienceKind | MemoryKind = "success",
        context: str | None = None,
        outcome: str | None = None,
        confidence: float | None = None,
        run_id: str | None = None,
        tags: Iterable[str] = (),
        user_id: str | None = None,
        occurred_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> str:
        """Record an experience (one item on the write route) and return its id: what the agent
        learned (``content``), in what situation (``context``), with what result (``outcome``),
        how sure it is (``confidence``; the service's default when left out) and the run it came
        from (``run_id``: patterns are recognised across runs). ``kind`` is one of ``success``,
        ``failure``, ``insight`` or ``pattern``; any other is a `ValueError` before sending.
        With ``idempotency_key``, give ``occurred_at`` too if the call itself may be repeated:
        without it the item is dated now, and a later call is another request (a `ConflictError`)."""
        if str(kind) not in {k.value for k in EXPERIENCE_KINDS}:
            kinds = ", ".join(sorted(k.value for k in EXPERIENCE_KINDS))
            raise ValueError(f"kind must be one of {kinds}, got {kind!r}")
        fields = {
            "content": content,
            "kind": kind,
            "context": context,
            "outcome": outcome,
            "confidence": confidence,
            "run_id": run_id,
            "tags": list(tags),
            "user_id": user_id,
            "occurred_at": occurred_at,
            "metadata": None if metadata is None else dict(metadata),
        }
        item = WriteItem.model_validate({k: v for k, v in fields.items() if v is not None})
        return self.write(agent_id, [item], idempotency_key=idempotency_key).accepted[0].id

    def feedback(
        self, agent_id: str, memory_id: str, outcome: FeedbackOutcome | str, note: str | None = None
    ) -> FeedbackResponse:
        """Report what happened when the agent used an experience (202: queued, counted by the
        writer within a second): ``applied`` (acted on it; counted, confidence unchanged),
        ``confirmed`` (it held: confidence rises) or ``refuted`` (it did not: confidence falls).
        ``note`` says why, for the audit trail. A memory that is not an experience is a
        `BadRequestError`; one that is gone, a `NotFoundError`. Each accepted call is counted
        once, so a retry after a lost answer may count it twice (``retry=NO_RETRIES`` never does)."""
        if not memory_id:
            raise ValueError("memory_id is empty")
        request = FeedbackRequest.model_validate({"outcome": outcome, "note": note})
        path = self._agent_path(agent_id, "memories", memory_id, "feedback")
        return self._send("POST", path, FeedbackResponse, request)

    def search(
        self, agent_id: str, query: str | SearchRequest | None = None, **fields: Any
    ) -> SearchResponse:
        """Search by meaning and time window: ``search(agent, "launch?", grain="daily",
        max_days_ago=30)``, or pass a ready `SearchRequest`. ``sources=["shared"]`` searches the
        tenant's shared knowledge instead of the agent's memory, ``sources="both"`` blends the two
        in one ranking; left out, it is not sent and the service searches memory alone.
        Experiences: ``kinds=["pattern"]``, ``min_confidence=0.7`` (memories without a confidence
        left out), ``patterns_first=True`` (patterns at or above ``pattern_confidence`` before
        every other result); each left out is not sent."""
        if isinstance(query, SearchRequest):
            if fields:
                raise TypeError("give a SearchRequest or fields, not both")
            request = query
        else:
            request = SearchRequest.model_validate({"query": query, **_with_sources(fields)})
        return self._send("POST", self._agent_path(agent_id, "memories", "search"), SearchResponse, request)

    def context(self, agent_id: str, query: str | ContextRequest, /, **fields: Any) -> ContextResponse:
        """One block of prompt context for ``query``: the most relevant memories and summaries,
        dated and tagged with their grain, packed to ``token_budget`` tokens (least relevant left
        out first; ``dropped`` says how many). ``context(agent, "launch?", token_budget=500)``, or
        pass a ready `ContextRequest`. The block draws on memory and shared knowledge unless
        ``sources`` says otherwise; ``shared_share`` is the part of the budget kept for shared
        knowledge (both left out: not sent, the service's defaults hold). ``kinds``,
        ``min_confidence``, ``patterns_first`` and ``pattern_confidence`` narrow and order it as
        they do a search."""
        if isinstance(query, ContextRequest):
            if fields:
                raise TypeError("give a ContextRequest or fields, not both")
            request = query
        else:
            request = ContextRequest.model_validate({"query": query, **_with_sources(fields)})
        return self._send("POST", self._agent_path(agent_id, "context"), ContextResponse, request)

    def get(self, agent_id: str, memory_id: str) -> MemoryOut:
        return self._send("GET", self._agent_path(agent_id, "memories", memory_id), MemoryOut)

    def list_page(
        self, agent_id: str, *, grain: Grain | str | None = None, limit: int = 50, cursor: str | None = None
    ) -> ListResponse:
        """One page of the agent's memories, newest first; follow ``next_cursor`` for the next."""
        query = {"grain": Grain(grain).value if grain else None, "limit": limit, "cursor": cursor}
        return self._send("GET", self._agent_path(agent_id, "memories"), ListResponse, query=query)

    def pages(
        self, agent_id: str, *, grain: Grain | str | None = None, limit: int = 50
    ) -> Iterator[ListResponse]:
        """Every page, lazily: the next page is fetched only when the caller asks for it."""
        return self._follow(lambda cursor: self.list_page(agent_id, grain=grain, limit=limit, cursor=cursor))

    def iter_memories(
        self, agent_id: str, *, grain: Grain | str | None = None, page_size: int = 50
    ) -> Iterator[MemoryOut]:
        for page in self.pages(agent_id, grain=grain, limit=page_size):
            yield from page.items

    def history(self, agent_id: str, memory_id: str) -> MemoryHistoryResponse:
        """Every change to the memory as a version, oldest first: merges, supersessions and their
        undoing, feedback, forget, restores, each with who or what made it. A forgotten memory's
        versions hold no text."""
        return self._send(
            "GET", self._agent_path(agent_id, "memories", memory_id, "history"), MemoryHistoryResponse
        )

    def restore(self, agent_id: str, memory_id: str, version: int) -> RestoreResponse:
        """Bring a version back (an admin key): whether it held at once, its text through the
        writer (``text_pending``). A forgotten memory cannot be restored (`ConflictError`)."""
        if version < 1:
            raise ValueError("versions are numbered from 1")
        path = self._agent_path(agent_id, "memories", memory_id, "history", str(version), "restore")
        return self._send("POST", path, RestoreResponse)

    def forget(self, agent_id: str, memory_id: str) -> ForgetResponse:
        """Forget one memory: gone from search, get and list at once, an audit event written, and
        the summaries made from it (``stale_summaries``) re-made without it. A second call is a
        `NotFoundError`."""
        return self._send("DELETE", self._agent_path(agent_id, "memories", memory_id), ForgetResponse)

    def erase_user(self, agent_id: str, user_id: str) -> EraseResponse:
        """Right to erasure: forget every memory of one end user of the agent, summaries included
        (``DELETE .../memories?user_id=``). There is deliberately no "erase everything"."""
        if not user_id:
            raise ValueError("user_id is empty")
        return self._send(
            "DELETE", self._agent_path(agent_id, "memories"), EraseResponse, query={"user_id": user_id}
        )

    def audit_page(
        self, agent_id: str, *, record_id: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> AuditResponse:
        """One page of the agent's audit trail (forgets, erasures, the summaries they made stale
        and re-made), newest first; ``record_id`` keeps one record's events."""
        query = {"record_id": record_id, "limit": limit, "cursor": cursor}
        return self._send("GET", self._agent_path(agent_id, "audit"), AuditResponse, query=query)

    def audit_pages(
        self, agent_id: str, *, record_id: str | None = None, limit: int = 50
    ) -> Iterator[AuditResponse]:
        """Every page of the audit trail, lazily."""
        return self._follow(
            lambda cursor: self.audit_page(agent_id, record_id=record_id, limit=limit, cursor=cursor)
        )

    def iter_audit(
        self, agent_id: str, *, record_id: str | None = None, page_size: int = 50
    ) -> Iterator[AuditEventOut]:
        for page in self.audit_pages(agent_id, record_id=record_id, limit=page_size):
            yield from page.items

    def stats(self, agent_id: str) -> StatsResponse:
        return self._send("GET", self._agent_path(agent_id, "stats"), StatsResponse)

    def wait_until_stored(
        self, agent_id: str, timeout_s: float = 10.0, interval_s: float = 0.1
    ) -> StatsResponse:
        """Poll stats until no accepted write is pending (writes are asynchronous), then return
        them. Raises `TimeoutError` at the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            stats = self.stats(agent_id)
            if stats.pending_writes == 0:
                return stats
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{stats.pending_writes} write(s) still pending after {timeout_s} s")
            self._sleep(interval_s)

    @staticmethod
    def _item(item: ItemLike, now: datetime) -> WriteItem:
        built = WriteItem(content=item) if isinstance(item, str) else WriteItem.model_validate(item)
        return built if built.occurred_at else built.model_copy(update={"occurred_at": now})
