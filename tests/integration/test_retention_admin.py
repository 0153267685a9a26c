"""Retention run by hand: the admin route and `agent-memory retention run`, through the real
wiring on the embedded store, with a record old enough that the default plan forgets it."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from tests.integration.conftest import call_api, drain_queues, drain_writes
from tests.payloads import load_event

from agent_memory import container
from agent_memory.local import cli
from agent_memory.model.grains import Grain

TENANT, AGENT = "acme", "support-bot"
_CLI_ENV = (
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
    "POWERTOOLS_LOG_LEVEL",
)


def _remember(days_ago: int, content: str) -> None:
    """One working memory that happened ``days_ago`` days ago, written and stored."""
    when = container.clock().now() - timedelta(days=days_ago)
    item = {"content": content, "occurred_at": when.isoformat(), "kind": "fact"}
    event = load_event("api_write.json", body=json.dumps({"items": [item]}))
    assert call_api(event)[0] == 202
    drain_writes()


def _working() -> int:
    stats = container.store().stats(TENANT, AGENT, container.clock().now()).records
    return stats.get(Grain.WORKING.value, 0)


def test_the_admin_route_runs_retention_and_the_plan_forgets_an_old_record_once_summarized(
    local_env: Path,
) -> None:
    # GIVEN a record past the free plan's 48 h that no summary holds (an import 40 days back),
    # and one from an hour ago
    _remember(40, "The old office was on Elm Street.")
    _remember(0, "The new office is on Oak Street.")
    assert _working() == 2

    # WHEN an admin runs retention
    status, answer = call_api(load_event("api_admin_retention.json"))

    # THEN it runs in place (no retention function is configured), and says what it did:
    # the old record is kept (no summary holds it) and its day is queued to be summarized
    assert (status, answer["status"]) == (202, "done")
    body = answer["report"]
    assert body["total_deleted"] == 0
    assert body["kept_unsummarized"] == 1 and body["summaries_queued"] == 1
    assert _working() == 2

    # WHEN the queued summary is made and retention runs again
    drain_queues()
    body = call_api(load_event("api_admin_retention.json"))[1]["report"]

    # THEN the old record goes (its daily summary holds it), the new one stays
    assert body["deleted"].get("working") == 1
    assert body["tenants"] >= 1
    assert _working() == 1
    # and a third run finds nothing more to do
    assert call_api(load_event("api_admin_retention.json"))[1]["report"]["total_deleted"] == 0


def test_the_retention_route_needs_the_admin_scope(local_env: Path) -> None:
    # GIVEN
    _remember(40, "The old office was on Elm Street.")
    event = load_event("api_admin_retention.json")
    event["requestContext"]["authorizer"]["scopes"] = "read write forget"

    # WHEN
    status, body = call_api(event)

    # THEN
    assert status == 403
    assert "error" in body
    assert _working() == 1


def test_the_cli_runs_retention_and_prints_the_report(
    local_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN
    for name in _CLI_ENV:  # `cli.main` sets these; restore them after the test
        monkeypatch.delenv(name, raising=False)
    _remember(40, "The old office was on Elm Street.")
    call_api(load_event("api_admin_retention.json"))  # queues the day's summary
    drain_queues()
    capsys.readouterr()

    # WHEN
    code = cli.main(["retention", "run", "--data-dir", str(local_env)])

    # THEN
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["deleted"].get("working") == 1
    assert set(report) == {
        "tenants",
        "deleted",
        "kept_unsummarized",
        "unsummarized_overdue",
        "summaries_queued",
        "purged",
        "over_quota",
        "decayed",
        "total_deleted",
    }
    assert _working() == 0


def test_an_admin_runs_retention_and_summaries_for_its_own_tenant_only(local_env: Path) -> None:
    # GIVEN acme's record of 40 days ago, which retention would keep and queue a summary for
    _remember(40, "The old office was on Elm Street.")
    day = (container.clock().now() - timedelta(days=40)).date().isoformat()
    summarize = load_event("api_admin_summarize.json", body=json.dumps({"grain": "daily", "period": day}))

    # WHEN another tenant's admin runs retention and asks for that day's summaries
    other_retention = load_event("api_admin_retention.json")
    other_retention["requestContext"]["authorizer"]["tenant_id"] = "globex"
    other_summarize = load_event("api_admin_summarize.json", body=summarize["body"])
    other_summarize["requestContext"]["authorizer"]["tenant_id"] = "globex"
    status, retention = call_api(other_retention)
    other_status, other = call_api(other_summarize)

    # THEN nothing of acme's is touched, queued or counted
    assert (status, other_status) == (202, 202)
    assert retention["report"]["tenants"] == 1
    assert retention["report"]["kept_unsummarized"] == retention["report"]["summaries_queued"] == 0
    assert other["jobs_queued"] == 0
    assert _working() == 1

    # AND acme's own admin gets its own: the day's summary job is queued
    _, own = call_api(summarize)
    assert own["jobs_queued"] == 1
