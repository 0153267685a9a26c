"""How a request proves who sends it: an API key (the contract's default) or AWS SigV4.

Auth is computed for every attempt, not once per client: a SigV4 signature carries a timestamp
and must be fresh on a retry, and refreshed credentials must be picked up as they rotate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class Auth(Protocol):
    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> Mapping[str, str]:
        """Headers to add to this request, given everything else it will send."""
        ...


class ApiKeyAuth:
    """``Authorization: Bearer <key>``; the key never appears in ``repr`` or logs."""

    def __init__(self, api_key: str) -> None:
        if not api_key or not api_key.strip():
            raise ValueError("api_key is empty")
        self._header = f"Bearer {api_key.strip()}"

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> Mapping[str, str]:
        return {"Authorization": self._header}

    def __repr__(self) -> str:
        return "ApiKeyAuth(api_key=***)"


class NoAuth:
    """Sends no credentials (a proxy that authenticates on its own, or tests of the 401 path)."""

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> Mapping[str, str]:
        return {}
