"""A tenant's webhook: where its change events are POSTed, which ones, with or without content,
and the secret they are signed with.

One webhook per tenant, replaced whole (``PUT /v1/admin/webhooks``). Its URL is HTTPS to a name
or a public address; HTTPS or plain HTTP to this machine only where the operator allows loopback
(``AGENT_MEMORY_OUTBOUND_ALLOW_LOOPBACK``, so a receiver beside the local runtime can listen).
Address literals are checked here as a socket reads them; what a name resolves to is checked by
the outbound policy when the webhook is set and again on every delivery (`tenancy.rules.outbound`). The
secret signs every delivery (`feed.rules.events.signature`); it is shown once, when it is made,
and never again (no answer, log line or audit event holds it).

Pure (no I/O): `feed.webhooks` reads, checks and stores them.
"""

from __future__ import annotations

import secrets
import urllib.parse
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.feed.rules.events import ChangeType
from agent_memory.tenancy.rules.outbound import OutboundPolicy, literal_address

#: The longest URL a webhook may have.
MAX_URL_CHARS = 2048
#: A secret the caller chooses: long enough to resist guessing, short enough for a header.
MIN_SECRET_CHARS = 24
MAX_SECRET_CHARS = 256
#: How a made secret begins, so a leaked one is recognisable in a scan.
SECRET_PREFIX = "whsec_"


class WebhookConfig(BaseModel):
    """A tenant's webhook as stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str
    url: str
    secret: str = Field(repr=False)
    #: The event types delivered; None: every type.
    event_types: tuple[ChangeType, ...] | None = None
    #: Whether deliveries carry the memory's words (``content``) or its ids only.
    include_content: bool = False
    created_at: datetime
    updated_at: datetime
    updated_by: str

    def wants(self, kind: ChangeType) -> bool:
        return self.event_types is None or kind in self.event_types

    @property
    def secret_last4(self) -> str:
        return self.secret[-4:]


def new_secret() -> str:
    """A fresh signing secret: 256 random bits, URL-safe."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def check_secret(secret: str) -> str:
    """A secret the caller chose: printable, no spaces, of a sensible length. The messages name
    no part of it (error bodies never echo a secret)."""
    if not MIN_SECRET_CHARS <= len(secret) <= MAX_SECRET_CHARS:
        raise ValueError(f"secret must be {MIN_SECRET_CHARS}..{MAX_SECRET_CHARS} characters")
    if any(c.isspace() or not c.isprintable() or not c.isascii() for c in secret):
        raise ValueError("secret must be printable ASCII characters without spaces")
    return secret


def check_url(url: str, *, allow_loopback_http: bool) -> str:
    """A webhook URL, normalised (scheme and host in lower case): ``https://`` to a name or a
    public address, no credentials, no fragment; plain ``http://`` to this machine only when
    ``allow_loopback_http`` (the local runtime). Whitespace and control characters are refused
    outright: the URL parser drops some of them silently."""
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"url must be at most {MAX_URL_CHARS} characters")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ValueError("url must not contain spaces or control characters")
    parts = urllib.parse.urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not host:
        raise ValueError("url must be an https:// URL")
    if "@" in parts.netloc or parts.fragment or "#" in url:
        raise ValueError("url must not hold credentials or a fragment")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("url has an invalid port") from None
    # An address literal in any form a socket reads (`10.1`, `2130706433`, `localhost.`) is
    # checked here; a name is resolved and checked by the outbound policy (`tenancy.rules.outbound`).
    address = literal_address(host)
    if scheme == "http":
        if not (allow_loopback_http and address is not None and address.is_loopback):
            raise ValueError("url must be https:// (plain http only to this machine, where allowed)")
    elif address is not None and OutboundPolicy(allow_loopback=allow_loopback_http).refusal(address):
        raise ValueError("url must name a public host, not a private or loopback address")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urllib.parse.urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def backoff_s(attempt: int, base_s: float, max_s: float) -> float:
    """How long a delivery that failed on its ``attempt``-th try waits before the next one:
    doubling from ``base_s``, at most ``max_s``."""
    return float(min(max_s, base_s * 2 ** min(max(attempt, 1) - 1, 30)))


def where(url: str) -> str:
    """What the audit trail says of a URL: its scheme, host and port (a path or query may hold a
    token of the receiver's)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


__all__ = ["WebhookConfig", "backoff_s", "check_secret", "check_url", "new_secret", "where"]
