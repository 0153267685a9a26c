"""Typed domain errors.

Services raise these; the API handler maps each to the documented HTTP error body in one place
(`handlers.api`), so no code path ever inspects an error message to decide a status.
"""

from __future__ import annotations

from typing import Any


class AgentMemoryError(Exception):
    """Base class. ``code`` and ``status`` are what the HTTP contract exposes.

    A subclass names its own in its class line (``class X(AgentMemoryError, code=..., status=...)``)
    so each error is one line of data, and one that names neither inherits its parent's.
    """

    code = "internal_error"
    status = 500

    def __init_subclass__(cls, *, code: str | None = None, status: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if status is not None:
            cls.status = status

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class ValidationFailedError(AgentMemoryError, code="validation_error", status=400):
    """A request the contract refuses; ``details`` name each field at fault."""


class InvalidTimeKeyError(ValidationFailedError):
    """A time key that is malformed or names no real period."""


class PayloadTooLargeError(AgentMemoryError, code="payload_too_large", status=413):
    """A request over the contract's size limits."""


class UnauthorizedError(AgentMemoryError, code="unauthorized", status=401):
    """No API key, or one that is unknown or revoked."""


class ForbiddenError(AgentMemoryError, code="forbidden", status=403):
    """A known key that may not do this (a missing scope, another tenant's resource)."""


class NotFoundError(AgentMemoryError, code="not_found", status=404):
    """Nothing by that id (or nothing live) for the caller's agent."""


class ConflictError(AgentMemoryError, code="conflict", status=409):
    """The request clashes with what is already stored (an API key registered twice)."""


class IdempotencyKeyReusedError(ConflictError, code="idempotency_key_reused"):
    """An ``Idempotency-Key`` sent again with a different request: replaying would be a lie."""


class IdempotencyInProgressError(ConflictError, code="idempotency_in_progress"):
    """The first request with this ``Idempotency-Key`` is still running: retry in a moment."""


class ThrottledError(AgentMemoryError, code="throttled", status=429):
    """Too many requests for now: retry after a pause."""


class DependencyError(AgentMemoryError, code="dependency_unavailable", status=503):
    """An outside system (store, queue, model) failed; retrying later may succeed."""


class ProviderKeyRejectedError(AgentMemoryError, code="provider_key_rejected", status=424):
    """The tenant's own model provider refused the tenant's own key (revoked, wrong, or without
    access to the model). No retry helps and the operator's key is never used instead: the
    tenant sets a working key (``PUT /v1/admin/settings``). The message never holds the key."""


class ConfigurationError(AgentMemoryError, code="configuration_error", status=500):
    """Settings or stored state that cannot work together (e.g. an embedding dimension mismatch)."""
