"""The client's export calls over the scripted transport: start (exactly one subject, checked
before sending), status, the list, and waiting with progress until the export is done. The
download streams over a socket of its own: tests/e2e/test_exports_http.py runs it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.unit.client.test_client import error, make, ok

from agent_memory.client import NotFoundError
from agent_memory.contract.v1_exports import ExportOut

EXPORT_ID = "exp_" + "a" * 26


def export(status: str = "queued", memories: int = 0, **fields: Any) -> dict[str, Any]:
    return {
        "id": EXPORT_ID, "status": status, "user_id": "u-7", "agent_id": None, "since": None, "until": None,
        "created_at": "2026-11-22T12:00:00Z", "updated_at": "2026-11-22T12:00:00Z", "finished_at": None,
        "progress": {
            "memories": memories, "summaries": 0, "withheld_summaries": 0, "audit_events": 0, "bytes": 0,
            "estimated_total": 10, "percent": memories * 10.0,
        },
        **fields,
    }  # fmt: skip


def test_start_export_sends_the_subject_and_window_and_returns_the_job() -> None:
    # GIVEN
    client, transport, _ = make(ok(export(), 202))
    # WHEN
    started = client.start_export(user_id="u-7", since="2026-01-01T00:00:00Z")
    # THEN
    [sent] = transport.sent
    assert (sent.method, sent.path) == ("POST", "/prod/v1/admin/exports")
    assert sent.json() == {"user_id": "u-7", "since": "2026-01-01T00:00:00Z"}
    assert (started.id, started.status) == (EXPORT_ID, "queued")


@pytest.mark.parametrize("fields", [{}, {"user_id": "u-7", "agent_id": "bot"}])
def test_start_export_refuses_no_subject_or_two_without_a_request(fields: dict[str, str]) -> None:
    # GIVEN
    client, transport, _ = make()
    # WHEN / THEN
    with pytest.raises(ValidationError):
        client.start_export(**fields)
    assert transport.sent == []


def test_wait_for_export_polls_until_done_and_reports_each_answer() -> None:
    # GIVEN an export that runs, then is done
    client, transport, sleeps = make(
        ok(export("running", 4)), ok(export("running", 9)), ok(export("done", 10, download_url="/d"))
    )
    seen: list[ExportOut] = []

    # WHEN
    done = client.wait_for_export(EXPORT_ID, interval_s=0.25, on_progress=seen.append)

    # THEN three polls of the export, two pauses, and every answer shown to the caller
    assert [s.path for s in transport.sent] == [f"/prod/v1/admin/exports/{EXPORT_ID}"] * 3
    assert sleeps == [0.25, 0.25]
    assert [s.progress.memories for s in seen] == [4, 9, 10]
    assert done.status == "done" and done.download_url == "/d"


def test_an_unknown_export_is_not_found_and_the_list_is_paged_by_limit() -> None:
    # GIVEN
    client, transport, _ = make(error(404, "not_found"), ok({"items": [export("done")]}))
    # WHEN / THEN
    with pytest.raises(NotFoundError):
        client.export_status(EXPORT_ID)
    listed = client.list_exports(limit=5)
    assert transport.sent[1].query == {"limit": ["5"]}
    assert [e.id for e in listed.items] == [EXPORT_ID]
