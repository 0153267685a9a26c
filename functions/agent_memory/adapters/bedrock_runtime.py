"""The ``bedrock-runtime`` client shared by the Bedrock adapters (embedder, summarizer).

Injected in tests (a client wrapped in botocore's Stubber); otherwise built on first use, so a
function that never embeds or summarizes never pays for it, and built once under a lock, because
the writer embeds from a thread pool. Each client gets a boto3 session of its own: building
clients from boto3's shared default session is not thread-safe.
"""

from __future__ import annotations

import threading
from typing import Any

from botocore.config import Config


class BedrockRuntime:
    """One lazily built ``bedrock-runtime`` client with the caller's timeouts and retries."""

    def __init__(
        self,
        client: Any | None,
        region: str | None,
        *,
        read_timeout: int,
        max_attempts: int,
        max_pool_connections: int = 10,
    ) -> None:
        self._client = client
        self._region = region
        self._config = Config(
            retries={"mode": "adaptive", "max_attempts": max_attempts},
            connect_timeout=5,
            read_timeout=read_timeout,
            max_pool_connections=max_pool_connections,
        )
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.session.Session().client(
                        "bedrock-runtime", region_name=self._region, config=self._config
                    )
        return self._client
