"""`agent-memory patterns run` through the real wiring on the embedded store: experiences written
through the API in several runs become one pattern, stored before the command returns."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from tests.environment import run_cli
from tests.integration.conftest import call_api, drain_writes
from tests.payloads import load_event

from agent_memory import container
from agent_memory.derived.rules.patterns import is_recognised_pattern
from agent_memory.model.queries import SearchQuery
from agent_memory.model.records import MemoryKind

TENANT, AGENT = "acme", "support-bot"
FINDING = "The login handler builds its SQL query from raw user input"
REPORT_FIELDS = {
    "agents", "experiences", "clusters", "made", "refreshed", "unchanged", "dropped", "queued", "patterns",
    "pending",
}  # fmt: skip


def _experience(run_id: str, hours_ago: int) -> None:
    """One failure of run ``run_id``, written through the API and stored."""
    when = container.clock().now() - timedelta(hours=hours_ago)
    item = {"content": FINDING, "kind": "failure", "run_id": run_id, "occurred_at": when.isoformat()}
    event = load_event("api_write.json", body=json.dumps({"items": [item]}))
    assert call_api(event)[0] == 202
    drain_writes()


def _patterns() -> list[str]:
    query = SearchQuery(kinds=(MemoryKind.PATTERN,), max_results=50)
    hits = container.api_services().search.search(TENANT, AGENT, query)
    return [h.record.id for h in hits if is_recognised_pattern(h.record)]  # type: ignore[union-attr]


def test_patterns_run_recognises_a_pattern_across_runs_and_stores_it(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the same failure in three runs
    for hours_ago, run_id in enumerate(("run-1", "run-2", "run-3"), start=1):
        _experience(run_id, hours_ago)

    # WHEN the agent's patterns are recognised
    code, out, err = run_cli(capsys, "patterns", "run", "--agent", AGENT, "--data-dir", str(cli_env))

    # THEN one pattern was made from the three and is stored (nothing left queued)
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == REPORT_FIELDS
    assert {k: report[k] for k in ("agents", "experiences", "clusters", "made", "pending")} == {
        "agents": 1, "experiences": 3, "clusters": 1, "made": 1, "pending": 0,
    }  # fmt: skip
    assert _patterns() == report["patterns"]
    # AND a second run, for every agent, finds it current and writes nothing
    code, out, _ = run_cli(capsys, "patterns", "run", "--data-dir", str(cli_env))
    again = json.loads(out)
    assert (code, again["agents"], again["made"], again["unchanged"], again["patterns"]) == (0, 1, 0, 1, [])


def test_patterns_run_without_waiting_leaves_the_patterns_queued(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    for hours_ago, run_id in enumerate(("run-1", "run-2", "run-3"), start=1):
        _experience(run_id, hours_ago)

    # WHEN
    code, out, _ = run_cli(
        capsys, "patterns", "run", "--tenant", TENANT, "--no-wait", "--data-dir", str(cli_env)
    )

    # THEN the pattern is queued for the writer, not yet stored
    report = json.loads(out)
    assert (code, report["made"]) == (0, 1)
    assert "pending" not in report
    assert _patterns() == []
    drain_writes()
    assert _patterns() == report["patterns"]


def test_patterns_run_for_an_agent_with_no_memory_says_so(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN
    code, out, err = run_cli(capsys, "patterns", "run", "--agent", "nobody", "--data-dir", str(cli_env))

    # THEN
    assert code == 1
    assert json.loads(out)["agents"] == 0
    assert "no agent 'nobody' has memory in the pattern window" in err


def test_patterns_run_for_a_named_tenant_and_agent_runs_it_even_without_memory(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN
    code, out, _ = run_cli(
        capsys, "patterns", "run", "--tenant", TENANT, "--agent", AGENT, "--data-dir", str(cli_env)
    )

    # THEN the agent was looked at (a pattern it had could need dropping), and nothing was found
    report = json.loads(out)
    assert (code, report["agents"], report["experiences"], report["made"]) == (0, 1, 0, 0)
