"""The operator console in a real browser (headless Chromium) against the local runtime.

Data is seeded through the public API only: memories written with ``POST .../memories``, the
days and the week summarized with ``POST /v1/admin/summarize``. The browser then does what an
operator does: connect with a key, pick the agent, open the week, follow it to a day and the day
to its memories, search and read the scores, forget a memory and see it gone (and in the audit
trail). Screenshots go to ``tests/artifacts/`` (git-ignored; CI keeps them as artifacts).

The browser is Debian's ``chromium`` (``.ci/run`` installs it), driven by Playwright for Python
without Playwright's own browser downloads. In CI a missing browser fails the run; elsewhere the
module is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats, unique, wait_until

from agent_memory.local.server import LocalRuntime
from agent_memory.model.grains import Grain, time_key_for
from agent_memory.tenancy.rules.keys import NewKey

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000

LAUNCH = "Alice moved the launch to March 3 because the venue fell through."
PRESS = "Bob owns the press release for the launch; draft due on Friday."
BUDGET = "The catering budget is 4,000 euros, approved by Carol."
VENUE = "The new venue in Lisbon holds 300 people."


def _chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def _unavailable(reason: str) -> None:
    """Fail loudly in CI (the browser tests are how the console is judged); skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the browser tests: see .ci/run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        _unavailable("Chromium is not installed: `apt-get install chromium` (.ci/run does it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed: `pip install -e '.[dev]'`")
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert errors == [], f"the console raised in the browser: {errors}"


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# --- seeding through the API ---------------------------------------------------------------------


class Seeded:
    def __init__(self, tenant: str, key: str, agent: str, days: list[date], ids: dict[str, str]) -> None:
        self.tenant, self.key, self.agent, self.days, self.ids = tenant, key, agent, days, ids

    @property
    def week(self) -> str:
        return time_key_for(Grain.WEEKLY, self.days[0])


def _summarized(api: Api, key: str, agent: str, grain: str, period: str) -> Any:
    status, body = api("GET", f"/v1/agents/{agent}/periods/{grain}/{period}", key=key)
    assert status == 200, body
    return body["summary"]


@pytest.fixture(scope="module")
def seeded(api: Api, runtime: LocalRuntime) -> Seeded:
    """Two days of an agent's memory, both days and their week summarized; a second agent."""
    tenant = unique("ops")
    _, key = runtime.keys.create(NewKey(tenant, "pro", admin=True))
    agent = "support-bot"
    # Monday and Tuesday of last week: both days and their week are closed, and in the
    # console's default four weeks.
    today = datetime.now(UTC).date()
    monday = today - timedelta(days=today.weekday() + 7)
    days = [monday, monday + timedelta(days=1)]

    def at(day: date, hour: int) -> str:
        return datetime(day.year, day.month, day.day, hour, tzinfo=UTC).isoformat()

    items = [
        {"content": LAUNCH, "occurred_at": at(days[0], 9), "importance": 0.9, "kind": "decision"},
        {"content": PRESS, "occurred_at": at(days[0], 14), "importance": 0.6, "tags": ["launch"]},
        {"content": BUDGET, "occurred_at": at(days[1], 10), "importance": 0.7},
        {"content": VENUE, "occurred_at": at(days[1], 16), "importance": 0.5},
    ]
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": items}, key=key)
    assert status == 202, body
    ids = {item["content"]: accepted["id"] for item, accepted in zip(items, body["accepted"], strict=True)}
    status, _ = api(
        "POST", "/v1/agents/billing-bot/memories", {"items": [{"content": "Invoice 7 paid."}]}, key=key
    )
    assert status == 202
    settled_stats(api, key, agent)
    settled_stats(api, key, "billing-bot")

    for day in days:
        status, body = api(
            "POST", "/v1/admin/summarize", {"grain": "daily", "period": day.isoformat()}, key=key
        )
        assert status == 202, body
    for day in days:
        wait_until(lambda d=day: _summarized(api, key, agent, "daily", d.isoformat()), timeout_s=20)
    week = time_key_for(Grain.WEEKLY, days[0])
    status, body = api("POST", "/v1/admin/summarize", {"grain": "weekly", "period": week}, key=key)
    assert status == 202, body
    wait_until(lambda: _summarized(api, key, agent, "weekly", week), timeout_s=20)
    return Seeded(tenant, key, agent, days, ids)


def connect(page: Any, runtime: LocalRuntime, key: str) -> None:
    page.goto(f"{runtime.url}/console/")
    page.wait_for_selector("body[data-ready='true']")
    page.fill("#api-key", key)
    page.click("#connect-button")


def pick(page: Any, agent: str) -> None:
    page.click(f"#agent-list button[data-agent='{agent}']")
    page.wait_for_selector(".tl-grid")


# --- the tests -------------------------------------------------------------------------------------


def test_the_console_is_served_by_the_runtime_with_a_strict_policy(api: Api) -> None:
    # GIVEN
    response = api.request("GET", "/console/")
    # WHEN / THEN
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/html")
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    script = api.request("GET", "/console/console.js")
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert b"https://" not in script.data and b"http://" not in script.data  # no CDN, nothing remote
    assert api.request("GET", "/console").status == 308
    assert api.request("GET", "/console/..%2Fsettings.py").status == 404
    assert api.request("GET", "/console/nope.js").status == 404


def test_an_operator_follows_a_week_to_a_day_to_its_memories(
    page: Any, runtime: LocalRuntime, seeded: Seeded
) -> None:
    # GIVEN the console, connected with the operator's key
    connect(page, runtime, seeded.key)

    # WHEN the operator picks the agent
    page.wait_for_selector("#agent-list button[data-agent='billing-bot']")
    pick(page, seeded.agent)

    # THEN the stats and the timeline show what it remembers: 4 working memories on 2 days,
    # two daily summaries and one weekly
    assert page.inner_text("[data-stat='working'] .value") == "4"
    assert page.inner_text("[data-stat='daily'] .value") == "2"
    assert page.inner_text("[data-stat='weekly'] .value") == "1"
    first, second = (d.isoformat() for d in seeded.days)
    assert page.inner_text(f".tl-cell[data-grain='working'][data-key='{first}']") == "2"
    assert page.inner_text(f".tl-cell[data-grain='working'][data-key='{second}']") == "2"
    assert page.locator(".tl-bar[data-grain='daily']").count() == 2
    assert page.locator(f".tl-bar[data-grain='weekly'][data-key='{seeded.week}']").count() == 1

    # WHEN they open the week: its summary and the two days it folds
    page.click(f".tl-bar[data-grain='weekly'][data-key='{seeded.week}']")
    page.wait_for_selector("#period [data-children='daily']")
    assert "made from 2 daily" in page.inner_text("#period").lower()
    assert "Lisbon" in page.inner_text("#period .summary-text") or "Alice" in page.inner_text(
        "#period .summary-text"
    )

    # ... and follow the week to its first day
    page.locator("#period [data-children='daily'] .record").first.get_by_role("button", name="Open").click()
    page.wait_for_selector("#period [data-children='working']")

    # THEN the day shows its summary, the working memories it was made from, and its parent
    period = page.inner_text("#period")
    assert first in period and "made from 2 working" in period.lower()
    rows = page.locator("#period [data-children='working'] .record")
    assert rows.count() == 2
    assert LAUNCH in rows.nth(0).inner_text() and PRESS in rows.nth(1).inner_text()
    summary = page.inner_text("#period .summary-text")
    assert "March 3" in summary
    assert page.locator(f"#period [data-parent='{seeded.week}']").count() == 1
    path = shot(page, "console-period")
    assert path.stat().st_size > 10_000


def test_search_shows_the_scores_that_ranked_each_memory(
    page: Any, runtime: LocalRuntime, seeded: Seeded
) -> None:
    # GIVEN
    connect(page, runtime, seeded.key)
    pick(page, seeded.agent)

    # WHEN
    page.click(".tabs [data-tab='search']")
    page.fill("#query", "Alice moved the launch")
    page.select_option("#search-grain", "working")
    page.click("#search button[type='submit']")
    page.wait_for_selector("table.results")

    # THEN
    rows = page.locator("table.results tbody tr")
    assert rows.count() >= 1
    top = rows.first
    assert top.get_attribute("data-id") == seeded.ids[LAUNCH]
    scores = {
        col: float(top.locator(f"[data-col='{col}']").inner_text())
        for col in ("similarity", "recency", "importance")
    }
    assert scores["importance"] == 0.9
    assert 0 < scores["recency"] <= 1 and 0 < scores["similarity"] <= 1
    headers = page.locator("table.results th").all_inner_texts()
    assert headers[:5] == ["#", "score", "similarity", "recency", "importance"]
    shot(page, "console-search")

    # across every grain, the decision takes one row, naming the day and week summaries that hold it
    page.select_option("#search-grain", "all")
    page.click("#search button[type='submit']")
    page.wait_for_selector(f"table.results tbody tr[data-id='{seeded.ids[LAUNCH]}'] [data-also-in='true']")
    launch_rows = page.locator("table.results tbody tr").filter(has_text=LAUNCH)
    assert launch_rows.count() == 1
    also = launch_rows.first.locator("[data-also-in='true']").inner_text()
    assert "daily" in also and f"weekly {seeded.week}" in also

    # a search that finds nothing is counted as such
    page.fill("#query", "quarterly tax filing in Norway")
    page.select_option("#search-grain", "yearly")
    page.click("#search button[type='submit']")
    page.wait_for_selector("[data-zero-hit='true']")
    wait_until(lambda: int(page.inner_text("[data-stat='found nothing'] .value")) >= 1)


def test_forget_is_confirmed_then_the_memory_is_gone_and_audited(
    page: Any, runtime: LocalRuntime, seeded: Seeded, api: Api
) -> None:
    target = seeded.ids[BUDGET]
    connect(page, runtime, seeded.key)
    pick(page, seeded.agent)

    # GIVEN the second day opened: the console is read-only until forgetting is allowed
    page.click(f".tl-bar[data-grain='daily'][data-key='{seeded.days[1].isoformat()}']")
    row = page.locator(f"#period .record[data-id='{target}']")
    row.wait_for()
    assert not row.locator("button.forget").is_visible()
    page.check("#allow-forget")
    assert page.inner_text("#mode-badge") == "forget enabled"

    # WHEN the operator forgets a memory, cancelling first, then confirming
    row.locator("button.forget").click()
    assert page.is_visible("#confirm") and BUDGET in page.inner_text("#confirm-text")
    page.click("#confirm-cancel")
    assert row.count() == 1
    row.locator("button.forget").click()
    page.click("#confirm-forget")

    # THEN it is gone from the page, from the API, and from search; the audit trail has it
    page.wait_for_selector(f"#notice:has-text('Forgotten {target}')")
    wait_until(lambda: page.locator(f"#period .record[data-id='{target}']").count() == 0)
    status, _ = api("GET", f"/v1/agents/{seeded.agent}/memories/{target}", key=seeded.key)
    assert status == 404
    page.click(".tabs [data-tab='search']")
    page.fill("#query", "catering budget")
    page.select_option("#search-grain", "working")
    page.click("#search button[type='submit']")
    page.wait_for_selector("table.results, [data-zero-hit='true']")
    assert page.locator(f"table.results tr[data-id='{target}']").count() == 0

    page.click(".tabs [data-tab='audit']")
    page.wait_for_selector(f"table.audit tr[data-record='{target}'][data-action='forget']")
    assert "summaries re-made" in page.inner_text(f"table.audit tr[data-record='{target}']")
    shot(page, "console-forgotten")


def test_a_read_only_key_cannot_forget(page: Any, runtime: LocalRuntime, seeded: Seeded, api: Api) -> None:
    # GIVEN
    _, read_only = runtime.keys.create(NewKey(seeded.tenant, "pro", scopes=frozenset({"read"})))
    target = seeded.ids[VENUE]
    connect(page, runtime, read_only)
    pick(page, seeded.agent)
    page.click(f".tl-cell[data-grain='working'][data-key='{seeded.days[1].isoformat()}']")
    row = page.locator(f"#period .record[data-id='{target}']")
    row.wait_for()

    # WHEN
    page.check("#allow-forget")
    row.locator("button.forget").click()
    page.click("#confirm-forget")

    # THEN
    page.wait_for_selector("#notice.error")
    assert "403" in page.inner_text("#notice")
    assert row.count() == 1
    status, _ = api("GET", f"/v1/agents/{seeded.agent}/memories/{target}", key=seeded.key)
    assert status == 200


def test_a_wrong_key_is_refused_and_nothing_is_shown(page: Any, runtime: LocalRuntime) -> None:
    # GIVEN
    connect(page, runtime, "amk_not_a_key")
    page.wait_for_selector("#notice.error")
    # WHEN / THEN
    assert "401" in page.inner_text("#notice")
    assert page.locator("#agent-list button").count() == 0


def test_search_marks_a_memory_a_newer_one_superseded(page: Any, runtime: LocalRuntime, api: Api) -> None:
    # GIVEN Berlin, then the move to Lisbon, in a tenant of its own
    _, key = runtime.keys.create(NewKey(unique("mover"), "pro", admin=True))
    agent = "concierge"
    march = (datetime.now(UTC) - timedelta(days=200)).replace(microsecond=0)
    items = [
        {"content": "I live in Berlin, in a flat near Tempelhof.", "occurred_at": march.isoformat()},
        {"content": "I moved to Lisbon last week.", "occurred_at": (march + timedelta(days=90)).isoformat()},
    ]
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": items}, key=key)
    assert status == 202, body
    berlin, lisbon = (a["id"] for a in body["accepted"])
    settled_stats(api, key, agent)
    connect(page, runtime, key)
    pick(page, agent)
    # WHEN searching where the user lives
    page.click(".tabs [data-tab='search']")
    page.fill("#query", "where do I live")
    page.select_option("#search-grain", "working")
    page.click("#search button[type='submit']")
    page.wait_for_selector("table.results")
    # THEN the Berlin row says it no longer holds and names what replaced it; the Lisbon row does not
    marked = page.locator(f"table.results tbody tr[data-id='{berlin}'] [data-superseded]")
    assert marked.get_attribute("data-superseded") == lisbon
    assert marked.inner_text().startswith("no longer holds since")
    assert page.locator(f"table.results tbody tr[data-id='{lisbon}'] [data-superseded]").count() == 0
