"""CORS for the operator console's origin, added to every answer of the API function.

The console deployed as a static site (S3 + CloudFront) is another origin than the API, so the
browser reads an answer only if it names that origin. Exactly one origin is allowed, the
console's (``AGENT_MEMORY_CONSOLE_ORIGIN``, set by the stack when the console is deployed);
nothing is allowed when it is unset. The headers go on the final response, errors included,
so the console can show why a request failed. Preflight (``OPTIONS``) is answered by API
Gateway itself, before the authorizer.
"""

from __future__ import annotations

from typing import Any

#: Response headers a cross-origin page may read besides the CORS-safelisted ones.
EXPOSED_HEADERS = "Idempotent-Replayed"


def with_console_cors(response: dict[str, Any], event: dict[str, Any], origin: str | None) -> dict[str, Any]:
    """``response`` with CORS headers when the request came from ``origin``; else unchanged."""
    if not origin:
        return response
    sent = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    if sent.get("origin") != origin:
        return response
    added = {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": EXPOSED_HEADERS,
        "Vary": "Origin",
    }
    out = dict(response)
    out["headers"] = {**(response.get("headers") or {}), **added}
    if response.get("multiValueHeaders") is not None:
        out["multiValueHeaders"] = {**response["multiValueHeaders"], **{k: [v] for k, v in added.items()}}
    return out
