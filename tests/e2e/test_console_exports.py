"""The console's exports page in a real browser (headless Chromium) against the local runtime: an
admin exports an end user, follows the export to done, and downloads a file holding that user's
memories and nothing of anyone else's; a key without the admin scope is told so.

The browser fixtures are the console suite's own (`tests.e2e.test_console_browser`), so both
suites run, or skip, on the same terms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Api, settled_stats, unique
from tests.e2e.test_console_browser import browser, connect, page, shot  # noqa: F401

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

MINE = "Ines asked for the invoice of order 7731 to be resent to Porto."
THEIRS = "Rui keeps the spare office key under the blue plant."


def test_an_admin_exports_an_end_user_and_downloads_the_file(
    page: Any,  # noqa: F811
    runtime: LocalRuntime,
    api: Api,
    tmp_path: Path,
) -> None:
    # GIVEN a tenant with memories of two end users
    _, admin = runtime.keys.create(NewKey(unique("ex"), "pro", admin=True))
    items = [{"content": MINE, "user_id": "ines"}, {"content": THEIRS, "user_id": "rui"}]
    assert api("POST", "/v1/agents/support-bot/memories", {"items": items}, key=admin)[0] == 202
    settled_stats(api, admin, "support-bot")
    connect(page, runtime, admin)
    page.click("#exports-link")
    page.wait_for_selector("#exports [data-no-exports]")

    # WHEN the admin exports end user "ines" and waits for it
    page.select_option("#export-subject", "user_id")
    page.fill("#export-id", "ines")
    page.click("#export-start")
    page.wait_for_selector("#exports tr[data-status='done']")
    shot(page, "console-exports")

    # THEN the row says what was exported, and the file downloaded holds her memory only
    row = page.text_content("#exports tr[data-status='done']") or ""
    assert "end user ines" in row and "100%" in row and "1 memory" in row
    with page.expect_download() as download:
        page.click("#exports tr[data-status='done'] button")
    saved = tmp_path / "export.jsonl"
    download.value.save_as(saved)
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [line["memory"]["content"] for line in lines if line["type"] == "memory"] == [MINE]
    assert THEIRS not in saved.read_text()


def test_a_key_without_the_admin_scope_is_told_so(page: Any, runtime: LocalRuntime) -> None:  # noqa: F811
    # GIVEN a reader's key
    _, reader = runtime.keys.create(NewKey(unique("ex"), "pro"))
    connect(page, runtime, reader)
    # WHEN it opens the exports
    page.click("#exports-link")
    # THEN the page says the key is not allowed
    page.wait_for_selector("#notice:has-text('403')")
