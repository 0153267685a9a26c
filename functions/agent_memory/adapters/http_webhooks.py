"""`WebhookSender` through the outbound policy: one POST per delivery, a timeout, no redirects.

Every delivery goes through `adapters.outbound_http.send`: the receiver's host is resolved and
checked at the moment of sending (a name that has come to resolve to a private address since the
webhook was set is refused), and the connection is pinned to the address checked. A redirect is
not followed (a 3xx is an answer like any other, and not a 2xx): the signed body goes only where
the tenant said. The answer's body is read (at most 64 KiB) and dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_memory.adapters.outbound_http import send
from agent_memory.tenancy.rules.outbound import OutboundGuard

#: How much of an endpoint's answer is read before the connection is closed.
MAX_ANSWER_BYTES = 64 * 1024


class GuardedWebhookSender:
    def __init__(self, guard: OutboundGuard) -> None:
        self._guard = guard

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        """The receiver's status; raises (`OutboundRefusedError`, OSError) when there is no answer,
        which the delivery counts as a failure to retry."""
        return send(self._guard, "POST", url, body, headers, timeout_s, MAX_ANSWER_BYTES).status
