"""The bulk-ingest benchmark's warm-up (benchmarks/ingest.py `warm_up`): before the idle searches
are timed, the server's writer has stored a write, so the start of a writer in a process of its
own is not timed as idle search latency."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import Api

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import ingest
from agent_memory.local.server import LocalRuntime


def test_the_warm_up_returns_once_the_writer_has_stored_its_write(
    runtime: LocalRuntime, api: Api, new_key: Callable[..., tuple[str, str, str]]
) -> None:
    # GIVEN a running server and a tenant's key
    _, _, key = new_key()

    # WHEN the benchmark warms it up
    ingest.warm_up(runtime.url, key, ["what is warm?"])

    # THEN the warm-up agent's write is stored, none pending
    status, stats = api("GET", f"/v1/agents/{ingest.WARM_UP_AGENT}/stats", key=key)
    assert status == 200, stats
    assert (stats["records"]["working"], stats["pending_writes"]) == (1, 0)
