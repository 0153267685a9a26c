"""Models of the HTTP contract (v1) for a tenant's webhook (``/v1/admin/webhooks``).

The secret travels in a request only when the caller chooses it (``secret``, write-only), and in
an answer only when the call made it (``secret``, shown once); otherwise only its last four
characters are shown.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, SecretStr

from agent_memory.contract.strict import STRICT
from agent_memory.feed.rules.events import SIGNATURE_HEADER, ChangeType
from agent_memory.feed.rules.webhook_config import MAX_URL_CHARS, WebhookConfig


class WebhookUpdate(BaseModel):
    """``PUT /v1/admin/webhooks``: the tenant's webhook, whole."""

    model_config = STRICT

    url: str = Field(
        min_length=1,
        max_length=MAX_URL_CHARS,
        description="Where events are POSTed: https:// to a public host (plain http to localhost on "
        "the local runtime only); no credentials or fragment.",
    )
    event_types: list[ChangeType] | None = Field(
        default=None,
        min_length=1,
        description="The event types delivered; absent or null: every type.",
    )
    include_content: bool = Field(
        default=False,
        strict=True,
        description="Whether deliveries carry the memory's words (`content`); false: ids only.",
    )
    secret: SecretStr | None = Field(
        default=None,
        description="A signing secret of your own (24..256 printable ASCII characters, no spaces); "
        "absent: the current one is kept, or one is made (and answered once) for a new webhook.",
    )
    new_secret: bool = Field(
        default=False,
        strict=True,
        description="Make a new signing secret (answered once) in place of the current one.",
    )


class WebhookResponse(BaseModel):
    url: str
    event_types: list[ChangeType] | None = Field(description="The types delivered; null: every type.")
    include_content: bool
    secret_last4: str = Field(description="The signing secret's last four characters.")
    secret: str | None = Field(
        default=None,
        description="The signing secret, in the answer of the call that made it only: keep it, it is "
        "never shown again.",
    )
    signature_header: str = Field(
        description="The header each delivery is signed in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "
        '"<t>.<body>">`.'
    )
    created_at: datetime
    updated_at: datetime
    updated_by: str = Field(description="The key id that set it last.")

    @classmethod
    def of(cls, config: WebhookConfig, secret: str | None = None) -> WebhookResponse:
        return cls(
            url=config.url,
            event_types=None if config.event_types is None else list(config.event_types),
            include_content=config.include_content,
            secret_last4=config.secret_last4,
            secret=secret,
            signature_header=SIGNATURE_HEADER,
            created_at=config.created_at,
            updated_at=config.updated_at,
            updated_by=config.updated_by,
        )


class WebhookDeleted(BaseModel):
    deleted: bool = Field(description="True: no event is delivered from now on.")
