"""Every route of the OpenAPI document, fed generated natural-language text with numbers and time
phrases (huge and tiny numbers included) and date-times at the edges of the calendar: the answer
is a 2xx or a documented 4xx with the error body, never a 5xx."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.e2e.conftest import Api, assert_error

from agent_memory.adapters import outbound_http
from agent_memory.handlers.routes import ROUTES
from agent_memory.tenancy.rules.keys import NewKey

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
AGENT = "hostile-routes"
BASE = f"/v1/agents/{AGENT}"

UNITS = ["day", "days", "week", "weeks", "month", "months", "year", "years"]
NUMBERS = st.one_of(
    st.integers(0, 10**40),
    st.sampled_from([0, 1, 7, 2500, 5000, 10**6, 30000, 99999999, 10**18]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300).map(
        lambda f: f"{f:g}"
    ),
)
RELATIVE = [
    "yesterday", "last week", "this week", "past week", "last weekend", "last month", "this month",
    "last year", "this year", "past year", "in june", "in December", "on March 3", "31 December",
    "summer 2023", "in 1999", "2023-06-01", "the day before",
]  # fmt: skip
PHRASES = st.one_of(
    st.builds(lambda n, u: f"what happened {n} {u} ago", NUMBERS, st.sampled_from(UNITS)),
    st.sampled_from(RELATIVE).map(lambda p: f"what did we decide {p}?"),
    st.builds(lambda a, b: f"{a} and then {b}", st.sampled_from(RELATIVE), st.sampled_from(RELATIVE)),
    st.text(min_size=1, max_size=40),
)
OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
EDGE_INSTANTS = st.one_of(
    st.builds(
        lambda d, tz: d.replace(tzinfo=tz).isoformat(),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(1, 1, 9)),
        OFFSETS,
    ),
    st.builds(
        lambda d, tz: d.replace(tzinfo=tz).isoformat(),
        st.datetimes(min_value=datetime(9999, 12, 23), max_value=datetime(9999, 12, 31, 23, 59, 59)),
        OFFSETS,
    ),
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
)
EDGE_DAYS = st.one_of(
    st.dates(min_value=date(1, 1, 1), max_value=date(1, 3, 1)),
    st.dates(min_value=date(9999, 10, 1), max_value=date(9999, 12, 31)),
    st.dates(),
).map(date.isoformat)
DAYS_AGO = st.one_of(st.floats(0, 36500), st.sampled_from([0, 36500, 36500.5, -1, 1e308]))
TIME_KEYS = st.one_of(
    EDGE_DAYS,
    st.sampled_from(
        ["0001-W01", "9999-W52", "9999-W53", "0001-Q1", "9999-Q4", "0001", "9999", "10000", "0000"]
    ),
    st.text(max_size=12),
)

GRAINS = st.sampled_from(["all", "working", "daily", "weekly", "yearly", "decade"])
Request = tuple[str, str, Any]


def _q(**params: Any) -> str:
    return "?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


def _write(draw: st.DrawFn) -> Request:
    item = {"content": draw(PHRASES), "occurred_at": draw(EDGE_INSTANTS)}
    if draw(st.booleans()):  # an experience, with hostile run ids and confidences
        item |= {
            "kind": draw(st.sampled_from(["success", "failure", "insight", "pattern", "note", "summary"])),
            "run_id": draw(PHRASES),
            "confidence": draw(st.one_of(st.floats(allow_nan=True), st.sampled_from([0, 1, -0.0, 1.5]))),
            "outcome": draw(PHRASES),
        }
    return "POST", f"{BASE}/memories", {"items": [item]}


def _document(draw: st.DrawFn) -> Request:
    body = {
        "version": draw(st.one_of(st.just("v1"), PHRASES)),
        "title": draw(PHRASES),
        "text": "# " + draw(PHRASES) + "\n\n" + draw(PHRASES),
        "valid_from": draw(EDGE_DAYS),
        "valid_until": draw(EDGE_DAYS),
    }
    return "PUT", f"/v1/knowledge/documents/{quote(draw(PHRASES), safe='') or 'x'}", body


DOC = "/v1/knowledge/documents"
READERS = "/v1/admin/agents/{agent_id}/readers"


def _settings(draw: st.DrawFn) -> Request:
    """A settings change with hostile values in every field a tenant types."""
    settings: dict[str, Any] = {}
    if draw(st.booleans()):
        settings["embedding"] = {
            "provider": draw(st.sampled_from(["bedrock", "openai", "local", "x"])),
            "model": draw(PHRASES),
            **({"endpoint": draw(PHRASES)} if draw(st.booleans()) else {}),
            **({"dimension": draw(st.integers(-5, 100_000))} if draw(st.booleans()) else {}),
        }
    if draw(st.booleans()):
        settings["retention_hours"] = {draw(PHRASES): draw(st.one_of(st.none(), st.integers(-10, 10**9)))}
    if draw(st.booleans()):
        settings["ttl_days"] = {draw(st.sampled_from(["fact", "note", "nope"])): draw(st.integers(-1, 10**6))}
    if draw(st.booleans()):
        settings["ranking"] = {"lexical_weight": draw(st.floats(allow_nan=True, allow_infinity=True))}
    body: dict[str, Any] = {"version": draw(st.integers(-1, 3)), "settings": settings}
    if draw(st.booleans()):
        body["provider_key"] = draw(PHRASES)
    return "PUT", "/v1/admin/settings", body


EXPORTS = "/v1/admin/exports"
#: Export ids: well-formed ones that exist nowhere, and hostile text.
EXPORT_IDS = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=26, max_size=26).map(lambda s: "exp_" + s),
    PHRASES.map(lambda p: quote(p, safe="") or "x"),
)


def _export(draw: st.DrawFn) -> Request:
    """An export with hostile subjects and windows at the edges of the calendar."""
    body: dict[str, Any] = {}
    for name in draw(st.sampled_from([["user_id"], ["agent_id"], ["user_id", "agent_id"], []])):
        body[name] = draw(st.one_of(PHRASES, st.just("u-7")))
    if draw(st.booleans()):
        body["since"] = draw(EDGE_INSTANTS)
    if draw(st.booleans()):
        body["until"] = draw(st.one_of(EDGE_INSTANTS, PHRASES))
    return "POST", EXPORTS, body


WEBHOOKS = "/v1/admin/webhooks"


def _webhook(draw: st.DrawFn) -> Request:
    """A webhook with hostile URLs (private and loopback hosts, credentials, text), types and
    secrets. The one URL that is valid here is a closed port on loopback."""
    url = draw(
        st.one_of(
            PHRASES,
            PHRASES.map(lambda p: "https://" + p),
            st.sampled_from(
                [
                    "http://127.0.0.1:9/in",
                    "https://10.0.0.1/in",
                    "https://169.254.169.254/latest",
                    "https://user:pw@[::1]/in",
                    "http://example.com/in",
                    "javascript:alert(1)",
                    "https://" + "x" * 3000,
                ]
            ),
        )
    )
    body: dict[str, Any] = {"url": url}
    if draw(st.booleans()):
        body["event_types"] = draw(st.lists(st.sampled_from(["memory.created", "user.erased", "nope", ""])))
    if draw(st.booleans()):
        body["include_content"] = draw(st.one_of(st.booleans(), st.just("true"), st.just(1)))
    if draw(st.booleans()):
        body["secret"] = draw(st.one_of(PHRASES, st.text(min_size=24, max_size=300)))
    if draw(st.booleans()):
        body["new_secret"] = draw(st.booleans())
    return "PUT", WEBHOOKS, body


def _search(route: str) -> Callable[[st.DrawFn], Request]:
    def make(draw: st.DrawFn) -> Request:
        body: dict[str, Any] = {"query": draw(PHRASES), "as_of": draw(EDGE_INSTANTS)}
        if draw(st.booleans()):
            body["max_days_ago"] = draw(DAYS_AGO)
        if draw(st.booleans()):
            body["min_days_ago"] = draw(DAYS_AGO)
        if draw(st.booleans()):
            body["sources"] = draw(st.sampled_from([["private", "shared"], ["shared"], ["private"]]))
        if draw(st.booleans()):
            body["min_confidence"] = draw(st.one_of(st.floats(allow_nan=True), st.sampled_from([0, 1, 2])))
            body["patterns_first"] = draw(st.sampled_from([True, False, "yes", None]))
        return "POST", f"{BASE}/{route}", body

    return make


CASES: dict[tuple[str, str], Callable[[st.DrawFn], Request]] = {
    ("POST", "/v1/agents/{agent_id}/memories"): _write,
    ("POST", "/v1/agents/{agent_id}/memories/search"): _search("memories/search"),
    ("POST", "/v1/agents/{agent_id}/context"): _search("context"),
    ("GET", "/v1/agents/{agent_id}/memories"): lambda d: (
        "GET", f"{BASE}/memories" + _q(limit=d(st.integers(-5, 10**6)), grain=d(GRAINS)), None
    ),
    ("DELETE", "/v1/agents/{agent_id}/memories"): lambda d: (
        "DELETE", f"{BASE}/memories" + _q(user_id=d(PHRASES)), None
    ),
    ("GET", "/v1/agents/{agent_id}/memories/{memory_id}"): lambda d: (
        "GET", f"{BASE}/memories/{quote(d(PHRASES), safe='')}", None
    ),
    ("DELETE", "/v1/agents/{agent_id}/memories/{memory_id}"): lambda d: (
        "DELETE", f"{BASE}/memories/{quote(d(PHRASES), safe='')}", None
    ),
    ("GET", "/v1/agents/{agent_id}/audit"): lambda d: ("GET", f"{BASE}/audit" + _q(cursor=d(PHRASES)), None),
    ("GET", "/v1/agents/{agent_id}/stats"): lambda d: ("GET", f"{BASE}/stats", None),
    ("GET", "/v1/agents/{agent_id}/timeline"): lambda d: (
        "GET", f"{BASE}/timeline" + _q(since=d(EDGE_DAYS), until=d(EDGE_DAYS)), None
    ),
    ("GET", "/v1/agents/{agent_id}/periods/{grain}/{time_key}"): lambda d: (
        "GET",
        f"{BASE}/periods/{d(st.sampled_from(['daily', 'weekly', 'monthly', 'quarterly', 'yearly']))}/"
        f"{quote(d(TIME_KEYS), safe='') or 'x'}",
        None,
    ),
    ("GET", "/v1/agents/{agent_id}/stats/searches"): lambda d: (
        "GET", f"{BASE}/stats/searches" + _q(days=d(NUMBERS)), None
    ),
    ("GET", "/v1/agents"): lambda d: ("GET", "/v1/agents" + _q(limit=d(NUMBERS)), None),
    ("GET", "/v1/topics"): lambda d: ("GET", "/v1/topics", None),
    ("GET", "/v1/topics/proposals"): lambda d: ("GET", "/v1/topics/proposals" + _q(limit=d(NUMBERS)), None),
    ("PUT", "/v1/admin/topics"): lambda d: ("PUT", "/v1/admin/topics", {"terms": {d(PHRASES): [d(PHRASES)]}}),
    ("POST", "/v1/admin/summarize"): lambda d: (
        "POST",
        "/v1/admin/summarize",
        d(
            st.one_of(
                st.builds(lambda g, k: {"grain": g, "period": k}, GRAINS, TIME_KEYS),
                st.builds(lambda a, b: {"grain": "daily", "from": a, "to": b}, EDGE_DAYS, EDGE_DAYS),
            )
        ),
    ),
    ("POST", "/v1/admin/retention"): lambda d: ("POST", "/v1/admin/retention", None),
    ("GET", "/v1/openapi.json"): lambda d: ("GET", "/v1/openapi.json", None),
    ("PUT", DOC + "/{doc_id}"): _document,
    ("GET", DOC): lambda d: ("GET", DOC + _q(cursor=d(PHRASES), limit=d(NUMBERS)), None),
    ("GET", DOC + "/{doc_id}"): lambda d: ("GET", f"{DOC}/{quote(d(PHRASES), safe='') or 'x'}", None),
    ("GET", DOC + "/{doc_id}/passages"): lambda d: (
        "GET", f"{DOC}/{quote(d(PHRASES), safe='') or 'x'}/passages", None
    ),
    ("DELETE", DOC + "/{doc_id}"): lambda d: ("DELETE", f"{DOC}/{quote(d(PHRASES), safe='') or 'x'}", None),
    ("PUT", READERS + "/{reader_id}"): lambda d: (
        "PUT", f"/v1/admin/agents/{AGENT}/readers/{quote(d(PHRASES), safe='') or 'x'}", None
    ),
    ("DELETE", READERS + "/{reader_id}"): lambda d: (
        "DELETE", f"/v1/admin/agents/{AGENT}/readers/{quote(d(PHRASES), safe='') or 'x'}", None
    ),
    ("GET", READERS): lambda d: ("GET", f"/v1/admin/agents/{AGENT}/readers", None),
    ("POST", "/v1/agents/{agent_id}/memories/{memory_id}/feedback"): lambda d: (
        "POST",
        f"{BASE}/memories/{quote(d(PHRASES), safe='') or 'x'}/feedback",
        {"outcome": d(st.sampled_from(["applied", "confirmed", "refuted", "maybe", ""])), "note": d(PHRASES)},
    ),
    ("GET", "/v1/agents/{agent_id}/memories/{memory_id}/history"): lambda d: (
        "GET", f"{BASE}/memories/{quote(d(PHRASES), safe='') or 'x'}/history", None
    ),
    ("POST", "/v1/agents/{agent_id}/memories/{memory_id}/history/{version}/restore"): lambda d: (
        "POST",
        f"{BASE}/memories/{quote(d(PHRASES), safe='') or 'x'}/history/"
        f"{quote(str(d(NUMBERS)), safe='')}/restore",
        None,
    ),
    ("POST", "/v1/admin/patterns"): lambda d: (
        "POST", "/v1/admin/patterns", d(st.one_of(st.just({}), st.builds(lambda a: {"agent_id": a}, PHRASES)))
    ),
    ("GET", "/v1/admin/settings"): lambda d: ("GET", "/v1/admin/settings", None),
    ("GET", "/v1/admin/settings/history"): lambda d: (
        "GET", "/v1/admin/settings/history?" + _q(cursor=d(PHRASES), limit=d(st.integers(-5, 500))), None
    ),
    ("PUT", "/v1/admin/settings"): _settings,
    ("GET", WEBHOOKS): lambda d: ("GET", WEBHOOKS, None),
    ("PUT", WEBHOOKS): _webhook,
    ("DELETE", WEBHOOKS): lambda d: ("DELETE", WEBHOOKS, None),
    ("POST", "/v1/admin/exports"): _export,
    ("GET", "/v1/admin/exports"): lambda d: ("GET", "/v1/admin/exports" + _q(limit=d(NUMBERS)), None),
    ("GET", EXPORTS + "/{export_id}"): lambda d: ("GET", f"{EXPORTS}/{d(EXPORT_IDS)}", None),
    ("GET", EXPORTS + "/{export_id}/download"): lambda d: (
        "GET", f"{EXPORTS}/{d(EXPORT_IDS)}/download", None
    ),
}  # fmt: skip


def _operations() -> list[tuple[str, str]]:
    document = json.loads(DOCUMENT.read_text())
    return [(method.upper(), path) for path, ops in document["paths"].items() for method in ops]


def test_every_operation_of_the_document_is_fed_hostile_input() -> None:
    # WHEN / THEN
    assert sorted(_operations()) == sorted(CASES)


@pytest.fixture(scope="module", autouse=True)
def no_dns() -> Iterator[None]:
    """Generated webhook URLs and model endpoints name hosts: none is looked up (no packet leaves
    the machine); every name fails to resolve, so the policy refuses it."""

    def unresolvable(host: str, port: int) -> Sequence[str]:
        raise OSError(f"{host}: no DNS in tests")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(outbound_http, "system_resolver", unresolvable)
        yield


@pytest.fixture(scope="module")
def admin_key(runtime: Any) -> str:
    return str(runtime.keys.create(NewKey("t-hostile-routes", "pro", admin=True))[1])


@pytest.mark.parametrize("operation", sorted(CASES), ids=lambda op: f"{op[0]} {op[1]}")
def test_no_generated_request_gets_a_5xx(api: Api, admin_key: str, operation: tuple[str, str]) -> None:
    # GIVEN
    examples = 3 if operation == ("POST", "/v1/admin/retention") else 25

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        method, path, body = data.draw(st.composite(CASES[operation])())
        status, answer = (
            api(method, path, body, key=admin_key) if body is not None else api(method, path, key=admin_key)
        )
        assert status < 500, (method, path, body, answer)
        if status >= 400:
            assert_error(answer)

    # WHEN / THEN
    check()


#: An integer past Python's limit on converting digits (4,300), and one past what any store holds.
HUGE_INTEGERS = ["9" * 4301, str(2**63)]
BODY_ROUTES = [r for r in ROUTES if r.body]
VALUES = {"agent_id": AGENT, "memory_id": "mem_x", "doc_id": "adr-1"}


@pytest.mark.parametrize("number", HUGE_INTEGERS, ids=["4301-digits", "2^63"])
@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_an_integer_too_long_or_too_large_is_a_400_on_every_body_route(
    api: Api, admin_key: str, route: Any, number: str
) -> None:
    # GIVEN a body with that integer where the route reads a number (and where it does not)
    path = re.sub(r"\{(\w+)\}", lambda m: VALUES[m.group(1)], route.path)
    raw = f'{{"version": {number}, "items": [{{"content": "x", "importance": {number}}}], "n": {number}}}'
    # WHEN
    status, answer = api(
        route.method, path, raw=raw, key=admin_key, headers={"Content-Type": "application/json"}
    )
    # THEN
    assert status == 400, answer
    assert_error(answer, "invalid_json")


def test_a_settings_version_past_the_stores_integers_is_a_400(api: Api, admin_key: str) -> None:
    # WHEN
    status, answer = api("PUT", "/v1/admin/settings", {"version": 2**63, "settings": {}}, key=admin_key)
    # THEN
    assert status == 400, answer
    assert_error(answer, "invalid_json")
