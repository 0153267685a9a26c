"""Clients for the AWS calls a request waits on (reranking a search, finding PII in a write).

Such a call must answer in seconds or give up: adaptive retries (which also slow the client down
when the service pushes back), four attempts, and a 10-second read timeout. Built when the adapter
is, unless a test hands one in (a client wrapped in botocore's Stubber).
"""

from __future__ import annotations

from typing import Any, Literal

from botocore.config import Config

#: The services called on a request's path.
RequestPathService = Literal["bedrock-agent-runtime", "comprehend"]


def request_path_client(service: RequestPathService, region: str | None, client: Any = None) -> Any:
    """``client`` when given; else a ``service`` client for ``region`` with those retries and timeout."""
    if client is not None:
        return client
    import boto3

    config = Config(retries={"mode": "adaptive", "max_attempts": 4}, read_timeout=10)
    return boto3.client(service, region_name=region, config=config)
