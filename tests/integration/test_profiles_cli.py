"""`agent-memory profiles run` through the real wiring on the embedded store: what a person said
about themselves, written through the API, becomes their profile, stored before the command
returns; a second run writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.environment import run_cli
from tests.integration.conftest import call_api, drain_writes
from tests.payloads import load_event

from agent_memory import container
from agent_memory.derived.rules.profiles import is_made_profile
from agent_memory.model.queries import SearchQuery
from agent_memory.model.records import MemoryKind

TENANT, AGENT = "acme", "support-bot"
SAID = (
    "I moved here from Sweden four years ago with my mom.",
    "I love painting sunsets, it calms me down.",
    "My kids are seven and ten and they both play soccer.",
)


def test_profiles_run_makes_a_persons_profile_and_stores_it(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN three things Caroline said about herself, through the API
    items = [{"content": c, "speaker": "Caroline"} for c in SAID]
    assert call_api(load_event("api_write.json", body=json.dumps({"items": items})))[0] == 202
    drain_writes()

    # WHEN profiles are made for the agent
    code, out, err = run_cli(capsys, "profiles", "run", "--agent", AGENT, "--data-dir", str(cli_env))

    # THEN one profile, stored (nothing left queued), found by a search about her
    assert code == 0, err
    report = json.loads(out)
    assert {k: report[k] for k in ("agents", "subjects", "made", "pending")} == {
        "agents": 1, "subjects": 1, "made": 1, "pending": 0,
    }  # fmt: skip
    query = SearchQuery(query="where is Caroline from", kinds=(MemoryKind.PROFILE,), max_results=5)
    hits = container.api_services().search.search(TENANT, AGENT, query)
    assert [h.record.id for h in hits if is_made_profile(h.record)] == report["profiles"]  # type: ignore[union-attr]
    # AND a second run finds it current and writes nothing
    code, out, _ = run_cli(capsys, "profiles", "run", "--data-dir", str(cli_env))
    again = json.loads(out)
    assert (code, again["made"], again["refreshed"], again["unchanged"], again["profiles"]) == (
        0,
        0,
        0,
        1,
        [],
    )
