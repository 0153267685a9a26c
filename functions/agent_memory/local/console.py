"""The operator console's static files, as the local runtime serves them under ``/console``.

The files are package data (``agent_memory/console``), so an installed wheel serves the same
console as a checkout. Only files that exist in that folder are served, by exact name: no path
is ever joined from the request, so ``..`` and encoded slashes cannot reach anything else. The
page is same-origin with the API here; `CONTENT_SECURITY_POLICY` allows nothing else, no inline
script and no third-party host.
"""

from __future__ import annotations

from importlib import resources
from urllib.parse import unquote

PREFIX = "/console"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def is_console_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _files() -> dict[str, bytes]:
    folder = resources.files("agent_memory") / "console"
    return {
        entry.name: entry.read_bytes()
        for entry in folder.iterdir()
        if entry.is_file() and "." + entry.name.rsplit(".", 1)[-1] in CONTENT_TYPES
    }


def console_response(method: str, path: str) -> tuple[int, bytes, dict[str, str]]:
    """(status, body, headers) for a request under `PREFIX`."""
    if method not in ("GET", "HEAD"):
        return (
            405,
            b'{"error":{"code":"method_not_allowed","message":"GET only","details":[]}}',
            {"Allow": "GET, HEAD"},
        )
    if path == PREFIX:
        return 308, b"", {"Location": PREFIX + "/"}
    name = unquote(path[len(PREFIX) + 1 :]) or "index.html"
    body = _files().get(name)
    if body is None:
        return 404, b'{"error":{"code":"not_found","message":"no such file","details":[]}}', {}
    suffix = "." + name.rsplit(".", 1)[-1]
    return 200, body, {"Content-Type": CONTENT_TYPES[suffix], **SECURITY_HEADERS}
