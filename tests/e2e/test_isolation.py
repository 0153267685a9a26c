"""Tenant and agent isolation on every route, through the local HTTP server.

Tenant A has memories in agents ``a1`` and ``a2``. Tenant B holds a key to the same server and
names the same agents and ids. Whatever B sends, it must neither see nor change A's memory, and no
answer may carry A's content. Keys limited to one agent, keys without the admin scope, revoked
keys and missing or garbled credentials are refused on every route before anything happens.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from tests.e2e.conftest import GRAINS, Api, HttpResponse, assert_error, settled_stats, unique

from agent_memory.handlers.api import app, openapi_json
from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

ROUTES = ("write", "search", "get", "list", "forget", "stats")
#: Tenant A's webhook: a closed port on loopback (nothing listens; deliveries fail quietly).
A_WEBHOOK = "http://127.0.0.1:9/tenant-a-hook"

A_SECRETS = {
    "a1": [
        "Tenant A keeps the vault combination 4417 in the blue binder.",
        "Tenant A codename for the spring launch is HERONFALL.",
    ],
    "a2": ["Tenant A agent two tracks the overdue Globex invoice."],
}


@dataclass(frozen=True)
class World:
    tenant_a: str
    key_a: str
    key_a1_only: str
    key_a_admin: str
    tenant_b: str
    key_b: str
    ids: dict[str, list[str]]  # agent -> A's memory ids
    key_b_admin: str = ""
    export_id: str = ""  # an export of A's agent a1, made by A's admin
    webhook_secret: str = ""  # A's webhook's signing secret (its URL is `A_WEBHOOK`)

    @property
    def texts(self) -> list[str]:
        """Everything that would betray A: its contents, a distinctive word of each, its tenant id."""
        contents = [c for agent in A_SECRETS.values() for c in agent]
        return [
            *contents,
            "4417",
            "HERONFALL",
            "Globex",
            self.tenant_a,
            A_WEBHOOK,
            *([self.webhook_secret] * bool(self.webhook_secret)),
        ]

    def all_ids(self) -> list[str]:
        return [i for ids in self.ids.values() for i in ids]


@pytest.fixture(scope="module")
def world(runtime: LocalRuntime, api: Api) -> Iterator[World]:
    """Tenant A's stored memories and the keys of both tenants."""
    tenant_a, tenant_b = unique("tenant-a"), unique("tenant-b")
    _, key_a = runtime.keys.create(NewKey(tenant_a, "pro"))
    _, key_a1_only = runtime.keys.create(NewKey(tenant_a, "pro", agents=frozenset({"a1"})))
    _, key_a_admin = runtime.keys.create(NewKey(tenant_a, "pro", admin=True))
    _, key_b = runtime.keys.create(NewKey(tenant_b, "pro"))
    _, key_b_admin = runtime.keys.create(NewKey(tenant_b, "pro", admin=True))
    ids: dict[str, list[str]] = {}
    for agent, contents in A_SECRETS.items():
        status, body = api(
            "POST", f"/v1/agents/{agent}/memories", {"items": [{"content": c} for c in contents]}, key=key_a
        )
        assert status == 202, body
        ids[agent] = [a["id"] for a in body["accepted"]]
        assert settled_stats(api, key_a, agent)["records"]["working"] == len(contents)
    status, export = api("POST", "/v1/admin/exports", {"agent_id": "a1"}, key=key_a_admin)
    assert status == 202, export
    status, hook = api("PUT", "/v1/admin/webhooks", {"url": A_WEBHOOK}, key=key_a_admin)
    assert status == 200, hook
    yield World(
        tenant_a,
        key_a,
        key_a1_only,
        key_a_admin,
        tenant_b,
        key_b,
        ids,
        key_b_admin,
        export["id"],
        hook["secret"],
    )


def call(api: Api, route: str, agent: str, memory_id: str, **kwargs: Any) -> HttpResponse:
    """One request on ``route`` for ``agent`` (and ``memory_id`` where the route takes one)."""
    base = f"/v1/agents/{agent}"
    if route == "write":
        return api.request("POST", f"{base}/memories", {"items": [{"content": "B was here."}]}, **kwargs)
    if route == "search":
        return api.request("POST", f"{base}/memories/search", {"query": "vault combination launch"}, **kwargs)
    if route == "get":
        return api.request("GET", f"{base}/memories/{memory_id}", **kwargs)
    if route == "list":
        return api.request("GET", f"{base}/memories?limit=100", **kwargs)
    if route == "forget":
        return api.request("DELETE", f"{base}/memories/{memory_id}", **kwargs)
    if route == "stats":
        return api.request("GET", f"{base}/stats", **kwargs)
    raise AssertionError(route)


def assert_no_leak(response: HttpResponse, world: World, sent_id: str | None = None) -> None:
    """No content or tenant id of A, and no id of A's that the caller did not send itself."""
    text = response.data.decode("utf-8")
    for secret in world.texts:
        assert secret not in text, f"{secret!r} leaked in {text}"
    for memory_id in world.all_ids():
        if memory_id != sent_id:
            assert memory_id not in text, f"{memory_id} leaked in {text}"


def assert_a_untouched(api: Api, world: World) -> None:
    """A still has exactly its memories, each readable with its own content."""
    for agent, contents in A_SECRETS.items():
        stats = settled_stats(api, world.key_a, agent)
        assert stats["records"] == {**dict.fromkeys(GRAINS, 0), "working": len(contents)}
        for memory_id, content in zip(world.ids[agent], contents, strict=True):
            status, memory = api("GET", f"/v1/agents/{agent}/memories/{memory_id}", key=world.key_a)
            assert (status, memory["content"]) == (200, content)


# --- another tenant -----------------------------------------------------------------------------


def test_other_tenant_cannot_get_a_memory_and_the_404_says_nothing_more(api: Api, world: World) -> None:
    # GIVEN A's memory id, known to B
    target = world.ids["a1"][0]

    # WHEN B asks for it, and for an id that exists nowhere
    mine = call(api, "get", "a1", target, key=world.key_b)
    unknown_id = "mem_" + "q" * 26
    nowhere = call(api, "get", "a1", unknown_id, key=world.key_b)

    # THEN both are the same 404: nothing tells B that A's memory exists
    assert mine.status == nowhere.status == 404
    assert_error(mine.json(), "not_found")
    assert mine.data.decode().replace(target, "ID") == nowhere.data.decode().replace(unknown_id, "ID")
    assert_no_leak(mine, world, sent_id=target)


@pytest.mark.parametrize("grain", ["working", "all"])
@pytest.mark.parametrize("query", ["vault combination 4417", "HERONFALL launch codename", None])
def test_other_tenant_search_finds_nothing_of_a(
    api: Api, world: World, query: str | None, grain: str
) -> None:
    # GIVEN A's memories in the agent B names
    body = {"grain": grain, "max_days_ago": 36500} | ({"query": query} if query else {})

    # WHEN B searches it, by A's own words or for the newest records
    response = api.request("POST", "/v1/agents/a1/memories/search", body, key=world.key_b)

    # THEN nothing comes back, while A's identical search finds its memory
    assert response.status == 200, response.data
    assert response.json() == {"results": []}
    status, own = api("POST", "/v1/agents/a1/memories/search", body, key=world.key_a)
    assert status == 200 and own["results"]
    assert {r["id"] for r in own["results"]} <= set(world.ids["a1"])


def test_other_tenant_list_and_stats_are_empty(api: Api, world: World) -> None:
    # WHEN B lists and counts the agents A uses
    for agent in A_SECRETS:
        listed = call(api, "list", agent, "", key=world.key_b)
        stats = call(api, "stats", agent, "", key=world.key_b)

        # THEN B sees an empty agent
        assert (listed.status, listed.json()) == (200, {"items": [], "next_cursor": None})
        assert stats.status == 200
        assert stats.json() == {
            "records": dict.fromkeys(GRAINS, 0), "pending_writes": 0, "oldest": None, "newest": None,
        }  # fmt: skip
        assert_no_leak(listed, world)
        assert_no_leak(stats, world)


def test_other_tenant_cannot_forget_a_memory(api: Api, world: World) -> None:
    # WHEN B tries to forget each of A's memories
    for agent, ids in world.ids.items():
        for memory_id in ids:
            response = call(api, "forget", agent, memory_id, key=world.key_b)

            # THEN it is a 404
            assert response.status == 404, response.data
            assert_error(response.json(), "not_found")
            assert_no_leak(response, world, sent_id=memory_id)

    # AND A still has and can read every memory
    assert_a_untouched(api, world)


def test_other_tenant_writes_stay_in_its_own_namespace(api: Api, world: World, new_key: Any) -> None:
    # GIVEN tenant C, writing to the same agent name A uses
    _, _, key_c = new_key()
    c_text = "Tenant C keeps the vault combination 9902 in a red binder."
    response = api.request("POST", "/v1/agents/a1/memories", {"items": [{"content": c_text}]}, key=key_c)
    assert response.status == 202, response.data
    assert_no_leak(response, world)
    [c_id] = [a["id"] for a in response.json()["accepted"]]
    assert settled_stats(api, key_c, "a1")["records"]["working"] == 1

    # WHEN / THEN it is not merged into A's similar memory, and neither tenant sees the other's
    status, c_memory = api("GET", f"/v1/agents/a1/memories/{c_id}", key=key_c)
    assert (status, c_memory["id"], c_memory["content"]) == (200, c_id, c_text)
    assert api("GET", f"/v1/agents/a1/memories/{c_id}", key=world.key_a)[0] == 404
    status, found = api(
        "POST", "/v1/agents/a1/memories/search", {"query": "vault combination"}, key=world.key_a
    )
    assert status == 200 and c_id not in {r["id"] for r in found["results"]}
    status, found = api("POST", "/v1/agents/a1/memories/search", {"query": "vault combination"}, key=key_c)
    assert status == 200 and [r["id"] for r in found["results"]] == [c_id]
    assert_a_untouched(api, world)


def test_cursor_of_one_tenant_is_refused_for_another(api: Api, world: World) -> None:
    # GIVEN a cursor from A's first page of a1
    status, page = api("GET", "/v1/agents/a1/memories?limit=1", key=world.key_a)
    assert status == 200 and page["next_cursor"]
    cursor = page["next_cursor"]

    # WHEN B presents it for the same agent
    response = api.request("GET", f"/v1/agents/a1/memories?limit=1&cursor={cursor}", key=world.key_b)

    # THEN it is a 400 that carries no data
    assert response.status == 400, response.data
    assert_error(response.json(), "validation_error")
    assert "items" not in response.json()
    assert_no_leak(response, world)
    # AND A's own cursor is not valid for another of A's agents either
    status, body = api("GET", f"/v1/agents/a2/memories?limit=1&cursor={cursor}", key=world.key_a)
    assert status == 400
    assert_error(body, "validation_error")


# --- keys limited to agents, to scopes, revoked, or missing -------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_agent_restricted_key_is_refused_on_other_agents(api: Api, world: World, route: str) -> None:
    # GIVEN a key of tenant A limited to agent a1
    # WHEN it is used on a2 (with a real a2 memory id)
    response = call(api, route, "a2", world.ids["a2"][0], key=world.key_a1_only)

    # THEN it is a 403, and a2 is exactly as it was
    assert response.status == 403, response.data
    assert_error(response.json(), "forbidden")
    assert_no_leak(response, world, sent_id=world.ids["a2"][0])
    assert_a_untouched(api, world)


@pytest.mark.parametrize("route", ["search", "get", "list", "stats"])
def test_agent_restricted_key_works_on_its_agent(api: Api, world: World, route: str) -> None:
    # WHEN
    response = call(api, route, "a1", world.ids["a1"][0], key=world.key_a1_only)
    # THEN
    assert response.status == 200, response.data


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/admin/summarize"),
        ("POST", "/v1/admin/retention"),
        ("GET", "/v1/admin/anything"),
        ("DELETE", "/v1/admin/tenants/x"),
    ],
)
def test_admin_routes_need_the_admin_scope(api: Api, world: World, method: str, path: str) -> None:
    body = {"grain": "daily", "period": "2026-11-21"} if method == "POST" else None
    kwargs: dict[str, Any] = {"body": body} if body else {}

    # WHEN a key without the admin scope calls an admin route, THEN 403
    response = api.request(method, path, key=world.key_a, **kwargs)
    assert response.status == 403, response.data
    assert_error(response.json(), "forbidden")

    # AND an admin key of the same tenant gets past the scope check
    response = api.request(method, path, key=world.key_a_admin, **kwargs)
    assert response.status not in {401, 403}, response.data


@pytest.mark.parametrize("route", ROUTES)
def test_revoked_key_is_refused_on_every_route(
    runtime: LocalRuntime, api: Api, world: World, route: str
) -> None:
    # GIVEN a key of tenant A that worked
    key_id, key = runtime.keys.create(NewKey(world.tenant_a, "pro"))
    assert call(api, "stats", "a1", "", key=key).status == 200

    # WHEN it is revoked, THEN every route answers 401 at once, and nothing changes
    assert runtime.keys.revoke(key_id)
    response = call(api, route, "a1", world.ids["a1"][0], key=key)
    assert response.status == 401, response.data
    assert_error(response.json(), "unauthorized")
    assert_no_leak(response, world, sent_id=world.ids["a1"][0])
    assert_a_untouched(api, world)


GARBLED = {
    "missing": None,
    "empty": "",
    "scheme only": "Bearer",
    "scheme and blank": "Bearer    ",
    "other scheme": "Basic dXNlcjpwYXNz",
    "no scheme": "KEY",
    "unknown key": "Bearer amk_" + "x" * 43,
    "key with junk": "Bearer KEY trailing",
    "key glued to scheme": "BearerKEY",
}


@pytest.mark.parametrize("variant", list(GARBLED))
@pytest.mark.parametrize("route", ROUTES)
def test_missing_or_garbled_authorization_is_401(api: Api, world: World, route: str, variant: str) -> None:
    # GIVEN an Authorization header that is absent or does not carry a valid key
    header = GARBLED[variant]
    kwargs: dict[str, Any] = {} if header is None else {"authorization": header.replace("KEY", world.key_a)}

    # WHEN any route is called with it
    response = call(api, route, "a1", world.ids["a1"][0], **kwargs)

    # THEN 401 with the documented body and a Bearer challenge; nothing leaks, nothing changes
    assert response.status == 401, response.data
    assert_error(response.json(), "unauthorized")
    assert response.headers.get("WWW-Authenticate") == "Bearer"
    assert_no_leak(response, world, sent_id=world.ids["a1"][0])
    if route in {"write", "forget"}:
        assert_a_untouched(api, world)


def test_bearer_scheme_is_case_insensitive(api: Api, world: World) -> None:
    # WHEN
    response = call(api, "stats", "a1", "", authorization=f"bearer {world.key_a}")
    # THEN
    assert response.status == 200, response.data
    assert response.json()["records"]["working"] == len(A_SECRETS["a1"])


# --- the matrix: every route of the API, derived from its OpenAPI document -----------------------
#
# The routes come from the document the resolver generates, so a route added later is attacked
# here without anyone listing it. Each is called by callers who must get nothing of tenant A:
# tenant B (with A's real ids and A's cursors), a key of A's bound to agent a1 (on a2), a key
# without the admin scope (on admin routes), and no key at all.

DOCUMENT = json.loads(openapi_json())
OPERATIONS = [
    (method.upper(), path, operation)
    for path, operations in DOCUMENT["paths"].items()
    for method, operation in operations.items()
]
SCHEMAS = DOCUMENT["components"]["schemas"]
#: Values a request needs to get past validation, by field or parameter name.
SAMPLES: dict[str, Any] = {
    "content": "B was here.",
    "query": "vault combination launch",
    "grain": "daily",
    "period": "2026-11-21",
    "time_key": "2026-11-21",
    "user_id": "u-7",
    "role": "user",
}
#: Bodies whose rules span fields (JSON Schema cannot say "items or messages"), by schema name.
BODIES: dict[str, Any] = {"WriteRequest": {"items": [{"content": "B was here."}]}}


def _instance(schema: dict[str, Any], name: str = "") -> Any:
    """A small instance of ``schema`` that validates: required fields only, names sampled."""
    if "$ref" in schema:
        model = schema["$ref"].rsplit("/", 1)[1]
        return BODIES[model] if model in BODIES else _instance(SCHEMAS[model], name)
    if name in SAMPLES:
        return SAMPLES[name]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return _instance(options[0], name)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: _instance(props[k], k) for k in schema.get("required", [])}
    if kind == "array":
        return [_instance(schema.get("items", {}), name) for _ in range(schema.get("minItems", 0))]
    if kind in {"integer", "number"}:
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "x1"


def _request(
    world: World, method: str, path: str, operation: dict[str, Any], agent: str, cursor: str | None = None
) -> tuple[str, str, Any]:
    """(method, url, body) of one call of ``operation`` aimed at A's ``agent`` and its data."""
    target_id = world.ids[agent][0]
    values = {
        "agent_id": agent,
        "memory_id": target_id,
        "record_id": target_id,
        "cursor": cursor,
        "export_id": world.export_id,
    }
    url = path
    query = {}
    for param in operation.get("parameters", []):
        name = param["name"]
        value = values.get(name) or SAMPLES.get(name) or _instance(param["schema"], name)
        if param["in"] == "path":
            url = url.replace("{" + name + "}", quote(str(value), safe=""))
        elif param["in"] == "query" and (param.get("required") or values.get(name)):
            query[name] = value
    if query:
        url += "?" + urlencode(query)
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    return method, url, (_instance(body) if body is not None else None)


def _send(api: Api, method: str, url: str, body: Any, **kwargs: Any) -> HttpResponse:
    return (
        api.request(method, url, body, **kwargs) if body is not None else api.request(method, url, **kwargs)
    )


def _names(operations: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    return [f"{m} {p}" for m, p, _ in operations]


AGENT_ROUTES = [o for o in OPERATIONS if "{agent_id}" in o[1]]
ADMIN_ROUTES = [o for o in OPERATIONS if o[1].startswith("/v1/admin/")]


def test_the_matrix_covers_every_route_the_api_serves() -> None:
    # WHEN
    served = {
        (r.method, re.sub(r"<(\w+)>", r"{\1}", r.path)) for r in app._static_routes + app._dynamic_routes
    }
    # THEN
    assert {(m, p) for m, p, _ in OPERATIONS} == served
    assert AGENT_ROUTES and ADMIN_ROUTES


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=_names(OPERATIONS))
def test_another_tenant_with_a_s_ids_and_cursors_gets_nothing_of_a(
    api: Api, world: World, method: str, path: str, operation: dict[str, Any]
) -> None:
    # GIVEN tenant B, holding A's real memory ids and one of A's list cursors
    status, page = api("GET", "/v1/agents/a1/memories?limit=1", key=world.key_a)
    assert status == 200 and page["next_cursor"]
    for agent in ("a1", "a2"):
        # WHEN B calls the route on the agent names A uses, with A's ids and A's cursor
        response = _send(
            api, *_request(world, method, path, operation, agent, page["next_cursor"]), key=world.key_b
        )

        # THEN it is refused, or answered from B's own (empty) namespace: nothing of A leaks
        assert response.status < 500, response.data[:300]
        assert_no_leak(response, world, sent_id=world.ids[agent][0])
        if "{agent_id}" not in path and response.status < 300:
            text = response.data.decode()
            assert '"a1"' not in text and '"a2"' not in text, text[:300]  # A's agent names
        if "{memory_id}" in path and response.status == 403:
            # a route of the admin scope (restoring a version): B's admin key finds nothing either
            request = _request(world, method, path, operation, agent, page["next_cursor"])
            response = _send(api, *request, key=world.key_b_admin)
            assert_no_leak(response, world, sent_id=world.ids[agent][0])
        if "{memory_id}" in path:
            assert response.status == 404, response.data[:300]
        if path.startswith("/v1/admin/exports"):
            # B's admin, naming A's export: a 404 as for an id that exists nowhere, and A's export
            # is in no list or export of B's
            request = _request(world, method, path, operation, agent, page["next_cursor"])
            response = _send(api, *request, key=world.key_b_admin)
            assert response.status < 500 and world.export_id not in response.data.decode()
            assert_no_leak(response, world)
            if "{export_id}" in path:
                assert response.status == 404, response.data[:300]
        if path == "/v1/admin/webhooks":
            # B's admin on "the" webhook: B's own (none, or a body B may set), never A's
            response = _send(
                api,
                method,
                path,
                {"url": "http://127.0.0.1:9/b"} if method == "PUT" else None,
                key=world.key_b_admin,
            )
            assert response.status in {200, 404}, response.data[:300]
            assert_no_leak(response, world)
        if response.status >= 400:
            assert_error(response.json())
    assert_a_untouched(api, world)
    status, hook = api("GET", "/v1/admin/webhooks", key=world.key_a_admin)
    assert (status, hook["url"], hook["secret_last4"]) == (200, A_WEBHOOK, world.webhook_secret[-4:])


@pytest.mark.parametrize(("method", "path", "operation"), AGENT_ROUTES, ids=_names(AGENT_ROUTES))
def test_a_key_bound_to_one_agent_is_refused_on_every_route_of_another(
    api: Api, world: World, method: str, path: str, operation: dict[str, Any]
) -> None:
    # WHEN A's key bound to a1 calls any agent route on a2, with a2's real ids
    response = _send(api, *_request(world, method, path, operation, "a2"), key=world.key_a1_only)

    # THEN 403, before anything is read or changed
    assert response.status == 403, response.data[:300]
    assert_error(response.json(), "forbidden")
    assert_no_leak(response, world, sent_id=world.ids["a2"][0])
    assert_a_untouched(api, world)


@pytest.mark.parametrize(("method", "path", "operation"), ADMIN_ROUTES, ids=_names(ADMIN_ROUTES))
def test_admin_routes_refuse_every_key_without_the_admin_scope(
    api: Api, world: World, method: str, path: str, operation: dict[str, Any]
) -> None:
    # WHEN / THEN
    for key in (world.key_a, world.key_a1_only, world.key_b):
        response = _send(api, *_request(world, method, path, operation, "a1"), key=key)
        assert response.status == 403, response.data[:300]
        assert_error(response.json(), "forbidden")
        assert_no_leak(response, world)


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=_names(OPERATIONS))
def test_every_route_refuses_a_request_without_a_key(
    api: Api, world: World, method: str, path: str, operation: dict[str, Any]
) -> None:
    # GIVEN
    response = _send(api, *_request(world, method, path, operation, "a1"))
    # WHEN / THEN
    assert response.status == 401, response.data[:300]
    assert_error(response.json(), "unauthorized")
    assert_no_leak(response, world, sent_id=world.ids["a1"][0])


def test_a_cursor_forged_for_another_tenant_walks_only_the_forgers_own_records(
    api: Api, world: World
) -> None:
    # GIVEN A's cursor, decoded and re-signed by B as if it were B's (cursors are opaque, not secret)
    status, page = api("GET", "/v1/agents/a1/memories?limit=1", key=world.key_a)
    assert status == 200 and page["next_cursor"]
    raw = page["next_cursor"]
    payload = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    forged_payload = {k: (world.tenant_b if v == world.tenant_a else v) for k, v in payload.items()}
    forged = base64.urlsafe_b64encode(json.dumps(forged_payload).encode()).decode().rstrip("=")

    # WHEN B lists with it, THEN B gets its own empty page or a 400, never A's records
    for cursor in (raw, forged):
        response = api.request("GET", f"/v1/agents/a1/memories?limit=100&cursor={cursor}", key=world.key_b)
        assert response.status in {200, 400}, response.data[:300]
        assert_no_leak(response, world)
        if response.status == 200:
            assert response.json()["items"] == []
