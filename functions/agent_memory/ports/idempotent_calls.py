"""Idempotency keys: a request run once per key, its first answer replayed for a while."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Idempotency", "IdempotentResult"]


@dataclass(frozen=True, slots=True)
class IdempotentResult:
    """What an idempotent call answered, and whether it was a replay of an earlier call's answer."""

    result: dict[str, Any]
    replayed: bool


class Idempotency(Protocol):
    """Runs a request once per idempotency key and replays its first answer for a while.

    ``key`` names one request (the caller scopes it, e.g. by tenant); ``fingerprint`` is a hash of
    what the request asked. The first call with a key runs ``compute`` and keeps its JSON result;
    a later call with the same key and fingerprint gets that result back without running anything.
    The same key with another fingerprint raises `IdempotencyKeyReusedError`; while the first call
    is still running, `IdempotencyInProgressError`. When ``compute`` raises, nothing is kept, so
    a retry runs again. A store that cannot be reached raises `DependencyError`.
    """

    def run(self, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]) -> IdempotentResult: ...
