"""The search benchmark's in-service path on a small store: the scripts are not run by the suite,
so a change to the search use case that breaks them would otherwise go unseen until `make bench`."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from tests.fakes import FixedClock
from tests.unit.services.conftest import make_world

# The benchmark scripts import their helpers as top-level modules (they run as scripts).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import search_latency
from agent_memory.contract.v1 import WriteRequest
from agent_memory.model.caller import Caller


def test_a_timed_service_search_finds_the_memory_and_splits_its_time(
    tmp_path: Path, clock: FixedClock
) -> None:
    # GIVEN one memory of the benchmark's agent, and the service wrapped as the benchmark wraps it
    world = make_world(tmp_path, clock)
    occurred = world.clock.now() - timedelta(days=1)
    request = WriteRequest.model_validate(
        {"items": [{"content": "The launch moved to March 3.", "occurred_at": occurred}]}
    )
    world.write.accept(Caller(search_latency.TENANT), search_latency.AGENT, request.to_new_memories())
    world.drain()
    timer = search_latency._Timed()
    service = type(world.search)(
        search_latency._TimedStore(world.store, timer),
        search_latency._TimedEmbedder(world.embedder, timer),
        world.clock,
        world.search._weights,
    )

    # WHEN one search is timed
    total_ms, split, hits = search_latency.timed_service_search(service, timer, {"query": "launch date"})

    # THEN it found the memory, and its time is split into the wrapped steps and the rest
    assert hits == 1
    assert {"embed", "store_search", "record_access", "other"} <= set(split)
    assert total_ms >= split["embed"] + split["store_search"]
