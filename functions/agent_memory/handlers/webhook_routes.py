"""A tenant's webhook (admin scope and no agent binding, decided from the route table before any
route runs: one webhook carries every agent's events): where the tenant's change events are
POSTed, signed. Each route acts on the caller's tenant only: an admin
key never reads, replaces or removes another tenant's webhook, and events go to the webhook of
the tenant that made them (`feed.webhooks`)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_memory import container
from agent_memory.contract.v1_webhooks import WebhookDeleted, WebhookResponse, WebhookUpdate
from agent_memory.handlers.route_support import caller_of, json_response

router = Router()


@router.get("/v1/admin/webhooks")
def get_webhook() -> Response[WebhookResponse]:
    """The caller's tenant's webhook (404 when none is set); of its secret, the last four characters."""
    caller = caller_of(router)
    return json_response(200, WebhookResponse.of(container.current().feed.webhooks.get(caller)))


@router.put("/v1/admin/webhooks")
def put_webhook(body: WebhookUpdate) -> Response[WebhookResponse]:
    """Set or replace the caller's tenant's webhook. The signing secret is answered once, by the
    call that makes it (a new webhook, or ``new_secret``); a replacement keeps the current one."""
    caller = caller_of(router)
    done = container.current().feed.webhooks.put(
        caller,
        body.url,
        event_types=body.event_types,
        include_content=body.include_content,
        secret=None if body.secret is None else body.secret.get_secret_value(),
        new_secret_wanted=body.new_secret,
    )
    return json_response(200, WebhookResponse.of(done.config, done.secret))


@router.delete("/v1/admin/webhooks")
def delete_webhook() -> Response[WebhookDeleted]:
    """Remove the caller's tenant's webhook: no event is delivered from now on (404 when none is set)."""
    caller = caller_of(router)
    container.current().feed.webhooks.delete(caller)
    return json_response(200, WebhookDeleted(deleted=True))
