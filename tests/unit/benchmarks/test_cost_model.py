"""The cost model's arithmetic (benchmarks/cost_model.py): what the serverless store promises idle
(at or under $10 a month, nothing billed by the hour), and a crossover that is where the two
totals meet."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import cost_model


def test_the_serverless_store_idles_at_ten_dollars_or_less_with_nothing_billed_by_the_hour() -> None:
    # WHEN
    idle = cost_model.serverless(cost_model.WORKLOADS[0])
    # THEN
    assert sum(idle.values()) <= 10.0
    assert not any("OpenSearch" in line for line in idle)
    assert sum(cost_model.opensearch(cost_model.WORKLOADS[0]).values()) > 100.0


def test_the_crossover_is_where_opensearch_stops_costing_more() -> None:
    # WHEN
    n = cost_model.crossover(10_000)
    # THEN OpenSearch costs more one agent before it, and no more from it on
    assert n is not None and n > 1
    before, at = (cost_model.Workload("", k, 100, 100) for k in (n - 1, n))
    assert sum(cost_model.opensearch(before).values()) > sum(cost_model.serverless(before).values())
    assert sum(cost_model.opensearch(at).values()) <= sum(cost_model.serverless(at).values())


def test_a_workload_past_one_agents_write_ceiling_is_said_to_be_so() -> None:
    # GIVEN
    busy = cost_model.Workload("busy", 1, 500_000, 0)
    # WHEN / THEN
    assert not cost_model.serverless_fits(busy)
    assert cost_model.serverless_fits(cost_model.WORKLOADS[1])
