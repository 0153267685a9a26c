"""Typed errors of the client: one class per kind of failure a caller handles differently.

Every HTTP error carries the contract's error body (``code``, ``message``, ``details``), the status
and the request id, so a caller can branch on the class (or on ``code``) and log the request id,
without ever parsing a message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping

from pydantic import ValidationError

from agent_memory.contract.v1 import ErrorDetail, ErrorResponse

#: Response headers that carry a request id (API Gateway REST, HTTP APIs, and common proxies).
REQUEST_ID_HEADERS = ("x-amzn-requestid", "x-request-id", "apigw-requestid", "x-amz-apigw-id")


class AgentMemoryClientError(Exception):
    """Base class of everything the client raises on purpose."""


class TransportError(AgentMemoryClientError):
    """No HTTP answer at all (connection refused or reset, timeout), after every retry."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts


class UnexpectedResponseError(AgentMemoryClientError):
    """A success status whose body is not what the contract says (a proxy, or a version skew)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ApiError(AgentMemoryClientError):
    """The service answered with an error status; the contract's error body is kept whole."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[ErrorDetail] | None = None,
        request_id: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.request_id = request_id
        self.retry_after_s = retry_after_s


class BadRequestError(ApiError):
    """400: the request broke the contract (``details`` says where)."""


class AuthenticationError(ApiError):
    """401: no key, or an unknown or revoked one."""


class PermissionDeniedError(ApiError):
    """403: the key lacks the scope, or is bound to other agents."""


class NotFoundError(ApiError):
    """404: no such memory for this agent (or it was forgotten)."""


class ConflictError(ApiError):
    """409."""


class PayloadTooLargeError(ApiError):
    """413: the body is over the contract's size limit."""


class RateLimitError(ApiError):
    """429: throttled; ``retry_after_s`` says when to come back, when the service said."""


class ServerError(ApiError):
    """5xx: the service or a dependency failed; retrying later may succeed."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
}


def request_id_of(headers: Mapping[str, str]) -> str | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    return next((lowered[h] for h in REQUEST_ID_HEADERS if h in lowered), None)


def error_from_response(
    status: int, headers: Mapping[str, str], body: bytes, retry_after_s: float | None = None
) -> ApiError:
    """The typed error for one error response. A body that is not the contract's (a proxy's HTML
    page, an empty 502) still gives a typed error, with a code made from the status."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    request_id = request_id_of(headers)
    try:
        parsed = ErrorResponse.model_validate_json(body).error
    except (ValidationError, ValueError):
        text = body.decode("utf-8", "replace").strip()
        message = text[:500] if text and not text.startswith("<") else f"HTTP {status}"
        with contextlib.suppress(ValueError, KeyError, TypeError):  # API Gateway's own: {"message"}
            message = str(json.loads(body)["message"])
        return cls(status, f"http_{status}", message, [], request_id, retry_after_s)
    return cls(status, parsed.code, parsed.message, parsed.details, request_id, retry_after_s)
