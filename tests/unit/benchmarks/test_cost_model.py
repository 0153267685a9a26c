"""The cost model's arithmetic (benchmarks/cost_model.py): what the serverless store promises idle
(at or under $10 a month, nothing billed by the hour), crossovers that are where two totals meet,
and the two rejected stores (S3 Vectors, LanceDB on S3) priced from the table, with what they
cannot do said beside their figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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


def test_idle_the_two_rejected_stores_cost_the_fixed_items_and_what_they_keep_stored() -> None:
    # GIVEN
    idle = cost_model.WORKLOADS[0]
    fixed = sum(cost_model.fixed_common().values())
    # WHEN
    s3v, lance = cost_model.s3_vectors(idle), cost_model.lancedb(idle)
    # THEN S3 Vectors bills nothing more than storage (none, with no agent), LanceDB its image in ECR
    assert sum(s3v.values()) == pytest.approx(fixed)
    image = cost_model.LANCE_IMAGE_GB * cost_model.PRICES["ecr_gb_month"]
    assert sum(lance.values()) == pytest.approx(fixed + image)


def test_s3_vectors_storage_is_each_agents_kept_vectors_at_the_tables_price() -> None:
    # GIVEN
    w = cost_model.Workload("", 3, 100, 0)
    # WHEN
    lines = cost_model.s3_vectors(w)
    # THEN
    kept = 3 * 100 * cost_model.KEPT_DAYS
    expected = kept * cost_model.S3V_VECTOR_BYTES / 1024**3 * cost_model.PRICES["s3_vectors_gb_month"]
    assert lines["S3 Vectors storage"] == pytest.approx(expected)


def test_a_put_of_one_vector_is_billed_as_the_minimum_put() -> None:
    # GIVEN
    w = cost_model.Workload("", 1, 100, 0)
    # WHEN
    put = cost_model.s3_vectors(w)["S3 Vectors PUTs (128 KB billed at least)"]
    # THEN
    puts = 100 * cost_model.DAYS_PER_MONTH
    assert put == pytest.approx(puts * 128 * 1024 / 1024**3 * cost_model.PRICES["s3_vectors_put_per_gb"])


def test_a_query_is_priced_as_awss_own_example_prices_it() -> None:
    """AWS's S3 Vectors pricing example 1: indexes of 250,000 vectors of 5.17 KB (vector, key,
    filterable metadata), a million queries: $1.93 + $1.44 processed, $2.50 of calls."""
    # WHEN
    dollars = 1_000_000 * cost_model.s3_vectors_query_dollars(250_000, 5.17 * 1024)
    # THEN
    assert dollars == pytest.approx(1.93 + 1.44 + 2.50, abs=0.01)


def test_every_store_costs_more_as_writes_or_searches_grow() -> None:
    # GIVEN
    counts = (0, 10, 100, 1_000, 10_000)
    for name, price in cost_model.STORES.values():
        # WHEN
        by_writes = [sum(price(cost_model.Workload("", 10, n, 100)).values()) for n in counts]
        by_searches = [sum(price(cost_model.Workload("", 10, 100, n)).values()) for n in counts]
        # THEN
        assert by_writes == sorted(by_writes) and by_writes[0] < by_writes[-1], name
        assert by_searches == sorted(by_searches) and by_searches[0] < by_searches[-1], name


def test_what_a_store_cannot_do_is_said_beside_its_figures() -> None:
    # GIVEN
    small, busy = cost_model.WORKLOADS[1], cost_model.Workload("busy", 1, 500_000, 0)
    # WHEN
    report = cost_model.report(10)
    # THEN S3 Vectors has no words to search, LanceDB no zip package, the file a write ceiling
    said = report["workloads"][1]["cannot"]
    assert said["opensearch"] == [] and said["serverless"] == []
    assert "no lexical search" in said["s3vectors"][0]
    assert "container image" in said["lancedb"][0]
    assert cost_model.cannot("s3vectors", busy)[-1].startswith("past one agent's write ceiling")
    assert not any("ceiling" in line for line in cost_model.cannot("s3vectors", small))


def test_each_rejected_stores_crossover_is_where_opensearch_stops_costing_more() -> None:
    for price in (cost_model.s3_vectors, cost_model.lancedb):
        # WHEN
        n = cost_model.crossover(10_000, price)
        # THEN
        assert n is not None and n > 1
        before, at = (cost_model.Workload("", k, 100, 100) for k in (n - 1, n))
        assert sum(cost_model.opensearch(before).values()) > sum(price(before).values())
        assert sum(cost_model.opensearch(at).values()) <= sum(price(at).values())
