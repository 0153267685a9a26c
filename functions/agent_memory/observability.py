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

__all__ = ["MetricUnit", "logger", "metrics", "tracer"]
