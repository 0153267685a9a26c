"""Every limit of the contract (`model.limits`), over HTTP: refused with the documented error, and
nothing written. The values right at each limit are accepted, so a limit cannot drift by one.
"""

from __future__ import annotations

import http.client
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

import pytest
from tests.e2e.conftest import GRAINS, Api, assert_error, settled_stats

from agent_memory import container
from agent_memory.model import limits

AGENT = "agent-under-test"
GOOD_ID = "mem_" + "a" * 26
WRITE = f"/v1/agents/{AGENT}/memories"
SEARCH = f"/v1/agents/{AGENT}/memories/search"


def _item(**fields: Any) -> dict[str, Any]:
    return {"items": [{"content": "A perfectly fine memory.", **fields}]}


def _metadata_of_size(n: int) -> dict[str, Any]:
    """Metadata whose compact JSON encoding (how the service measures it) is exactly ``n`` bytes."""
    value = {"k": "x" * (n - len('{"k":""}'))}
    assert len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) == n
    return value


def _nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value  # type: ignore[no-any-return]


def _distinct(n: int) -> list[dict[str, Any]]:
    """Items that are neither the same id nor near duplicates of each other."""
    return [{"content": f"{uuid.uuid4().hex} {uuid.uuid4().hex}"} for _ in range(n)]


def _links(n: int) -> list[dict[str, Any]]:
    return [{"entity_type": "person", "entity_id": f"p{i}"} for i in range(n)]


@dataclass(frozen=True)
class Case:
    method: str
    path: str
    body: Any = None
    raw: bytes | None = None
    status: int = 400
    code: str = "validation_error"
    #: Agent ids (as the path spells them) whose stores must stay empty.
    agents: tuple[str, ...] = field(default=(AGENT,))


def _bad_agent(agent: str) -> Case:
    return Case("POST", f"/v1/agents/{agent}/memories", _item(), agents=(agent, unquote(agent)))


MAX_CONTENT = limits.MAX_CONTENT_BYTES
INVALID: dict[str, Case | Any] = {
    # --- write: content
    "content over 16 KiB": Case("POST", WRITE, _item(content="x" * (MAX_CONTENT + 1))),
    "content over 16 KiB in UTF-8 bytes": Case("POST", WRITE, _item(content="é" * (MAX_CONTENT // 2 + 1))),
    "content blank": Case("POST", WRITE, _item(content=" \n\t ")),
    "content empty": Case("POST", WRITE, _item(content="")),
    "content missing": Case("POST", WRITE, {"items": [{"role": "user"}]}),
    "content not a string": Case("POST", WRITE, _item(content=42)),
    # --- write: the request's shape
    "101 items": Case("POST", WRITE, {"items": _distinct(limits.MAX_ITEMS_PER_REQUEST + 1)}),
    "empty items": Case("POST", WRITE, {"items": []}),
    "unknown item field": Case("POST", WRITE, _item(colour="blue")),
    "unknown top-level field": Case("POST", WRITE, {**_item(), "priority": 1}),
    "both forms": Case("POST", WRITE, {**_item(), "messages": [{"role": "user", "content": "hi"}]}),
    "neither form": Case("POST", WRITE, {}),
    "conversation_id beside items": Case("POST", WRITE, {**_item(), "conversation_id": "c-1"}),
    "empty messages": Case("POST", WRITE, {"conversation_id": "c-1", "messages": []}),
    "101 messages": Case(
        "POST",
        WRITE,
        {
            "messages": [
                {"role": "user", "content": i["content"]} for i in _distinct(limits.MAX_ITEMS_PER_REQUEST + 1)
            ]
        },
    ),
    "message without role": Case("POST", WRITE, {"messages": [{"content": "hi"}]}),
    "message with blank content": Case("POST", WRITE, {"messages": [{"role": "user", "content": "  "}]}),
    # --- write: item fields
    "bad role": Case("POST", WRITE, _item(role="narrator")),
    "importance 1.5": Case("POST", WRITE, _item(importance=1.5)),
    "importance negative": Case("POST", WRITE, _item(importance=-0.1)),
    "ttl_days 0": Case("POST", WRITE, _item(ttl_days=0)),
    "ttl_days over the maximum": Case("POST", WRITE, _item(ttl_days=limits.MAX_TTL_DAYS + 1)),
    "too many tags": Case("POST", WRITE, _item(tags=[f"t{i}" for i in range(limits.MAX_TAGS + 1)])),
    "tag too long": Case("POST", WRITE, _item(tags=["x" * (limits.MAX_TAG_CHARS + 1)])),
    "blank tag": Case("POST", WRITE, _item(tags=["   "])),
    "tag with a control character": Case("POST", WRITE, _item(tags=["bell\x07"])),
    "topic too long": Case("POST", WRITE, _item(topic="t" * (limits.MAX_TOPIC_CHARS + 1))),
    "too many links": Case("POST", WRITE, _item(links=_links(limits.MAX_LINKS + 1))),
    "link weight over 1": Case(
        "POST", WRITE, _item(links=[{"entity_type": "p", "entity_id": "x", "weight": 2}])
    ),
    "metadata too big": Case("POST", WRITE, _item(metadata=_metadata_of_size(limits.MAX_METADATA_BYTES + 1))),
    "metadata too deep": Case("POST", WRITE, _item(metadata=_nested(limits.MAX_METADATA_DEPTH + 1))),
    "metadata not an object": Case("POST", WRITE, _item(metadata=["a"])),
    "occurred_at not a time": Case("POST", WRITE, _item(occurred_at="yesterday")),
    "occurred_at impossible date": Case("POST", WRITE, _item(occurred_at="2026-13-40T00:00:00Z")),
    "kind summary": Case("POST", WRITE, _item(kind="summary")),
    "kind unknown": Case("POST", WRITE, _item(kind="gossip")),
    "user_id with a colon": Case("POST", WRITE, _item(user_id="u:7")),
    "unknown source field": Case("POST", WRITE, _item(source={"platform": "slack", "secret": "x"})),
    # --- write: not JSON, or not an object
    "malformed JSON": Case("POST", WRITE, raw=b'{"items": [', code="invalid_json"),
    "not UTF-8": Case("POST", WRITE, raw=b'{"items": [{"content": "\xff\xfe"}]}', code="invalid_json"),
    "JSON array of numbers": Case("POST", WRITE, [1, 2]),
    "JSON array holding a write": Case("POST", WRITE, [_item()]),
    "JSON array holding two writes": Case(
        "POST", WRITE, [_item(content="first write"), _item(content="second write")]
    ),
    "search body in an array": Case("POST", SEARCH, [{"query": "x"}]),
    "JSON string": Case("POST", WRITE, "items"),
    "JSON number": Case("POST", WRITE, 7),
    "JSON null": Case("POST", WRITE, raw=b"null"),
    "no body": Case("POST", WRITE, raw=b""),
    # --- the agent id in the path
    "agent with a colon": _bad_agent("a:b"),
    "agent ..": _bad_agent(".."),
    "agent %2e%2e": _bad_agent("%2e%2e"),
    "agent with an encoded slash": _bad_agent("a%2Fb"),
    "agent starting with a dot": _bad_agent(".hidden"),
    "agent with a space": _bad_agent("a%20b"),
    "agent of 129 characters": _bad_agent("a" * 129),
    "stats of a bad agent": Case("GET", "/v1/agents/a:b/stats", agents=("a:b",)),
    # --- search
    "max_results 0": Case("POST", SEARCH, {"max_results": 0}),
    "max_results 101": Case("POST", SEARCH, {"max_results": limits.MAX_RESULTS + 1}),
    "grain hourly": Case("POST", SEARCH, {"grain": "hourly"}),
    "min_days_ago negative": Case("POST", SEARCH, {"min_days_ago": -1}),
    "max_days_ago negative": Case("POST", SEARCH, {"max_days_ago": -0.5}),
    "max_days_ago below min_days_ago": Case("POST", SEARCH, {"min_days_ago": 7, "max_days_ago": 3}),
    "max_days_ago over the maximum": Case("POST", SEARCH, {"max_days_ago": limits.MAX_DAYS_AGO + 1}),
    "query too long": Case("POST", SEARCH, {"query": "q" * (limits.MAX_QUERY_CHARS + 1)}),
    "search too many tags": Case("POST", SEARCH, {"tags": [f"t{i}" for i in range(limits.MAX_TAGS + 1)]}),
    "search unknown kind": Case("POST", SEARCH, {"kinds": ["gossip"]}),
    "search as_of not a time": Case("POST", SEARCH, {"as_of": "tomorrow"}),
    "search unknown field": Case("POST", SEARCH, {"query": "x", "top_k": 3}),
    "search malformed JSON": Case("POST", SEARCH, raw=b"{query:", code="invalid_json"),
    # --- list
    "list limit 0": Case("GET", f"{WRITE}?limit=0"),
    "list limit 101": Case("GET", f"{WRITE}?limit={limits.MAX_LIST_LIMIT + 1}"),
    "list limit not a number": Case("GET", f"{WRITE}?limit=ten"),
    "list grain bogus": Case("GET", f"{WRITE}?grain=bogus"),
    "list grain all": Case("GET", f"{WRITE}?grain=all"),
    "list cursor too long": Case("GET", f"{WRITE}?cursor={'c' * 1025}"),
    "list cursor garbage": Case("GET", f"{WRITE}?cursor=garbage"),
    # --- memory ids
    "get id of bad shape": Case("GET", f"{WRITE}/not-a-memory-id"),
    "get id upper case": Case("GET", f"{WRITE}/MEM_{'A' * 26}"),
    "get id too short": Case("GET", f"{WRITE}/mem_{'a' * 15}"),
    "get id with digits outside base32": Case("GET", f"{WRITE}/mem_{'0' * 26}"),
    "get id too long": Case("GET", f"{WRITE}/mem_{'a' * 65}"),
    "forget id of bad shape": Case("DELETE", f"{WRITE}/{quote('../../x', safe='')}"),
}


@pytest.mark.parametrize("case", list(INVALID.values()), ids=list(INVALID))
def test_invalid_request_is_refused_with_the_documented_error(api: Api, new_key: Any, case: Case) -> None:
    # GIVEN a fresh tenant, so that anything written would show
    tenant, _, key = new_key()

    # WHEN the invalid request is sent
    if case.raw is not None:
        response = api.request(case.method, case.path, key=key, raw=case.raw)
    elif case.body is not None:
        response = api.request(case.method, case.path, case.body, key=key)
    else:
        response = api.request(case.method, case.path, key=key)

    # THEN it is refused with the documented status and body
    assert response.status == case.status, response.data[:500]
    error = assert_error(response.json(), case.code)
    if case.code == "validation_error":
        assert error["details"], "a validation error names what is wrong"
        for detail in error["details"]:
            assert set(detail) == {"loc", "msg", "type"}, detail
    # AND the error never echoes a large input back
    assert len(response.data) < 4096
    # AND nothing was accepted or stored
    _assert_nothing_written(api, key, tenant, case.agents)


def _assert_nothing_written(api: Api, key: str, tenant: str, agents: tuple[str, ...]) -> None:
    status, stats = api("GET", f"/v1/agents/{AGENT}/stats", key=key)
    assert status == 200
    assert stats == {"records": dict.fromkeys(GRAINS, 0), "pending_writes": 0, "oldest": None, "newest": None}
    # Agents the API itself refuses to name are checked on the ports behind it.
    now = datetime.now(UTC)
    for agent in {*agents, AGENT}:
        assert container.pending().count(tenant, agent) == 0, agent
        assert container.store().stats(tenant, agent, now).records == {}, agent


# --- the request body's size --------------------------------------------------------------------


def _send_headers_only(api: Api, path: str, key: str, content_length: int) -> tuple[int, Any]:
    """Announce a body of ``content_length`` bytes and read the answer before sending any of it.

    A server that refuses by ``Content-Length`` answers and closes without reading the body; a
    client still pushing megabytes into that socket would race the close (a broken pipe), so the
    test waits for the verdict first, as a client sending ``Expect: 100-continue`` would.
    """
    conn = http.client.HTTPConnection(api.host, api.port, timeout=api.timeout_s)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Authorization", f"Bearer {key}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(content_length))
        conn.endheaders()
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_body_over_2_mib_is_413_and_nothing_is_written(api: Api, new_key: Any) -> None:
    # GIVEN a fresh tenant
    tenant, _, key = new_key()

    # WHEN a write announces a body one byte over 2 MiB
    status, body = _send_headers_only(api, WRITE, key, limits.MAX_BODY_BYTES + 1)

    # THEN it is refused as too large, with the documented body, and nothing is written
    assert status == 413
    assert_error(body, "payload_too_large")
    _assert_nothing_written(api, key, tenant, (AGENT,))


def test_body_of_exactly_2_mib_is_read(api: Api, new_key: Any) -> None:
    # GIVEN a valid write padded with JSON whitespace to exactly 2 MiB
    _, _, key = new_key()
    payload = json.dumps(_item()).encode()
    payload += b" " * (limits.MAX_BODY_BYTES - len(payload))
    assert len(payload) == limits.MAX_BODY_BYTES

    # WHEN it is sent, THEN it is accepted and stored
    response = api.request("POST", WRITE, key=key, raw=payload)
    assert response.status == 202, response.data[:500]
    assert settled_stats(api, key, AGENT)["records"]["working"] == 1


def test_chunked_body_is_read_or_refused_as_length_required(api: Api, new_key: Any) -> None:
    # GIVEN a valid write sent with Transfer-Encoding: chunked (no Content-Length)
    _, _, key = new_key()
    conn = http.client.HTTPConnection(api.host, api.port, timeout=api.timeout_s)
    try:
        conn.request(
            "POST",
            WRITE,
            body=iter([json.dumps(_item()).encode()]),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = conn.getresponse()
        status = response.status
        response.read()
    finally:
        conn.close()

    # WHEN / THEN the server either reads it (202) or says it needs a length (411); never a misleading 400
    assert status in {202, 411}


# --- right at each limit: accepted ----------------------------------------------------------------

AT_THE_LIMIT: dict[str, tuple[str, str, Callable[[], Any], int]] = {
    # name: (method, path, body factory, working records once stored)
    "content of exactly 16 KiB": ("POST", WRITE, lambda: _item(content="x" * MAX_CONTENT), 1),
    "content of 16 KiB in 2-byte characters": (
        "POST",
        WRITE,
        lambda: _item(content="é" * (MAX_CONTENT // 2)),
        1,
    ),
    "100 items": ("POST", WRITE, lambda: {"items": _distinct(limits.MAX_ITEMS_PER_REQUEST)}, 100),
    "100 messages": (
        "POST",
        WRITE,
        lambda: {"messages": [{"role": "user", **i} for i in _distinct(limits.MAX_ITEMS_PER_REQUEST)]},
        100,
    ),
    "importance 0 and 1": (
        "POST",
        WRITE,
        lambda: {"items": [{**i, "importance": v} for i, v in zip(_distinct(2), (0, 1), strict=True)]},
        2,
    ),
    "ttl_days at the maximum": ("POST", WRITE, lambda: _item(ttl_days=limits.MAX_TTL_DAYS), 1),
    "20 tags of 64 characters": (
        "POST",
        WRITE,
        lambda: _item(tags=[f"{i:02d}" + "x" * (limits.MAX_TAG_CHARS - 2) for i in range(limits.MAX_TAGS)]),
        1,
    ),
    "topic of 256 characters": ("POST", WRITE, lambda: _item(topic="t" * limits.MAX_TOPIC_CHARS), 1),
    "50 links": ("POST", WRITE, lambda: _item(links=_links(limits.MAX_LINKS)), 1),
    "metadata of exactly 8 KiB": (
        "POST",
        WRITE,
        lambda: _item(metadata=_metadata_of_size(limits.MAX_METADATA_BYTES)),
        1,
    ),
    "metadata 5 levels deep": ("POST", WRITE, lambda: _item(metadata=_nested(limits.MAX_METADATA_DEPTH)), 1),
    "search max_results 100": (
        "POST",
        SEARCH,
        lambda: {"query": "fine", "max_results": limits.MAX_RESULTS},
        0,
    ),
    "search query of 4000 characters": ("POST", SEARCH, lambda: {"query": "q" * limits.MAX_QUERY_CHARS}, 0),
    "search window at the maximum": (
        "POST",
        SEARCH,
        lambda: {"min_days_ago": limits.MAX_DAYS_AGO, "max_days_ago": limits.MAX_DAYS_AGO},
        0,
    ),
    "search 20 tags": ("POST", SEARCH, lambda: {"tags": [f"t{i}" for i in range(limits.MAX_TAGS)]}, 0),
    "list limit 1": ("GET", f"{WRITE}?limit=1", lambda: None, 0),
    "list limit 100": ("GET", f"{WRITE}?limit={limits.MAX_LIST_LIMIT}", lambda: None, 0),
}


@pytest.mark.parametrize("name", list(AT_THE_LIMIT))
def test_values_at_each_limit_are_accepted(api: Api, new_key: Any, name: str) -> None:
    # GIVEN a request whose values sit exactly at a limit
    _, _, key = new_key()
    method, path, make_body, stored = AT_THE_LIMIT[name]
    body = make_body()

    # WHEN it is sent
    response = (
        api.request(method, path, body, key=key) if body is not None else api.request(method, path, key=key)
    )

    # THEN it is accepted (202 for writes, 200 for reads) and every write is stored
    assert response.status == (202 if path == WRITE and method == "POST" else 200), response.data[:500]
    assert settled_stats(api, key, AGENT)["records"]["working"] == stored
