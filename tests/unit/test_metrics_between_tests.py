"""Metrics a test adds are not carried into the next test of the same process.

Services add Powertools metrics outside any decorated handler, so nothing flushes them in a test
process; at 100 values of one metric Powertools flushes by itself and, with no namespace read at
import, raised in whichever later test added the hundredth value (an order-dependent failure).
The root conftest drops them after every test. The two tests below run in this order, in one
process (pytest keeps a file's order; `--dist loadfile` keeps a file on one worker).
"""

from __future__ import annotations

from agent_memory.observability import MetricUnit, metrics

NAME = "CarriedOverProbe"


def test_a_test_adds_nearly_a_flush_worth_of_one_metric() -> None:
    # WHEN
    for _ in range(99):
        metrics.add_metric(name=NAME, unit=MetricUnit.Count, value=1)

    # THEN
    assert len(metrics.provider.metric_set[NAME]["Value"]) == 99


def test_the_next_test_starts_with_none_of_them() -> None:
    # WHEN
    metrics.add_metric(name=NAME, unit=MetricUnit.Count, value=1)

    # THEN
    assert len(metrics.provider.metric_set[NAME]["Value"]) == 1
