"""`WebhookSender` with the standard library: one POST per delivery, a timeout, no redirects.

A redirect is not followed (a 3xx is an answer like any other, and not a 2xx): the signed body
goes only where the tenant said. The answer's body is read (at most 64 KiB) and dropped.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

#: How much of an endpoint's answer is read before the connection is closed.
MAX_ANSWER_BYTES = 64 * 1024


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class UrllibWebhookSender:
    def __init__(self) -> None:
        self._opener = urllib.request.build_opener(_NoRedirects())

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with self._opener.open(request, timeout=timeout_s) as response:
                response.read(MAX_ANSWER_BYTES)
                return int(response.status)
        except urllib.error.HTTPError as exc:  # an answer, just not a 2xx
            exc.close()
            return int(exc.code)
