"""`agent-memory import` killed in the middle, as a user's Ctrl-C or an OOM kill does it: the
process is sent SIGKILL while it waits for the answer to a batch the service has already taken,
then the same command is run again. A LoCoMo file and a mem0 export each end with every memory
stored exactly once.

The kill lands at a known point: the import talks to the server through a proxy on loopback that
forwards every request, answers the first batches, and holds the answer of the next one (the
service has stored it) until the process is gone. So the state file says the batches before it were
written, the batch the service took is not recorded there, and the second run must neither skip
what the service never took nor write twice what it did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, settled_stats, unique

from agent_memory.local.server import LocalRuntime
from agent_memory.tenancy.rules.keys import NewKey

#: Items a request, and the batches answered before the one whose answer never comes.
BATCH = 4
ANSWERED = 2


class HoldingProxy:
    """Forwards requests to ``upstream``; after ``answered`` POSTs, forwards the next one and holds
    its answer until `release` (the importing process is killed meanwhile)."""

    def __init__(self, upstream: str, answered: int) -> None:
        self.held = threading.Event()
        self._release = threading.Event()
        self._left = answered
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._forward(self.rfile.read(length))

            def _forward(self, body: bytes | None) -> None:
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                request = urllib.request.Request(
                    upstream + self.path, data=body, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:
                        status, payload, kind = (
                            answer.status,
                            answer.read(),
                            answer.headers.get("Content-Type"),
                        )
                except urllib.error.HTTPError as error:
                    status, payload, kind = error.code, error.read(), error.headers.get("Content-Type")
                if body is not None and proxy._hold():
                    proxy.held.set()
                    proxy._release.wait(60)  # the service took the batch; its answer never leaves
                    return
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _hold(self) -> bool:
        with self._lock:
            self._left -= 1
            return self._left < 0

    def release(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def proxy(runtime: LocalRuntime) -> Iterator[HoldingProxy]:
    held = HoldingProxy(runtime.url, ANSWERED)
    yield held
    held.release()


def _locomo(sample: str) -> tuple[list[dict[str, Any]], set[str]]:
    turns = [
        {
            "speaker": "Maya" if i % 2 == 0 else "Joel",
            "dia_id": f"D1:{i + 1}",
            "text": f"Turn {i}: shelf {i * 7}.",
        }
        for i in range(18)
    ]
    conversation = {
        "speaker_a": "Maya",
        "speaker_b": "Joel",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns,
    }
    return [{"sample_id": sample, "conversation": conversation, "qa": []}], {t["text"] for t in turns}


def _mem0() -> tuple[dict[str, Any], set[str]]:
    memories = [
        {
            "id": f"m-{i}",
            "memory": f"Prefers seat {i} on flight {i * 3}",
            "user_id": "alex",
            "created_at": f"2025-03-{i + 1:02d}T09:15:00Z",
        }
        for i in range(18)
    ]
    return {"results": memories}, {m["memory"] for m in memories}


def _import(source: Path, url: str, key: str, *extra: str) -> subprocess.Popen[str]:
    """``agent-memory import`` in a process of its own, as a user runs it."""
    env = {**os.environ, "AGENT_MEMORY_API_KEY": key}
    command = [sys.executable, "-m", "agent_memory.local.cli", "import", str(source), "--url", url]
    return subprocess.Popen(
        [*command, "--batch-size", str(BATCH), "--quiet", *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("kind", ["locomo", "mem0"])
def test_an_import_killed_while_the_service_holds_a_batch_is_stored_once_after_a_rerun(
    api: Api, runtime: LocalRuntime, proxy: HoldingProxy, tmp_path: Path, kind: str
) -> None:
    # GIVEN a LoCoMo file or a mem0 export of 18 memories, imported 4 a request
    key = runtime.keys.create(NewKey(unique("t"), "pro"))[1]
    agent = unique("a")
    source = tmp_path / f"history-{kind}.json"
    if kind == "locomo":
        data, expected = _locomo(agent)
        source.write_text(json.dumps(data), encoding="utf-8")
        stored_in, extra = f"locomo-{agent}", ()
    else:
        data, expected = _mem0()
        source.write_text(json.dumps(data), encoding="utf-8")
        stored_in, extra = agent, ("--agent-id", agent)

    # WHEN the import is killed while the service has taken its third batch and not yet answered
    first = _import(source, proxy.url, key, *extra)
    assert proxy.held.wait(60), first.communicate(timeout=5)
    first.kill()
    first.wait(timeout=10)
    assert first.returncode == -9
    proxy.release()
    # AND the same command is run again, straight to the server
    second = _import(source, runtime.url, key, *extra, "--wait")
    out, err = second.communicate(timeout=120)

    # THEN the second run skipped the two batches recorded and wrote the rest, the held one again
    summary = json.loads(out.splitlines()[-1])
    assert second.returncode == 0, err
    assert summary["skipped"] == ANSWERED * BATCH
    assert summary["read"] == len(expected) and summary["refused"] == 0
    # AND every memory is stored exactly once
    settled_stats(api, key, stored_in, timeout_s=30)
    status, body = api("GET", f"/v1/agents/{stored_in}/memories?limit=100", key=key)
    assert status == 200, body
    contents = [m["content"] for m in body["items"]]
    assert sorted(contents) == sorted(expected)
