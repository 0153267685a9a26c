"""Error responses become typed exceptions that keep the contract's error body."""

from __future__ import annotations

import json

import pytest

from agent_memory.client.api_errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    error_from_response,
)


def _body(code: str, message: str, details: list[dict[str, object]] | None = None) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "details": details or []}}).encode()


@pytest.mark.parametrize(
    ("status", "cls"),
    [(400, BadRequestError), (401, AuthenticationError), (403, PermissionDeniedError),
     (404, NotFoundError), (409, ConflictError), (413, PayloadTooLargeError), (429, RateLimitError),
     (500, ServerError), (503, ServerError), (418, ApiError)],
)  # fmt: skip
def test_each_status_has_its_class(status: int, cls: type[ApiError]) -> None:
    # WHEN
    error = error_from_response(status, {}, _body("some_code", "some message"))

    # THEN
    assert type(error) is cls
    assert isinstance(error, ApiError)
    assert (error.status, error.code, error.message) == (status, "some_code", "some message")


def test_the_contract_body_details_and_request_id_are_kept() -> None:
    # GIVEN a 400 with validation details, and API Gateway's request id header (any case)
    body = _body(
        "validation_error",
        "the request is invalid",
        [
            {
                "loc": ["body", "items", 0, "importance"],
                "msg": "Input should be <= 1",
                "type": "less_than_equal",
            }
        ],
    )

    # WHEN it is turned into an error
    error = error_from_response(400, {"X-Amzn-RequestId": "req-123"}, body)

    # THEN everything the service said is there, typed
    assert isinstance(error, BadRequestError)
    assert error.code == "validation_error"
    assert error.request_id == "req-123"
    [detail] = error.details
    assert detail.loc == ["body", "items", 0, "importance"]
    assert detail.type == "less_than_equal"
    assert "req-123" in str(error)


def test_retry_after_travels_with_a_throttling_error() -> None:
    # WHEN
    error = error_from_response(429, {}, _body("throttled", "slow down"), retry_after_s=12.0)

    # THEN
    assert isinstance(error, RateLimitError)
    assert error.retry_after_s == 12.0


def test_a_body_that_is_not_the_contract_still_gives_a_typed_error() -> None:
    # GIVEN
    # a proxy's HTML page, an empty 502, and API Gateway's own {"message": ...}
    html = error_from_response(502, {}, b"<html><body>Bad Gateway</body></html>")
    empty = error_from_response(504, {}, b"")
    # WHEN
    gateway = error_from_response(403, {}, b'{"message": "Missing Authentication Token"}')

    # THEN
    assert isinstance(html, ServerError)
    assert (html.code, html.message) == ("http_502", "HTTP 502")
    assert (empty.code, empty.message) == ("http_504", "HTTP 504")
    assert isinstance(gateway, PermissionDeniedError)
    assert gateway.message == "Missing Authentication Token"
