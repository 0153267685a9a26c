"""Importing a history through the local HTTP API: JSON Lines, a LoCoMo-style file and a mem0
export each store every memory once, with its speaker, user, time and source; a bad line is
refused with its reason while the rest is written; an import cut off after the service took a
batch but before its answer arrived, then run again, writes nothing twice; `--dry-run` sends
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats, unique
from tests.environment import run_cli

from agent_memory.client import NO_RETRIES, MemoryClient, RawResponse, TransportError
from agent_memory.client.importing import Importer, read_source, source_fingerprint
from agent_memory.client.transport import HttpTransport
from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

LOCOMO = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Maya",
            "speaker_b": "Joel",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Maya",
                    "dia_id": "D1:1",
                    "text": "I finally adopted a greyhound, her name is Pip.",
                },
                {"speaker": "Joel", "dia_id": "D1:2", "text": "Congrats! Greyhounds are so gentle."},
            ],
            "session_2_date_time": "10:02 am on 21 June, 2023",
            "session_2": [
                {
                    "speaker": "Maya",
                    "dia_id": "D2:1",
                    "text": "Pip ran her first lure course today.",
                    "blip_caption": "a greyhound running on a sandy track",
                },
            ],
            "session_3_date_time": "9:00 am on 1 July, 2023",
            "session_3": [],
        },
        "qa": [],
    }
]

MEM0 = {
    "results": [
        {
            "id": "7f0c-1",
            "memory": "Prefers aisle seats on long flights",
            "user_id": "alex",
            "metadata": {"source": "chat"},
            "categories": ["travel"],
            "created_at": "2025-03-02T09:15:00-08:00",
        },
        {
            "id": "7f0c-2",
            "memory": "Allergic to peanuts",
            "user_id": "alex",
            "created_at": "2025-03-04T18:00:00",
        },
    ]
}


def memories(api: Api, key: str, agent: str) -> list[dict[str, Any]]:
    settled_stats(api, key, agent, timeout_s=20)
    status, body = api("GET", f"/v1/agents/{agent}/memories?limit=100", key=key)
    assert status == 200, body
    return list(body["items"])


class CutOff:
    """A transport that delivers the first ``deliver`` requests and their answers, then delivers
    the next request to the server and loses its answer (a crash right after the service took it)."""

    def __init__(self, deliver: int) -> None:
        self.inner = HttpTransport()
        self.left = deliver

    def send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout_s: float
    ) -> RawResponse:
        answer = self.inner.send(method, url, headers, body, timeout_s)
        if method == "POST":
            self.left -= 1
            if self.left < 0:
                raise ConnectionResetError("connection lost before the answer")
        return answer

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def tenant_key(runtime: LocalRuntime) -> str:
    return runtime.keys.create(NewKey(unique("t"), "pro"))[1]


def test_a_json_lines_history_is_stored_once_and_a_bad_line_is_refused_with_its_reason(
    api: Api, runtime: LocalRuntime, tenant_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file of turns and items for two agents, with one line that is no item and one repeat
    lines = [
        {"agent_id": "a1", "role": "user", "speaker": "Ana", "content": "We moved the sync to Thursdays."},
        {"agent_id": "a1", "content": "Ana's team ships on Fridays.", "occurred_at": "2025-01-03T10:00:00Z"},
        {"agent_id": "a1", "content": ""},
        {"agent_id": "a2", "content": "The VPN certificate expires in May.", "tags": ["ops"]},
        {"agent_id": "a1", "content": "Ana's team ships on Fridays.", "occurred_at": "2025-01-03T10:00:00Z"},
    ]
    source = tmp_path / "history.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n", encoding="utf-8")

    # WHEN it is imported with the CLI
    code, out, err = run_cli(
        capsys, "import", str(source), "--url", runtime.url, "--api-key", tenant_key, "--wait"
    )

    # THEN the summary counts what happened; two lines are refused, each with why
    summary = json.loads(out.splitlines()[-1])
    assert code == 1, err
    assert (summary["read"], summary["written"], summary["merged"], summary["refused"]) == (6, 3, 1, 2)
    reasons = {r["ref"]: r["reason"] for r in summary["refusals"]}
    assert set(reasons) == {"line 3", "line 6"}
    assert "content" in reasons["line 3"] and "not JSON" in reasons["line 6"]
    # AND each memory is stored once, in the agent it named, a turn as a conversation turn
    a1 = {m["content"]: m for m in memories(api, tenant_key, "a1")}
    assert set(a1) == {"We moved the sync to Thursdays.", "Ana's team ships on Fridays."}
    assert a1["We moved the sync to Thursdays."]["kind"] == "conversation"
    assert a1["We moved the sync to Thursdays."]["text"].endswith("Ana: We moved the sync to Thursdays.")
    assert [m["tags"] for m in memories(api, tenant_key, "a2")] == [["ops"]]


def test_a_locomo_file_and_a_mem0_export_keep_their_speakers_users_times_and_sources(
    api: Api, runtime: LocalRuntime, tenant_key: str, tmp_path: Path
) -> None:
    # GIVEN a LoCoMo-style conversation file and a mem0 export
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(LOCOMO), encoding="utf-8")
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(json.dumps(MEM0), encoding="utf-8")

    # WHEN both are imported through the client (mem0's memories into one agent)
    with MemoryClient(runtime.url, tenant_key) as client:
        first = Importer(client).run(read_source(locomo), source=source_fingerprint(locomo))
        second = Importer(client).run(
            read_source(mem0, agent_id="assistant"), source=source_fingerprint(mem0)
        )

    # THEN every turn is stored with its speaker, its session's date and its turn id
    assert (first.written, first.refused, second.written, second.refused) == (3, [], 2, [])
    turns = {m["source"]["message_id"]: m for m in memories(api, tenant_key, "locomo-conv-1")}
    assert set(turns) == {"D1:1", "D1:2", "D2:1"}
    assert turns["D1:2"]["text"] == "[2023-05-08] Joel: Congrats! Greyhounds are so gentle."
    assert turns["D1:2"]["occurred_at"].startswith("2023-05-08T13:56:01")
    assert turns["D2:1"]["content"].endswith("[shared a photo: a greyhound running on a sandy track]")
    assert turns["D1:1"]["conversation_id"] != turns["D2:1"]["conversation_id"]
    # AND mem0's memories keep their user, time (to UTC), categories and id
    kept = {m["content"]: m for m in memories(api, tenant_key, "assistant")}
    aisle = kept["Prefers aisle seats on long flights"]
    assert aisle["user_id"] == "alex" and aisle["tags"] == ["travel"]
    assert aisle["occurred_at"].startswith("2025-03-02T17:15:00")
    assert aisle["metadata"] == {"source": "chat", "mem0_id": "7f0c-1"}


@pytest.mark.parametrize("cut_after", [0, 2])
def test_an_import_cut_off_after_the_service_took_a_batch_resumes_without_writing_twice(
    api: Api, runtime: LocalRuntime, tenant_key: str, tmp_path: Path, cut_after: int
) -> None:
    # GIVEN 25 undated memories, imported 5 a request with a state file
    agent = unique("a")
    source = tmp_path / "notes.jsonl"
    source.write_text(
        "\n".join(json.dumps({"agent_id": agent, "content": f"Note {i}: shelf {i * 7}."}) for i in range(25)),
        encoding="utf-8",
    )
    state = tmp_path / "notes.state.json"
    items = read_source(source)

    # WHEN the connection drops after the service took a batch but before its answer came
    cut = CutOff(cut_after)
    with (
        MemoryClient(runtime.url, tenant_key, transport=cut, retry=NO_RETRIES) as client,
        pytest.raises(TransportError),
    ):
        Importer(client, batch_size=5, state_path=state).run(items, source=source_fingerprint(source))
    # AND the same import is run again
    with MemoryClient(runtime.url, tenant_key) as client:
        summary = Importer(client, batch_size=5, state_path=state).run(
            items, source=source_fingerprint(source)
        )

    # THEN the resumed run skips what was done, and every memory is stored exactly once
    assert summary.skipped == 5 * cut_after
    assert summary.written == 25 and summary.refused == []
    stored = [m["content"] for m in memories(api, tenant_key, agent)]
    assert sorted(stored) == sorted(f"Note {i}: shelf {i * 7}." for i in range(25))


def test_a_dry_run_validates_and_sends_nothing(
    runtime: LocalRuntime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a mem0 export with one memory that has no text
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps([*MEM0["results"], {"id": "x", "memory": ""}]), encoding="utf-8")

    # WHEN it is imported with --dry-run and no key at all
    code, out, _ = run_cli(
        capsys, "import", str(source), "--agent-id", "bot", "--dry-run", "--url", runtime.url
    )

    # THEN it reports what it would write and refuse, and leaves no state file behind
    summary = json.loads(out.splitlines()[-1])
    assert code == 1
    assert (summary["read"], summary["written"], summary["refused"], summary["dry_run"]) == (3, 0, 1, True)
    assert summary["refusals"][0]["ref"] == "mem0 x"
    assert not (tmp_path / ("mem0.json" + ".import-state.json")).exists()
