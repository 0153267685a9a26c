"""The console's experiences in a real browser (headless Chromium) against the local runtime: an
agent's experiences listed with their confidence and evidence, filtered by kind and confidence,
one opened to its confidence history, feedback given behind a confirm and counted, patterns
recognised from the page and a pattern followed to its members; a read-only key refused.

Experiences are written and feedback given through the public API; each test seeds its own agent
(feedback and pattern runs change what the next test would see). The browser fixtures are the
console suite's own (`tests.e2e.test_console_browser`), so all three suites run, or skip, on the
same terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats, unique, wait_until
from tests.e2e.test_console_browser import browser, connect, page, pick, shot  # noqa: F401

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

CACHE = "Clearing the build cache and retrying fixed the flaky deploy."
EXPERIENCES = [
    {"content": CACHE, "kind": "success", "context": "deploy failed with a cache error",
     "outcome": "deploy passed", "run_id": "run-1", "confidence": 0.7},
    {"content": "Clearing the build cache and retrying fixed the flaky deploy again.", "kind": "success",
     "context": "deploy failed with a cache error", "outcome": "deploy passed", "run_id": "run-2",
     "confidence": 0.8},
    {"content": "Retrying after clearing the build cache fixed the flaky deploy.", "kind": "success",
     "context": "deploy failed", "outcome": "deploy passed", "run_id": "run-3"},
    {"content": "Skipping the tests to ship faster broke production.", "kind": "failure",
     "context": "Friday release", "outcome": "rolled back", "run_id": "run-2", "confidence": 0.9},
    {"content": "The staging database is reset every Monday.", "kind": "fact"},
]  # fmt: skip
SKIPPED = EXPERIENCES[3]["content"]
NOTE = "It was the flaky database, not the tests."
#: The list's evidence columns: their headers, and the experience's fields they show.
COUNTED = ["confirmed", "refuted", "applied"]
COUNTS = ("confirmations", "refutations", "applications")


@dataclass(frozen=True)
class Tenant:
    tenant: str
    key: str


@pytest.fixture(scope="module")
def tenant(runtime: LocalRuntime) -> Tenant:
    name = unique("xp")
    _, key = runtime.keys.create(NewKey(name, "pro", admin=True))
    return Tenant(name, key)


def seed(api: Api, tenant: Tenant, agent: str) -> dict[str, str]:
    """The experiences (and one fact) written for ``agent``, stored; their ids by content."""
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": EXPERIENCES}, key=tenant.key)
    assert status == 202, body
    settled_stats(api, tenant.key, agent)
    return {item["content"]: a["id"] for item, a in zip(EXPERIENCES, body["accepted"], strict=True)}


def feedback(
    api: Api, tenant: Tenant, agent: str, memory: str, outcome: str, note: str | None = None
) -> None:
    """One feedback given through the API, and counted (its audit event is there)."""
    body = {"outcome": outcome, **({"note": note} if note else {})}
    status, sent = api("POST", f"/v1/agents/{agent}/memories/{memory}/feedback", body, key=tenant.key)
    assert status == 202, sent

    def counted() -> bool:
        status, trail = api("GET", f"/v1/agents/{agent}/audit?record_id={memory}", key=tenant.key)
        assert status == 200, trail
        return any(e["detail"].get("feedback_id") == sent["feedback_id"] for e in trail["items"])

    wait_until(counted, timeout_s=10)


def open_experiences(page: Any, runtime: LocalRuntime, key: str, agent: str) -> None:  # noqa: F811
    connect(page, runtime, key)
    pick(page, agent)
    page.click(".tabs [data-tab='experiences']")
    page.wait_for_selector("table.experiences tbody tr, [data-no-experiences='true']")


def row(page: Any, memory: str) -> Any:  # noqa: F811
    return page.locator(f"table.experiences tr[data-id='{memory}']")


def test_the_operator_lists_experiences_and_reads_a_confidence_history(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tenant: Tenant,
) -> None:
    # GIVEN an agent's experiences, one refuted with a note and then applied
    agent = unique("planner")
    ids = seed(api, tenant, agent)
    feedback(api, tenant, agent, ids[SKIPPED], "refuted", NOTE)
    feedback(api, tenant, agent, ids[SKIPPED], "applied")

    # WHEN the operator opens the agent's experiences
    open_experiences(page, runtime, tenant.key, agent)

    # THEN the four experiences are listed, newest first, and not the fact
    rows = page.locator("table.experiences tbody tr")
    assert rows.count() == 4
    assert page.locator("table.experiences tr[data-kind='fact']").count() == 0
    headers = page.locator("table.experiences th").all_inner_texts()
    assert headers[:8] == ["kind", "experience", "confidence", *COUNTED, "members", "runs"]
    # ... each with its kind, context, outcome, confidence and evidence
    failure = row(page, ids[SKIPPED])
    assert failure.locator("[data-kind]").inner_text() == "failure"
    assert failure.locator("[data-field='context']").inner_text() == "context Friday release"
    assert failure.locator("[data-field='outcome']").inner_text() == "outcome rolled back"
    assert "run run-2" in failure.inner_text()
    # (0.9 * 2 + 0) / (2 + 0 + 1) = 0.6
    assert failure.locator("[data-col='confidence']").inner_text() == "0.60"
    counts = [failure.locator(f"[data-col='{c}']").inner_text() for c in COUNTS]
    assert counts == ["0", "1", "1"]
    assert failure.locator("[data-col='members']").inner_text() == "\u2013"  # not a pattern
    assert row(page, ids[CACHE]).locator("[data-col='confidence']").inner_text() == "0.70"
    assert "null" not in page.inner_text("#experiences")

    # WHEN one is opened
    failure.get_by_role("button", name="Open").click()
    page.wait_for_selector(f"#experience [data-history='{ids[SKIPPED]}']")

    # THEN its confidence history: the refutation with its note, 0.90 -> 0.60, then the
    # application (confidence unchanged), newest first, and the confidence it was written with
    history = page.locator(f"#experience [data-history='{ids[SKIPPED]}'] tbody tr")
    assert [history.nth(i).get_attribute("data-action") for i in range(history.count())] == [
        "feedback",
        "feedback",
        "written",
    ]
    applied, refuted, written = (history.nth(i) for i in range(3))
    assert applied.get_attribute("data-outcome") == "applied"
    assert applied.locator("[data-col='confidence']").inner_text() == "0.60 \u2192 0.60"
    assert refuted.get_attribute("data-outcome") == "refuted"
    assert refuted.locator("[data-col='note']").inner_text() == NOTE
    assert refuted.locator("[data-col='confidence']").inner_text() == "0.90 \u2192 0.60"
    assert refuted.locator("[data-col='evidence']").inner_text() == "0 / 1 / 0"
    assert written.locator("[data-col='confidence']").inner_text() == "0.90"
    panel = page.inner_text("#experience")
    assert "Friday release" in panel and "rolled back" in panel
    assert page.inner_text("#experience [data-count='refutations']") == "1"
    assert page.url.endswith(f"&experience={ids[SKIPPED]}")
    assert page.get_attribute(f"table.experiences tr[data-id='{ids[SKIPPED]}']", "aria-current") == "true"
    shot(page, "console-experience")

    # AND the agent's audit trail tells the same in words
    page.click(".tabs [data-tab='audit']")
    page.wait_for_selector(f"table.audit tr[data-record='{ids[SKIPPED]}'][data-action='feedback']")
    assert (
        "refuted (It was the flaky database, not the tests.): confidence 0.90 \u2192 0.60"
        in page.inner_text("#audit")
    )

    # ... and its record links back to the experience
    page.locator(f"table.audit tr[data-record='{ids[SKIPPED]}'][data-action='feedback']").first.get_by_role(
        "button", name=ids[SKIPPED]
    ).click()
    page.wait_for_selector(f"#experience [data-history='{ids[SKIPPED]}']")
    assert page.is_visible("#tab-experiences") and not page.is_visible("#tab-audit")

    # AND the page's address opens it again
    page.reload()
    page.wait_for_selector(f"#experience [data-history='{ids[SKIPPED]}']")
    assert page.get_attribute(".tabs [data-tab='experiences']", "aria-selected") == "true"


def test_the_list_is_filtered_by_kind_and_confidence(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tenant: Tenant,
) -> None:
    # GIVEN
    agent = unique("filter")
    ids = seed(api, tenant, agent)
    open_experiences(page, runtime, tenant.key, agent)

    # WHEN only failures are asked for
    page.select_option("#experience-kind", "failure")
    page.click("#experience-filter button[type='submit']")

    # THEN
    wait_until(lambda: page.locator("table.experiences tbody tr").count() == 1)
    assert row(page, ids[SKIPPED]).count() == 1

    # WHEN every kind at least 0.75 sure is asked for
    page.select_option("#experience-kind", "")
    page.fill("#experience-min", "0.75")
    page.click("#experience-filter button[type='submit']")

    # THEN the 0.8 success and the 0.9 failure
    wait_until(lambda: page.locator("table.experiences tbody tr").count() == 2)
    shown = {r.get_attribute("data-id") for r in page.locator("table.experiences tbody tr").all()}
    assert shown == {ids[SKIPPED], ids[EXPERIENCES[1]["content"]]}

    # WHEN nothing is that sure
    page.fill("#experience-min", "0.95")
    page.click("#experience-filter button[type='submit']")

    # THEN the page says so
    page.wait_for_selector("[data-no-experiences='true']")
    assert "No experience matches the filter." in page.inner_text("#experiences")


def test_feedback_is_confirmed_then_counted_and_the_confidence_moves(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tenant: Tenant,
) -> None:
    # GIVEN a success opened (0.7, worth 2 observations)
    agent = unique("confirm")
    ids = seed(api, tenant, agent)
    target = ids[CACHE]
    open_experiences(page, runtime, tenant.key, agent)
    row(page, target).get_by_role("button", name="Open").click()
    page.wait_for_selector(f"#experience [data-history='{target}']")

    # WHEN the operator confirms it, cancelling first, then with a note
    page.click("#experience [data-feedback='confirmed']")
    assert page.is_visible("#confirm-feedback")
    assert page.inner_text("#feedback-title") == "Confirm this experience?"
    assert CACHE in page.inner_text("#feedback-text")
    # (0.7 * 2 + 1) / (2 + 1) = 0.8
    assert "Confidence 0.70 \u2192 0.80" in page.inner_text("#feedback-effect")
    shot(page, "console-feedback")
    page.click("#feedback-cancel")
    page.click("#experience [data-feedback='confirmed']")
    page.fill("#feedback-note", "Worked again in run 4.")
    page.click("#feedback-send")

    # THEN it is counted: the panel, the list and the API show the new confidence
    page.wait_for_selector(f"#notice:has-text('Counted: {target} confirmed')")
    page.wait_for_selector(f"#experience [data-history='{target}'] tr[data-outcome='confirmed']")
    confirmed = page.locator(f"#experience [data-history='{target}'] tr[data-outcome='confirmed']")
    assert confirmed.locator("[data-col='confidence']").inner_text() == "0.70 \u2192 0.80"
    assert confirmed.locator("[data-col='note']").inner_text() == "Worked again in run 4."
    assert page.inner_text("#experience [data-count='confirmations']") == "1"
    assert row(page, target).locator("[data-col='confidence']").inner_text() == "0.80"
    assert row(page, target).locator("[data-col='confirmations']").inner_text() == "1"
    status, memory = api("GET", f"/v1/agents/{agent}/memories/{target}", key=tenant.key)
    assert status == 200 and memory["experience"]["confirmations"] == 1

    # WHEN it is marked applied
    page.click("#experience [data-feedback='applied']")
    assert "Confidence 0.80 \u2192 0.80" in page.inner_text("#feedback-effect")
    page.click("#feedback-send")

    # THEN it is counted, the confidence where it was
    page.wait_for_selector(f"#experience [data-history='{target}'] tr[data-outcome='applied']")
    assert page.inner_text("#experience [data-count='applications']") == "1"
    assert row(page, target).locator("[data-col='confidence']").inner_text() == "0.80"


def test_patterns_are_recognised_from_the_page_and_a_pattern_opens_its_members(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tenant: Tenant,
) -> None:
    # GIVEN three successes that say the same thing in three runs, no pattern yet
    agent = unique("patterns")
    ids = seed(api, tenant, agent)
    open_experiences(page, runtime, tenant.key, agent)
    assert page.locator("table.experiences tr[data-kind='pattern']").count() == 0

    # WHEN the operator (an admin) recognises patterns now, cancelling first, then confirming
    page.click("#patterns-run")
    assert agent in page.inner_text("#confirm-patterns-text")
    page.click("#confirm-patterns-cancel")
    page.click("#patterns-run")
    page.click("#confirm-patterns-ok")

    # THEN a pattern is listed, from three members in three runs
    page.wait_for_selector("#notice:has-text('Pattern recognition has run')")
    pattern = page.locator("table.experiences tr[data-kind='pattern']")
    assert pattern.count() == 1
    assert pattern.locator("[data-col='members']").inner_text() == "3"
    assert pattern.locator("[data-col='runs']").inner_text() == "3"

    # WHEN it is opened
    pattern.get_by_role("button", name="Open").click()
    page.wait_for_selector("#experience [data-members]")

    # THEN its members are listed as links, and its history says it was recognised
    members = page.locator("#experience [data-members] [data-member]")
    successes = {ids[e["content"]] for e in EXPERIENCES[:3]}
    assert {m.get_attribute("data-member") for m in members.all()} == successes
    made = page.locator("#experience [data-history] tr[data-action='pattern_made']")
    assert made.count() == 1 and "recognised" in made.inner_text()
    assert "from 3 members over 3 runs" in made.inner_text()
    shot(page, "console-pattern")

    # WHEN a member is followed
    first = members.first.get_attribute("data-member")
    members.first.get_by_role("button", name=first).click()

    # THEN the member opens, with the way back to its pattern
    page.wait_for_selector(f"#experience [data-history='{first}']")
    assert page.inner_text("#experience h2") == "Experience"
    back = page.locator("#experience [data-pattern]")
    assert back.count() == 1
    back.click()
    page.wait_for_selector("#experience [data-members]")


def test_a_read_only_key_cannot_give_feedback_nor_run_patterns(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tenant: Tenant,
) -> None:
    # GIVEN a key that may only read, on an agent's experiences
    agent = unique("readonly")
    ids = seed(api, tenant, agent)
    _, reader = runtime.keys.create(NewKey(tenant.tenant, "pro", scopes=frozenset({"read"})))
    open_experiences(page, runtime, reader, agent)
    row(page, ids[SKIPPED]).get_by_role("button", name="Open").click()
    page.wait_for_selector(f"#experience [data-history='{ids[SKIPPED]}']")

    # WHEN it refutes an experience
    page.click("#experience [data-feedback='refuted']")
    page.click("#feedback-send")

    # THEN it is refused, and nothing is counted
    page.wait_for_selector("#notice.error")
    assert "403" in page.inner_text("#notice")
    status, memory = api("GET", f"/v1/agents/{agent}/memories/{ids[SKIPPED]}", key=tenant.key)
    assert status == 200 and memory["experience"]["refutations"] == 0

    # WHEN it asks for a pattern run
    page.evaluate("document.querySelector('#notice').hidden = true")  # an error stays until replaced
    page.click("#patterns-run")
    page.click("#confirm-patterns-ok")

    # THEN that is refused too, and the button is usable again
    page.wait_for_selector("#notice.error:has-text('admin')")
    assert "403" in page.inner_text("#notice")
    assert page.is_enabled("#patterns-run")
