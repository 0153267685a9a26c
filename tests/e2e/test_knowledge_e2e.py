"""The judged scenario end to end, on the real local server over HTTP: a tenant imports a folder
of documents with the CLI, an agent asks a question answered half by its own memory and half by a
document and gets one list with both, each tagged; another tenant gets neither; deleting the
document removes every passage from search at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats
from tests.environment import configure_local_env, run_cli

from agent_memory.local.server import LocalRuntime
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.keys import NewKey

RUNBOOK = """# Database failover runbook

## Promote the replica
To fail over the primary database, promote the replica in the standby region, then point the
writer endpoint at it. It takes about four minutes.

## Afterwards
Open an incident ticket and tell the on-call lead.
"""

PRICING = """# Pricing

## Plans
The pro plan costs 40 euros a month per seat.
"""


def search(api: Api, key: str, query: str, sources: list[str]) -> list[dict[str, Any]]:
    status, body = api(
        "POST", "/v1/agents/support-bot/memories/search", {"query": query, "sources": sources}, key=key
    )
    assert status == 200, body
    return body["results"]  # type: ignore[no-any-return]


def test_import_a_folder_then_one_blended_list_tagged_and_a_delete_is_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a running server, a publisher key, an agent's key, another tenant's key, and a folder
    configure_local_env(monkeypatch, tmp_path / "data")
    runtime = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
    runtime.start()
    try:
        api = Api(runtime.url)
        _, publisher = runtime.keys.create(NewKey("acme", "pro", scopes=frozenset({"knowledge", "read"})))
        _, agent = runtime.keys.create(NewKey("acme", "pro", agents=frozenset({"support-bot"})))
        _, other = runtime.keys.create(NewKey("globex", "pro"))
        folder = tmp_path / "handbook"
        (folder / "ops").mkdir(parents=True)
        (folder / "ops" / "failover.md").write_text(RUNBOOK)
        (folder / "pricing.md").write_text(PRICING)
        write = {"items": [{"content": "Dana told me her company's database runs in eu-west-1."}]}
        assert api("POST", "/v1/agents/support-bot/memories", write, key=agent)[0] == 202
        assert api("POST", "/v1/agents/support-bot/memories", write, key=other)[0] == 202
        settled_stats(api, agent, "support-bot")
        monkeypatch.setenv("AGENT_MEMORY_URL", runtime.url)
        monkeypatch.setenv("AGENT_MEMORY_API_KEY", publisher)

        # WHEN the tenant imports the folder and the agent asks
        code = run_cli(capsys, "knowledge", "import", str(folder), "--wait")[0]
        found = search(api, agent, "how do I fail over Dana's database?", ["private", "shared"])
        elsewhere = search(api, other, "how do I fail over Dana's database?", ["private", "shared"])

        # THEN the import stored both documents and the list holds memory and runbook, tagged
        assert code == 0
        listed = api("GET", "/v1/knowledge/documents", key=agent)[1]["documents"]
        assert sorted(d["title"] for d in listed) == ["Database failover runbook", "Pricing"]
        tags = [r["source_tag"] for r in found]
        assert "private" in tags[:3] and "shared" in tags[:3]
        shared = next(r for r in found if r["source_tag"] == "shared")
        assert shared["document"]["title"] == "Database failover runbook"
        assert shared["document"]["heading_path"] == ["Promote the replica"]
        assert "Dana" in next(r for r in found if r["source_tag"] == "private")["content"]
        # another tenant gets its own memory and no document
        assert {r["source_tag"] for r in elsewhere} == {"private"}
        assert api("GET", "/v1/knowledge/documents", key=other)[1]["documents"] == []

        # WHEN the runbook is deleted
        runbook = shared["document"]["doc_id"]
        deleted = api("DELETE", f"/v1/knowledge/documents/{runbook}", key=publisher)

        # THEN no passage of it is found, at once
        assert deleted[0] == 200 and deleted[1]["passages_removed"] == 2
        after = search(api, agent, "promote the replica standby region writer endpoint incident", ["shared"])
        assert all(r["document"]["doc_id"] != runbook for r in after)
    finally:
        runtime.stop()
