"""The client over a scripted in-memory transport: what it sends, what it returns, how it retries."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from pydantic import ValidationError

from agent_memory.client import (
    MemoryClient,
    NotFoundError,
    RateLimitError,
    RawResponse,
    RetryPolicy,
    ServerError,
    TransportError,
    UnexpectedResponseError,
)
from agent_memory.client.sigv4 import SigV4Auth
from agent_memory.contract.v1 import ContextRequest, ContextResponse, RetentionRunResponse, SearchRequest
from agent_memory.model.limits import DEFAULT_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
BASE = "https://api.example.test/prod"


@dataclass
class Sent:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    timeout_s: float

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url).query)

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class ScriptedTransport:
    """Answers from a script, in order: a `RawResponse`, or an exception to raise."""

    def __init__(self, script: Iterable[RawResponse | BaseException]) -> None:
        self.script = list(script)
        self.sent: list[Sent] = []
        self.closed = False

    def send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout_s: float
    ) -> RawResponse:
        self.sent.append(Sent(method, url, dict(headers), body, timeout_s))
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step

    def close(self) -> None:
        self.closed = True


def ok(body: Any, status: int = 200, **headers: str) -> RawResponse:
    return RawResponse(
        status, {k.lower().replace("_", "-"): v for k, v in headers.items()}, json.dumps(body).encode()
    )


def error(status: int, code: str, **headers: str) -> RawResponse:
    return ok({"error": {"code": code, "message": code.replace("_", " "), "details": []}}, status, **headers)


def make(
    *script: RawResponse | BaseException, retry: RetryPolicy | None = None
) -> tuple[MemoryClient, ScriptedTransport, list[float]]:
    transport = ScriptedTransport(script)
    sleeps: list[float] = []
    client = MemoryClient(
        BASE,
        api_key="am_secret",
        transport=transport,
        sleep=sleeps.append,
        clock=lambda: NOW,
        retry=retry or RetryPolicy(random=lambda: 1.0),
        timeout_s=3.0,
    )
    return client, transport, sleeps


ACCEPTED = {"accepted": [{"id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", "status": "queued"}]}
RESULT = {
    "id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", "grain": "working", "time_key": None, "kind": "decision",
    "content": "Alice moved the launch to March 3.",
    "text": "[2026-11-20] Alice moved the launch to March 3.",
    "score": 0.7, "similarity": 0.8, "recency": 0.9, "importance": 0.8,
    "occurred_at": "2026-11-20T14:03:00Z", "topic": "launch date", "user_id": None,
    "conversation_id": None, "source": None, "metadata": {}, "tags": [],
}  # fmt: skip


def memory(n: int) -> dict[str, Any]:
    return {
        "id": f"mem_{'a' * 25}{chr(ord('a') + n)}", "agent_id": "bot", "user_id": None, "grain": "working",
        "time_key": None, "period_start": None, "period_end": None, "kind": "note", "role": None,
        "conversation_id": None, "content": f"memory {n}", "text": f"[2026-11-20] memory {n}", "topic": None,
        "importance": 0.5, "tags": [], "source": None, "links": [], "metadata": {}, "source_ids": [],
        "access_count": 0, "occurred_at": "2026-11-20T00:00:00Z", "created_at": "2026-11-20T00:00:00Z",
        "updated_at": "2026-11-20T00:00:00Z", "expires_at": None,
    }  # fmt: skip


# --- what goes out -------------------------------------------------------------------------------


def test_write_sends_the_contract_body_with_bearer_auth_and_fixes_occurred_at() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))

    # WHEN
    response = client.write("support-bot", ["Alice moved the launch to March 3."])

    # THEN
    [sent] = transport.sent
    assert (sent.method, sent.path) == ("POST", "/prod/v1/agents/support-bot/memories")
    assert sent.headers["Authorization"] == "Bearer am_secret"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.timeout_s == 3.0
    [item] = sent.json()["items"]
    # occurred_at is set by the client (so a retry is byte-identical), None fields are not sent
    assert item == {"content": "Alice moved the launch to March 3.", "occurred_at": "2026-11-22T12:00:00Z",
                    "tags": [], "links": [], "metadata": {}}  # fmt: skip
    assert response.accepted[0].id == ACCEPTED["accepted"][0]["id"]


def test_an_explicit_occurred_at_is_kept_and_the_callers_item_is_not_changed() -> None:
    # GIVEN
    from agent_memory.contract.v1 import WriteItem

    client, transport, _ = make(ok(ACCEPTED, 202))
    mine = WriteItem(content="x")

    # WHEN
    client.write("bot", [mine, {"content": "y", "occurred_at": "2026-01-02T03:04:05Z"}])

    # THEN
    assert mine.occurred_at is None
    assert [i["occurred_at"] for i in transport.sent[0].json()["items"]] == [
        "2026-11-22T12:00:00Z",
        "2026-01-02T03:04:05Z",
    ]


def test_conversation_form_sends_messages_with_their_conversation() -> None:
    # GIVEN
    client, transport, _ = make(ok(ACCEPTED, 202))

    # WHEN
    client.write_conversation(
        "bot",
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        conversation_id="c-42",
    )

    # THEN
    body = transport.sent[0].json()
    assert body["conversation_id"] == "c-42"
    assert [(m["role"], m["occurred_at"]) for m in body["messages"]] == [
        ("user", "2026-11-22T12:00:00Z"),
        ("assistant", "2026-11-22T12:00:00Z"),
    ]


def test_an_invalid_request_fails_before_anything_is_sent() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="max_results"):
        client.search("bot", "launch", max_results=1000)
    with pytest.raises(ValidationError, match="importance"):
        client.remember("bot", "x", importance=2)

    assert transport.sent == []


def test_search_takes_fields_or_a_request_and_returns_typed_results() -> None:
    # GIVEN
    client, transport, _ = make(ok({"results": [RESULT]}), ok({"results": []}))

    # WHEN
    found = client.search("bot", "when is the launch?", grain="daily", max_days_ago=30)
    client.search("bot", SearchRequest(query="x", as_of=datetime(2026, 11, 1, tzinfo=UTC)))

    # THEN
    assert transport.sent[0].path == "/prod/v1/agents/bot/memories/search"
    assert transport.sent[0].json() == {
        "query": "when is the launch?", "grain": "daily", "min_days_ago": 0, "max_days_ago": 30,
        "max_results": 10, "kinds": [], "tags": [],
    }  # fmt: skip
    assert transport.sent[1].json()["as_of"] == "2026-11-01T00:00:00Z"
    [hit] = found.results
    assert hit.occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)
    with pytest.raises(TypeError):
        client.search("bot", SearchRequest(query="x"), grain="daily")


def test_ids_are_quoted_into_the_path() -> None:
    # GIVEN
    client, transport, _ = make(error(404, "not_found"))

    # WHEN / THEN
    with pytest.raises(NotFoundError):
        client.get("bot", "mem_x/../../admin")

    assert transport.sent[0].path == "/prod/v1/agents/bot/memories/mem_x%2F..%2F..%2Fadmin"


def test_pages_follow_the_cursor_lazily_until_it_ends() -> None:
    # GIVEN
    client, transport, _ = make(
        ok({"items": [memory(0), memory(1)], "next_cursor": "c1"}),
        ok({"items": [memory(2)], "next_cursor": None}),
    )

    pages = client.pages("bot", grain="working", limit=2)
    # WHEN
    first = next(pages)
    # THEN
    assert len(transport.sent) == 1  # the second page is not fetched before it is asked for
    rest = list(pages)

    assert [m.content for m in first.items] == ["memory 0", "memory 1"]
    assert [m.content for p in rest for m in p.items] == ["memory 2"]
    assert transport.sent[0].query == {"grain": ["working"], "limit": ["2"]}
    assert transport.sent[1].query == {"grain": ["working"], "limit": ["2"], "cursor": ["c1"]}


def test_forget_stats_and_admin_routes() -> None:
    # GIVEN
    client, transport, _ = make(
        ok({"id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", "status": "forgotten",
            "stale_summaries": ["sum_aaaaaaaaaaaaaaaaaaaaaaaaaa"]}),
        ok({"records": {"working": 2}, "pending_writes": 1, "oldest": None, "newest": None}),
        ok({"grain": "daily", "periods": ["2026-11-21"], "jobs_queued": 3}, 202),
        ok({"status": "started", "report": None}, 202),
    )  # fmt: skip

    forgotten = client.forget("bot", "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa")
    # WHEN / THEN
    assert (forgotten.id, forgotten.stale_summaries) == (
        "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa",
        ["sum_aaaaaaaaaaaaaaaaaaaaaaaaaa"],
    )
    assert client.stats("bot").pending_writes == 1
    assert client.summarize(grain="daily", period="2026-11-21").jobs_queued == 3
    assert client.run_retention() == RetentionRunResponse(status="started")

    assert [(s.method, s.path) for s in transport.sent] == [
        ("DELETE", "/prod/v1/agents/bot/memories/mem_aaaaaaaaaaaaaaaaaaaaaaaaaa"),
        ("GET", "/prod/v1/agents/bot/stats"),
        ("POST", "/prod/v1/admin/summarize"),
        ("POST", "/prod/v1/admin/retention"),
    ]
    assert transport.sent[2].json() == {"grain": "daily", "period": "2026-11-21"}


CONTEXT = {
    "context": "[2026-11-20 · working] Alice moved the launch to March 3.",
    "tokens": 15, "token_budget": 500, "dropped": 2,
    "items": [{"id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", "grain": "working", "time_key": None,
               "occurred_at": "2026-11-20T14:03:00Z", "score": 0.7, "tokens": 15}],
}  # fmt: skip


def test_context_sends_the_query_and_budget_and_returns_the_typed_block() -> None:
    # GIVEN a service that answers one context block
    client, transport, _ = make(ok(CONTEXT), ok(CONTEXT))

    # WHEN the block is asked for with fields, then with a ready request
    block = client.context("bot", "when is the launch?", token_budget=500, grain="working", user_id="u-7")
    client.context("bot", ContextRequest(query="launch", max_days_ago=30))

    # THEN the contract's body went to the context route, None fields left out
    assert (transport.sent[0].method, transport.sent[0].path) == ("POST", "/prod/v1/agents/bot/context")
    assert transport.sent[0].json() == {
        "query": "when is the launch?", "token_budget": 500, "grain": "working", "min_days_ago": 0,
        "user_id": "u-7",
    }  # fmt: skip
    assert transport.sent[1].json() == {
        "query": "launch", "token_budget": DEFAULT_CONTEXT_TOKENS, "grain": "all", "min_days_ago": 0,
        "max_days_ago": 30,
    }  # fmt: skip
    # AND the answer is typed
    assert isinstance(block, ContextResponse)
    assert (block.tokens, block.dropped, block.items[0].grain) == (15, 2, "working")
    assert block.items[0].occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)


def test_context_refuses_what_the_contract_refuses_before_sending() -> None:
    # GIVEN
    client, transport, _ = make()

    # WHEN / THEN
    with pytest.raises(ValidationError, match="token_budget"):
        client.context("bot", "launch", token_budget=MAX_CONTEXT_TOKENS + 1)
    with pytest.raises(ValidationError, match="blank"):
        client.context("bot", "   ")
    with pytest.raises(TypeError):
        client.context("bot", ContextRequest(query="x"), token_budget=100)

    assert transport.sent == []


def test_erase_user_deletes_by_user_and_never_without_one() -> None:
    # GIVEN
    client, transport, _ = make(ok({"user_id": "u-7", "forgotten": 3, "stale_summaries": []}))

    # WHEN
    erased = client.erase_user("bot", "u-7")

    # THEN
    assert (transport.sent[0].method, transport.sent[0].path) == ("DELETE", "/prod/v1/agents/bot/memories")
    assert transport.sent[0].query == {"user_id": ["u-7"]}
    assert transport.sent[0].body is None
    assert (erased.user_id, erased.forgotten) == ("u-7", 3)
    with pytest.raises(ValueError, match="user_id"):
        client.erase_user("bot", "")
    assert len(transport.sent) == 1


def audit_event(n: int) -> dict[str, Any]:
    return {"record_id": f"mem_{'a' * 25}{chr(ord('a') + n)}", "action": "forget", "actor": "key_1",
            "at": "2026-11-21T10:00:00Z", "detail": {"stale_summaries": []}}  # fmt: skip


def test_the_audit_trail_is_walked_page_by_page_for_one_record_or_all() -> None:
    # GIVEN an audit trail of three events, served two a page
    client, transport, _ = make(
        ok({"items": [audit_event(0), audit_event(1)], "next_cursor": "a1"}),
        ok({"items": [audit_event(2)], "next_cursor": None}),
        ok({"items": [], "next_cursor": None}),
    )

    # WHEN every event is read, then one record's events
    events = list(client.iter_audit("bot", page_size=2))
    client.audit_page("bot", record_id="mem_aaaaaaaaaaaaaaaaaaaaaaaaaa")

    # THEN the cursor was followed to the end, and the filter went out as the query string
    assert [e.record_id[-1] for e in events] == ["a", "b", "c"]
    assert events[0].at == datetime(2026, 11, 21, 10, tzinfo=UTC)
    assert [s.query for s in transport.sent] == [
        {"limit": ["2"]},
        {"limit": ["2"], "cursor": ["a1"]},
        {"record_id": ["mem_aaaaaaaaaaaaaaaaaaaaaaaaaa"], "limit": ["50"]},
    ]
    assert {s.path for s in transport.sent} == {"/prod/v1/agents/bot/audit"}


def test_wait_until_stored_polls_stats_until_nothing_is_pending() -> None:
    # GIVEN
    def stats(pending: int) -> RawResponse:
        return ok({"records": {}, "pending_writes": pending, "oldest": None, "newest": None})

    # WHEN
    client, transport, sleeps = make(stats(2), stats(1), stats(0))

    # THEN
    assert client.wait_until_stored("bot", interval_s=0.05).pending_writes == 0
    assert len(transport.sent) == 3
    assert sleeps == [0.05, 0.05]


def test_a_success_status_with_a_body_that_is_not_the_contract_is_an_unexpected_response() -> None:
    # GIVEN
    client, _, _ = make(RawResponse(200, {}, b"<html>login</html>"))

    # WHEN / THEN
    with pytest.raises(UnexpectedResponseError) as caught:
        client.stats("bot")
    assert caught.value.status == 200


def test_construction_refuses_what_cannot_work() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="http"):
        MemoryClient("ftp://example.test")
    with pytest.raises(ValueError, match="not both"):
        MemoryClient(BASE, api_key="k", auth=SigV4Auth(region="us-east-1"))
    with pytest.raises(ValueError, match="AGENT_MEMORY_URL"):
        MemoryClient.from_env({})
    assert "am_secret" not in repr(MemoryClient(BASE, api_key="am_secret"))
    assert (
        MemoryClient.from_env({"AGENT_MEMORY_URL": BASE + "/", "AGENT_MEMORY_API_KEY": "k"}).base_url == BASE
    )


def test_the_client_closes_its_transport() -> None:
    # GIVEN
    client, transport, _ = make()
    with client:
        pass
    # WHEN / THEN
    assert transport.closed


# --- retries -------------------------------------------------------------------------------------


def test_throttling_then_server_errors_are_retried_with_retry_after_then_backoff() -> None:
    # GIVEN a 429 asking for 2 s, then a 503 without Retry-After, then success
    client, transport, sleeps = make(
        error(429, "throttled", retry_after="2"),
        error(503, "dependency_unavailable"),
        ok({"results": []}),
        retry=RetryPolicy(max_attempts=4, base_delay_s=0.25, random=lambda: 1.0),
    )

    # WHEN one search is made
    assert client.search("bot", "x").results == []

    # THEN it waited as asked, then the jittered backoff of the second retry, and sent one body 3 times
    assert sleeps == [2.0, 0.5]
    assert len({s.body for s in transport.sent}) == 1
    assert len(transport.sent) == 3


def test_a_write_retried_after_a_5xx_sends_the_same_body_so_the_service_deduplicates_it() -> None:
    # GIVEN
    client, transport, _ = make(error(502, "bad_gateway"), ok(ACCEPTED, 202))

    # WHEN
    client.remember("bot", "a fact")

    # THEN
    first, second = transport.sent
    assert first.body == second.body


def test_when_retries_run_out_the_last_error_is_raised_with_its_body() -> None:
    # GIVEN
    client, transport, sleeps = make(
        *[error(503, "dependency_unavailable", x_amzn_requestid=f"r{i}") for i in range(3)],
        retry=RetryPolicy(max_attempts=3, random=lambda: 0.0),
    )

    # WHEN / THEN
    with pytest.raises(ServerError) as caught:
        client.stats("bot")

    assert (caught.value.status, caught.value.code, caught.value.request_id) == (
        503,
        "dependency_unavailable",
        "r2",
    )
    assert len(transport.sent) == 3
    assert sleeps == [0.0, 0.0]


def test_a_retry_after_longer_than_the_policy_waits_is_not_waited_for() -> None:
    # GIVEN
    client, transport, sleeps = make(error(429, "throttled", retry_after="3600"))

    # WHEN / THEN
    with pytest.raises(RateLimitError) as caught:
        client.stats("bot")

    assert caught.value.retry_after_s == 3600
    assert sleeps == []
    assert len(transport.sent) == 1


def test_client_errors_are_not_retried() -> None:
    # GIVEN
    client, transport, sleeps = make(error(404, "not_found"))

    # WHEN / THEN
    with pytest.raises(NotFoundError):
        client.forget("bot", "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa")

    assert len(transport.sent) == 1
    assert sleeps == []


def test_connection_errors_are_retried_then_raised_as_a_transport_error() -> None:
    # GIVEN
    client, _, sleeps = make(
        ConnectionRefusedError(111, "refused"),
        TimeoutError("timed out"),
        ConnectionResetError(104, "reset"),
        retry=RetryPolicy(max_attempts=3, base_delay_s=0.1, random=lambda: 1.0),
    )

    # WHEN / THEN
    with pytest.raises(TransportError) as caught:
        client.stats("bot")

    assert caught.value.attempts == 3
    assert sleeps == [0.1, 0.2]
    assert isinstance(caught.value.__cause__, ConnectionResetError)


def test_a_connection_error_then_success_returns_the_answer() -> None:
    # WHEN
    client, _, sleeps = make(
        ConnectionRefusedError(111, "refused"),
        ok({"records": {}, "pending_writes": 0, "oldest": None, "newest": None}),
    )

    # THEN
    assert client.stats("bot").pending_writes == 0
    assert len(sleeps) == 1


def test_a_certificate_error_is_not_retried() -> None:
    # GIVEN
    client, transport, sleeps = make(ssl.SSLCertVerificationError("certificate verify failed"))

    # WHEN / THEN
    with pytest.raises(TransportError):
        client.stats("bot")

    assert len(transport.sent) == 1
    assert sleeps == []


# --- SigV4 -----------------------------------------------------------------------------------------


def test_sigv4_signs_every_attempt_instead_of_sending_a_bearer_key() -> None:
    # GIVEN a client signing with (fake, offline) credentials, and a 503 then success
    session = boto3.Session(
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name="eu-west-1"
    )
    transport = ScriptedTransport([error(503, "x"), ok(ACCEPTED, 202)])
    client = MemoryClient(
        BASE,
        auth=SigV4Auth(session=session),
        transport=transport,
        sleep=lambda _: None,
        clock=lambda: NOW,
        retry=RetryPolicy(random=lambda: 0.0),
    )

    # WHEN it writes
    client.remember("bot", "signed")

    # THEN each attempt carries its own SigV4 signature over the body, for execute-api in the region
    for sent in transport.sent:
        authorization = sent.headers["Authorization"]
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        assert "/eu-west-1/execute-api/aws4_request" in authorization
        assert "content-type" in authorization.split("SignedHeaders=")[1]
        assert sent.headers["X-Amz-Date"]
    assert "Bearer" not in json.dumps([s.headers for s in transport.sent])


VERSION = {
    "version": 2, "at": "2026-06-12T09:00:00Z", "change": "superseded", "actor": "writer",
    "content": "I live in Berlin.", "current": False, "valid_from": "2026-03-10T09:00:00Z",
    "valid_to": "2026-06-12T09:00:00Z", "supersedes": [], "superseded_by": "mem_bbbbbbbbbbbbbbbbbbbbbbbbbb",
    "confidence": None, "detail": {"by": "mem_bbbbbbbbbbbbbbbbbbbbbbbbbb"},
}  # fmt: skip


def test_history_and_restore_send_their_routes_and_read_the_versions() -> None:
    # GIVEN a service answering a history and a restore
    restored = {**VERSION, "version": 3, "change": "restored", "current": True, "superseded_by": None}
    client, transport, _ = make(
        ok({"id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", "forgotten": False, "versions": [VERSION]}),
        ok(
            {
                "id": "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                "restored": 1,
                "version": restored,
                "text_pending": False,
            }
        ),
    )
    # WHEN reading the history and restoring version 1
    history = client.history("bot", "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa")
    made = client.restore("bot", "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", 1)
    # THEN both went to their paths and came back typed
    assert (
        history.versions[0].superseded_by == "mem_bbbbbbbbbbbbbbbbbbbbbbbbbb"
        and not history.versions[0].current
    )
    assert (made.restored, made.version.change, made.version.current) == (1, "restored", True)
    assert [(s.method, s.path) for s in transport.sent] == [
        ("GET", "/prod/v1/agents/bot/memories/mem_aaaaaaaaaaaaaaaaaaaaaaaaaa/history"),
        ("POST", "/prod/v1/agents/bot/memories/mem_aaaaaaaaaaaaaaaaaaaaaaaaaa/history/1/restore"),
    ]
    with pytest.raises(ValueError, match="numbered from 1"):
        client.restore("bot", "mem_aaaaaaaaaaaaaaaaaaaaaaaaaa", 0)
