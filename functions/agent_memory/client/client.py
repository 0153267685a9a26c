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

import http.client
import json
import logging
import os
import ssl
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, BinaryIO, Literal, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from pydantic import BaseModel, ValidationError

from agent_memory.client.api_errors import (
    NotFoundError,
    TransportError,
    UnexpectedResponseError,
    error_from_response,
)
from agent_memory.client.credentials import ApiKeyAuth, Auth, NoAuth
from agent_memory.client.retry import RetryPolicy, parse_retry_after
from agent_memory.client.transport import HttpTransport, RawResponse, Transport
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
    RetentionRunResponse,
    SearchRequest,
    SearchResponse,
    StatsResponse,
    SummarizeRequest,
    SummarizeResponse,
    WriteItem,
    WriteRequest,
    WriteResponse,
)
from agent_memory.contract.v1_experience import (
    FeedbackRequest,
    FeedbackResponse,
    PatternRunRequest,
    PatternRunResponse,
)
from agent_memory.contract.v1_exports import ExportOut, ExportRequest, ExportsResponse
from agent_memory.contract.v1_history import MemoryHistoryResponse, RestoreResponse
from agent_memory.contract.v1_knowledge import (
    DocumentBody,
    DocumentDeleteResponse,
    DocumentOut,
    DocumentPutResponse,
    DocumentsResponse,
    PassagesResponse,
)
from agent_memory.contract.v1_settings import SettingsResponse
from agent_memory.contract.v1_webhooks import WebhookDeleted, WebhookResponse, WebhookUpdate
from agent_memory.domain.experience import FeedbackOutcome
from agent_memory.domain.grains import Grain
from agent_memory.domain.knowledge import DocumentFormat
from agent_memory.domain.records import EXPERIENCE_KINDS, MemoryKind
from agent_memory.domain.tenant_settings import TenantSettings

logger = logging.getLogger("agent_memory.client")

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", ListResponse, AuditResponse, DocumentsResponse)

DEFAULT_TIMEOUT_S = 10.0
USER_AGENT = "agent-memory-client/1"

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


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _with_sources(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with a ``sources`` shorthand (``"both"``, ``"private"``, ``"shared"``) spelt as
    the contract's list; a list (or any other value) is left for the request model to judge."""
    sources = fields.get("sources")
    if isinstance(sources, str) and sources in SOURCE_SHORTHANDS:
        return {**fields, "sources": list(SOURCE_SHORTHANDS[sources])}
    return dict(fields)


class MemoryClient:
    """A synchronous, thread-safe client. ``api_key`` sends ``Authorization: Bearer``; pass
    ``auth=SigV4Auth(...)`` instead for IAM-authorized deployments.

    ``sleep`` and ``clock`` are injectable so that retries and defaults can be tested without
    waiting and without a real clock.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        auth: Auth | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = _utcnow,
        user_agent: str = USER_AGENT,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if api_key is not None and auth is not None:
            raise ValueError("give api_key or auth, not both")
        self.base_url = base_url.rstrip("/")
        self._auth: Auth = auth or (ApiKeyAuth(api_key) if api_key is not None else NoAuth())
        self._timeout_s = timeout_s
        self._retry = retry or RetryPolicy()
        self._transport = transport or HttpTransport()
        self._sleep = sleep
        self._clock = clock
        self._user_agent = user_agent

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

    def close(self) -> None:
        self._transport.close()

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
        self,
        agent_id: str,
        *,
        record_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
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

    # --- shared knowledge (the tenant's documents) ---------------------------------------------

    def put_document(
        self,
        doc_id: str,
        *,
        version: str,
        title: str,
        text: str,
        format: DocumentFormat = "markdown",
        source_uri: str | None = None,
        tags: Iterable[str] = (),
        valid_from: date | str | None = None,
        valid_until: date | str | None = None,
    ) -> DocumentPutResponse:
        """Publish one version of a document to the tenant's shared knowledge (``knowledge`` or
        ``admin`` scope). ``status`` is ``accepted`` when queued (searchable within seconds) and
        ``unchanged`` when this version with this content is stored already, so re-publishing a
        whole folder costs nothing for what did not change. The same version with other content
        is a `ConflictError` (409): a version names one text, so give the new text a new version."""
        body = DocumentBody.model_validate(
            {
                "version": version,
                "title": title,
                "text": text,
                "format": format,
                "source_uri": source_uri,
                "tags": list(tags),
                "valid_from": valid_from,
                "valid_until": valid_until,
            }
        )
        return self._send("PUT", self._document_path(doc_id), DocumentPutResponse, body)

    def list_documents(self, cursor: str | None = None, limit: int = 50) -> DocumentsResponse:
        """One page of the tenant's documents by id (without their text), and how many puts are
        still queued (``pending``); follow ``next_cursor`` for the next page."""
        query = {"cursor": cursor, "limit": limit}
        return self._send("GET", "/v1/knowledge/documents", DocumentsResponse, query=query)

    def document_pages(self, *, limit: int = 50) -> Iterator[DocumentsResponse]:
        """Every page of documents, lazily."""
        return self._follow(lambda cursor: self.list_documents(cursor, limit))

    def iter_documents(self, *, page_size: int = 50) -> Iterator[DocumentOut]:
        for page in self.document_pages(limit=page_size):
            yield from page.documents

    def get_document(self, doc_id: str) -> DocumentOut:
        """One document, its whole text included; a `NotFoundError` until its first put is stored."""
        return self._send("GET", self._document_path(doc_id), DocumentOut)

    def document_passages(self, doc_id: str) -> PassagesResponse:
        """The passages search finds the document by, in document order, with their heading
        paths and their offsets in its text."""
        return self._send("GET", self._document_path(doc_id, "passages"), PassagesResponse)

    def delete_document(self, doc_id: str) -> DocumentDeleteResponse:
        """Delete the document and every passage of it, at once (``knowledge`` or ``admin``
        scope); ``passages_removed`` is 0 when nothing was stored."""
        return self._send("DELETE", self._document_path(doc_id), DocumentDeleteResponse)

    def wait_until_documents_stored(
        self, versions: Mapping[str, str], timeout_s: float = 30.0, interval_s: float = 0.2
    ) -> dict[str, DocumentOut]:
        """Poll each document (``{doc_id: version}``) until its stored version is the one given
        (puts are asynchronous), and return them. Raises `TimeoutError` at the deadline, naming
        the documents still waiting."""
        deadline = time.monotonic() + timeout_s
        stored: dict[str, DocumentOut] = {}
        while True:
            for doc_id, version in versions.items():
                if doc_id in stored:
                    continue
                try:
                    document = self.get_document(doc_id)
                except NotFoundError:  # its first version is still queued
                    continue
                if document.version == version:
                    stored[doc_id] = document
            waiting = [d for d in versions if d not in stored]
            if not waiting:
                return stored
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{len(waiting)} document(s) not stored after {timeout_s} s: {', '.join(waiting)}"
                )
            self._sleep(interval_s)

    # --- maintenance (admin scope) -------------------------------------------------------------

    def summarize(self, request: SummarizeRequest | None = None, /, **fields: Any) -> SummarizeResponse:
        """Run (or re-run) summaries: ``summarize(grain="daily", period="2026-11-21")`` or a
        ``from``/``to`` range (``from_=`` here)."""
        if request is None:
            request = SummarizeRequest.model_validate(fields)
        elif fields:
            raise TypeError("give a SummarizeRequest or fields, not both")
        return self._send("POST", "/v1/admin/summarize", SummarizeResponse, request)

    def run_retention(self) -> RetentionRunResponse:
        """Run retention now for every tenant (what the daily schedule runs): deployed, started in
        the retention function (``status: started``); on the embedded runtime, run with its report."""
        return self._send("POST", "/v1/admin/retention", RetentionRunResponse)

    def run_patterns(self, agent_id: str | None = None) -> PatternRunResponse:
        """Recognise patterns now (what the daily schedule runs): for one agent, or every agent of
        the key's tenant with recent memory; 202 with how many agents were ``queued`` (the patterns
        are written within seconds, ``wait_until_stored`` waits for them)."""
        request = PatternRunRequest(agent_id=agent_id)
        return self._send("POST", "/v1/admin/patterns", PatternRunResponse, request)

    def settings(self) -> SettingsResponse:
        """The key's tenant's settings (admin scope), their version, and of its provider key only
        the last four characters."""
        return self._send("GET", "/v1/admin/settings", SettingsResponse)

    def update_settings(
        self,
        settings: TenantSettings,
        version: int,
        provider_key: str | None = None,
        clear_provider_key: bool = False,
    ) -> SettingsResponse:
        """Replace the tenant's settings, naming the ``version`` read (a `ConflictError` when
        another change came first); set or clear its provider key."""
        body: dict[str, Any] = {
            "version": version,
            "settings": settings.model_dump(mode="json"),
            "clear_provider_key": clear_provider_key,
        }
        if provider_key is not None:
            body["provider_key"] = provider_key  # sent as is: a SecretStr would dump as stars
        raw = self._send_raw("PUT", "/v1/admin/settings", body=json.dumps(body).encode())
        return SettingsResponse.model_validate_json(raw.body)

    # --- exports (admin scope) -----------------------------------------------------------------

    def start_export(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> ExportOut:
        """Start exporting one end user's memory (every agent of the tenant) or one agent's
        (exactly one of the two), optionally only what speaks about ``since``..``until``."""
        fields = {"user_id": user_id, "agent_id": agent_id, "since": since, "until": until}
        request = ExportRequest.model_validate({k: v for k, v in fields.items() if v is not None})
        return self._send("POST", "/v1/admin/exports", ExportOut, request)

    def export_status(self, export_id: str) -> ExportOut:
        """An export's progress and, when done, its ``download_url``."""
        return self._send("GET", "/v1/admin/exports/" + quote(export_id, safe=""), ExportOut)

    def list_exports(self, limit: int = 20) -> ExportsResponse:
        return self._send("GET", "/v1/admin/exports", ExportsResponse, query={"limit": limit})

    def wait_for_export(
        self,
        export_id: str,
        timeout_s: float = 3600.0,
        interval_s: float = 0.5,
        on_progress: Callable[[ExportOut], None] | None = None,
    ) -> ExportOut:
        """Poll the export until it is done or failed (``on_progress`` sees every answer); raises
        `TimeoutError` at the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.export_status(export_id)
            if on_progress is not None:
                on_progress(status)
            if status.status in ("done", "failed"):
                return status
            if time.monotonic() >= deadline:
                raise TimeoutError(f"export {export_id} is still {status.status} after {timeout_s} s")
            self._sleep(interval_s)

    def download_export(
        self, export_id: str, out: BinaryIO, on_bytes: Callable[[int, int | None], None] | None = None
    ) -> int:
        """Stream a done export's file into ``out`` a megabyte at a time (memory stays bounded
        whatever its size): from its pre-signed URL (without the key), or from this API's download
        route (with it). ``on_bytes(done, total)`` follows it; returns the bytes written."""
        status = self.export_status(export_id)
        if status.download_url is None:
            raise UnexpectedResponseError(f"export {export_id} is {status.status}: nothing to download", 409)
        signed = urlsplit(status.download_url).scheme in ("http", "https")
        url = status.download_url if signed else self.base_url + status.download_url
        headers = {"Accept": "application/x-ndjson", "User-Agent": self._user_agent}
        if not signed:  # a pre-signed URL carries its own signature: a key sent with it is refused
            headers.update(self._auth.headers("GET", url, headers, None))
        parts = urlsplit(url)
        https = parts.scheme == "https"
        connection = (http.client.HTTPSConnection if https else http.client.HTTPConnection)(
            parts.netloc, timeout=self._timeout_s
        )
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", target, headers=headers)
            response = connection.getresponse()
            if response.status >= 400:
                lowered = {k.lower(): v for k, v in response.getheaders()}
                raise error_from_response(response.status, lowered, response.read(), None)
            total = int(response.headers["Content-Length"]) if response.headers["Content-Length"] else None
            done = 0
            while chunk := response.read(1 << 20):
                out.write(chunk)
                done += len(chunk)
                if on_bytes is not None:
                    on_bytes(done, total)
            return done
        finally:
            connection.close()

    # --- the change feed's webhook (admin scope) ---------------------------------------------

    def webhook(self) -> WebhookResponse:
        """The tenant's webhook (`NotFoundError` when none is set); of its secret, the last four
        characters."""
        return self._send("GET", "/v1/admin/webhooks", WebhookResponse)

    def set_webhook(
        self,
        url: str,
        *,
        event_types: Sequence[str] | None = None,
        include_content: bool = False,
        secret: str | None = None,
        new_secret: bool = False,
    ) -> WebhookResponse:
        """Set or replace the tenant's webhook. The answer's ``secret`` is the signing secret
        when this call made it (a first webhook, or ``new_secret``): keep it, it is not shown
        again. Check deliveries with `agent_memory.domain.change_events.verify_signature`."""
        fields = {"url": url, "event_types": event_types, "include_content": include_content}
        body = WebhookUpdate.model_validate(fields).model_dump(mode="json", exclude_none=True)
        body |= {"new_secret": new_secret} | ({"secret": secret} if secret is not None else {})
        raw = self._send_raw("PUT", "/v1/admin/webhooks", body=json.dumps(body).encode())
        return WebhookResponse.model_validate_json(raw.body)

    def delete_webhook(self) -> WebhookDeleted:
        """Remove the tenant's webhook: no event is delivered from now on."""
        return self._send("DELETE", "/v1/admin/webhooks", WebhookDeleted)

    # --- plumbing ------------------------------------------------------------------------------

    @staticmethod
    def _follow(fetch: Callable[[str | None], P]) -> Iterator[P]:
        """Pages from ``fetch(cursor)``, lazily, until one has no ``next_cursor``."""
        cursor: str | None = None
        while True:
            page = fetch(cursor)
            yield page
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    @staticmethod
    def _item(item: ItemLike, now: datetime) -> WriteItem:
        built = WriteItem(content=item) if isinstance(item, str) else WriteItem.model_validate(item)
        return built if built.occurred_at else built.model_copy(update={"occurred_at": now})

    @staticmethod
    def _document_path(doc_id: str, *parts: str) -> str:
        if not doc_id:
            raise ValueError("doc_id is empty")
        return "/v1/knowledge/documents/" + "/".join(quote(p, safe="") for p in (doc_id, *parts))

    @staticmethod
    def _agent_path(agent_id: str, *parts: str) -> str:
        if not agent_id:
            raise ValueError("agent_id is empty")
        return "/v1/agents/" + "/".join(quote(p, safe="") for p in (agent_id, *parts))

    def _send(
        self,
        method: str,
        path: str,
        response_model: type[M],
        request: BaseModel | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> M:
        body = request.model_dump_json(exclude_none=True, by_alias=True).encode() if request else None
        raw = self._send_raw(method, path, body=body, query=query, extra_headers=headers)
        try:
            return response_model.model_validate_json(raw.body)
        except ValidationError as exc:
            raise UnexpectedResponseError(
                f"{method} {path}: the {raw.status} response is not a {response_model.__name__}: {exc}",
                raw.status,
            ) from exc

    def _send_raw(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        query: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> RawResponse:
        """One call, retried per the policy; returns a success response or raises a typed error.
        ``extra_headers`` are the route's own (``Idempotency-Key``), sent (and signed) on every
        attempt."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.base_url + path + (f"?{urlencode(params)}" if params else "")
        headers = {"Accept": "application/json", "User-Agent": self._user_agent, **(extra_headers or {})}
        if body is not None:
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            attempt += 1
            sent = {**headers, **self._auth.headers(method, url, headers, body)}
            try:
                response = self._transport.send(method, url, sent, body, self._timeout_s)
            except ssl.SSLCertVerificationError as exc:  # asking again will not fix a certificate
                raise TransportError(f"{method} {path}: {exc}", attempt) from exc
            except (OSError, http.client.HTTPException) as exc:
                if not self._retry.retry_on_connection_errors or attempt >= self._retry.max_attempts:
                    message = f"{method} {path}: {exc!r} after {attempt} attempt(s)"
                    raise TransportError(message, attempt) from exc
                delay = self._retry.backoff(attempt)
                logger.debug("retrying %s %s in %.2f s after %r", method, path, delay, exc)
                self._sleep(delay)
                continue
            if response.status < 400:
                return response
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if self._retry.retryable_status(response.status) and attempt < self._retry.max_attempts:
                delay_s = self._retry.delay(attempt, retry_after)
                if delay_s is not None:
                    logger.debug("retrying %s %s in %.2f s after %s", method, path, delay_s, response.status)
                    self._sleep(delay_s)
                    continue
            raise error_from_response(response.status, response.headers, response.body, retry_after)
