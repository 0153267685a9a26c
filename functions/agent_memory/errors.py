"""Typed domain errors.

Services raise these; the API handler maps each to the documented HTTP error body in one place
(`handlers.api`), so no code path ever inspects an error message to decide a status.
"""

from __future__ import annotations

from typing import Any


class AgentMemoryError(Exception):
    """Base class. ``code`` and ``status`` are what the HTTP contract exposes."""

    code = "internal_error"
    status = 500

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class ValidationFailedError(AgentMemoryError):
    code = "validation_error"
    status = 400


class InvalidTimeKeyError(ValidationFailedError):
    """A time key that is malformed or names no real period."""


class PayloadTooLargeError(AgentMemoryError):
    code = "payload_too_large"
    status = 413


class UnauthorizedError(AgentMemoryError):
    code = "unauthorized"
    status = 401


class ForbiddenError(AgentMemoryError):
    code = "forbidden"
    status = 403


class NotFoundError(AgentMemoryError):
    code = "not_found"
    status = 404


class ConflictError(AgentMemoryError):
    code = "conflict"
    status = 409


class IdempotencyKeyReusedError(ConflictError):
    """An ``Idempotency-Key`` sent again with a different request: replaying would be a lie."""

    code = "idempotency_key_reused"


class IdempotencyInProgressError(ConflictError):
    """The first request with this ``Idempotency-Key`` is still running: retry in a moment."""

    code = "idempotency_in_progress"


class ThrottledError(AgentMemoryError):
    code = "throttled"
    status = 429


class DependencyError(AgentMemoryError):
    """An outside system (store, queue, model) failed; retrying later may succeed."""

    code = "dependency_unavailable"
    status = 503


class ConfigurationError(AgentMemoryError):
    """Settings or stored state that cannot work together (e.g. an embedding dimension mismatch)."""

    code = "configuration_error"
    status = 500
