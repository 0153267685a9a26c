"""The console's tenant settings in a real browser (headless Chromium) against the local runtime:
an admin reads the plan's bounds, changes retention, merging and a lifetime, sets a provider key
(shown back by its last four characters only), and is told when someone else changed them first.

The browser fixtures are the console suite's own (`tests.e2e.test_console_browser`), so both
suites run, or skip, on the same terms.
"""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Api, unique
from tests.e2e.test_console_browser import browser, connect, page, shot  # noqa: F401

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

KEY = "sk-console-0f9e8d7c6b5aJKLM"


def open_settings(page: Any, runtime: LocalRuntime, key: str) -> None:  # noqa: F811
    connect(page, runtime, key)
    page.click("#settings-link")
    page.wait_for_selector("#settings-retention input[data-grain='working']")


def test_an_admin_changes_the_settings_and_sets_a_key_it_never_sees_again(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
) -> None:
    # GIVEN a pro tenant's admin on the settings page
    tenant = unique("st")
    _, admin = runtime.keys.create(NewKey(tenant, "pro", admin=True))
    open_settings(page, runtime, admin)
    assert page.text_content("#settings-retention tr:first-child td:nth-child(2)") == "240 h"
    assert "No key is set" in page.text_content("#settings-key-status")
    # WHEN it keeps working memory 24 hours, stops merging, gives notes 3 days and sets a key
    page.fill("#settings-retention input[data-grain='working']", "24")
    page.uncheck("#settings-merge")
    page.fill("#settings-ttl input[data-kind='note']", "3")
    page.check("#settings-redaction")
    page.fill("#settings-key", KEY)
    page.click("#settings-save")
    page.wait_for_selector("#settings-version:has-text('version 1')")
    # THEN the API holds the change, and the page shows the key by its last four characters only
    status, view = api("GET", "/v1/admin/settings", key=admin)
    assert status == 200
    assert view["settings"]["retention_hours"] == {"working": 24}
    assert view["settings"]["merge_near_duplicates"] is False
    assert view["settings"]["ttl_days"] == {"note": 3}
    assert view["settings"]["redaction"] == {"enabled": True, "engine": "local"}
    assert view["provider_key"]["last4"] == "JKLM"
    assert "ends in JKLM" in page.text_content("#settings-key-status")
    assert page.input_value("#settings-key") == ""
    assert KEY not in page.content()
    shot(page, "console-settings")


def test_a_change_made_elsewhere_first_is_not_overwritten(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
) -> None:
    # GIVEN the page open on version 0
    _, admin = runtime.keys.create(NewKey(unique("st"), "pro", admin=True))
    open_settings(page, runtime, admin)
    # AND another admin changes the settings meanwhile
    status, _ = api(
        "PUT", "/v1/admin/settings", {"version": 0, "settings": {"merge_near_duplicates": False}}, key=admin
    )
    assert status == 200
    # WHEN this page saves its own change
    page.fill("#settings-retention input[data-grain='working']", "24")
    page.click("#settings-save")
    # THEN it is told, shown the other change, and nothing of its own was written
    page.wait_for_selector("#notice:has-text('Someone changed the settings')")
    page.wait_for_selector("#settings-version:has-text('version 1')")
    assert page.is_checked("#settings-merge") is False
    status, view = api("GET", "/v1/admin/settings", key=admin)
    assert view["version"] == 1 and view["settings"]["retention_hours"] == {}


def test_a_key_without_the_admin_scope_is_told_so(page: Any, runtime: LocalRuntime) -> None:  # noqa: F811
    # GIVEN a reader's key
    _, reader = runtime.keys.create(NewKey(unique("st"), "pro"))
    connect(page, runtime, reader)
    # WHEN it opens the settings
    page.click("#settings-link")
    # THEN the page says the key is not allowed
    page.wait_for_selector("#notice:has-text('403')")


def test_an_admin_chooses_an_embedding_model_and_sees_the_move_and_a_later_save_keeps_it(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
) -> None:
    # GIVEN a tenant with a memory, its admin on the settings page
    tenant = unique("se")
    _, admin = runtime.keys.create(NewKey(tenant, "pro", admin=True))
    api("POST", "/v1/agents/a1/memories", {"items": [{"content": "The console picks a model."}]}, key=admin)
    open_settings(page, runtime, admin)
    assert "deployment's model" in page.text_content("#settings-embedding-status")
    # WHEN it chooses a bundled model of 64 dimensions
    page.select_option("#settings-embedding-provider", "local")
    page.fill("#settings-embedding-model", "hashing")
    page.fill("#settings-embedding-dimension", "64")
    page.click("#settings-save")
    page.wait_for_selector("#settings-version:has-text('version 1')")
    # THEN the API holds it and the page says memories are being moved to it (or already are)
    _, view = api("GET", "/v1/admin/settings", key=admin)
    assert view["settings"]["embedding"] == {
        "provider": "local",
        "model": "hashing",
        "endpoint": None,
        "dimension": 64,
    }
    assert "hashing (64)" in page.text_content("#settings-embedding-status")
    # WHEN the admin later changes something else only
    page.uncheck("#settings-merge")
    page.click("#settings-save")
    page.wait_for_selector("#settings-version:has-text('version 2')")
    # THEN the embedding model is kept, not reset to the deployment's
    _, view = api("GET", "/v1/admin/settings", key=admin)
    assert (
        view["settings"]["embedding"]["dimension"] == 64
        and view["settings"]["merge_near_duplicates"] is False
    )
