"""Powertools Logger, Tracer and Metrics, shared by every handler and service.

They live in a neutral module so services can emit business metrics without importing a handler,
and handlers only decorate. Service name and namespace come from ``POWERTOOLS_SERVICE_NAME`` and
``POWERTOOLS_METRICS_NAMESPACE`` (set by the stack and by the local runtime).
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
tracer = Tracer()
metrics = Metrics()


def discard_unpublished_metrics() -> None:
    """Drop what a disabled `Metrics` kept back.

    With ``POWERTOOLS_METRICS_DISABLED`` (the local runtime's default), a flush neither prints nor
    clears, so metrics pile up until Powertools prints them anyway at 100 values. Long-running
    local processes call this after each handler invocation.
    """
    metrics.clear_metrics()


__all__ = ["MetricUnit", "discard_unpublished_metrics", "logger", "metrics", "tracer"]
