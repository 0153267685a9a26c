"""`WebhookStore` on a DynamoDB table, for the deployed stack.

Table schema (created by the CDK stack): partition key ``tenant_id`` (S); attributes ``url``
(S), ``secret`` (S), ``event_types`` (S, JSON list; absent: every type), ``include_content``
(BOOL), ``created_at``, ``updated_at`` (S, ISO 8601), ``updated_by`` (S); on-demand billing,
encrypted at rest. Its own table: the API function writes it, the webhook delivery function
reads it, and no other function may touch it (the secret signs every delivery).

Calls: GetItem (strongly consistent: a webhook set is used by the next delivery), PutItem,
DeleteItem (``ReturnValues=ALL_OLD``: whether there was one).
"""

from __future__ import annotations

import json
from datetime import datetime

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.dynamodb_table import DynamoDbTable
from agent_memory.errors import DependencyError
from agent_memory.feed.rules.events import ChangeType
from agent_memory.feed.rules.webhook_config import WebhookConfig


class DynamoDbWebhookStore(DynamoDbTable):
    def _error(self, what: str, exc: ClientError | BotoCoreError) -> Exception:
        return _error(what, exc)

    def get_webhook(self, tenant_id: str) -> WebhookConfig | None:
        item = self._read_item("read the webhook", {"tenant_id": {"S": tenant_id}})
        if item is None:
            return None
        types = item.get("event_types")
        return WebhookConfig(
            tenant_id=tenant_id,
            url=item["url"]["S"],
            secret=item["secret"]["S"],
            event_types=None if types is None else tuple(ChangeType(t) for t in json.loads(types["S"])),
            include_content=bool(item["include_content"]["BOOL"]),
            created_at=datetime.fromisoformat(item["created_at"]["S"]),
            updated_at=datetime.fromisoformat(item["updated_at"]["S"]),
            updated_by=item["updated_by"]["S"],
        )

    def put_webhook(self, config: WebhookConfig) -> None:
        item = {
            "tenant_id": {"S": config.tenant_id},
            "url": {"S": config.url},
            "secret": {"S": config.secret},
            "include_content": {"BOOL": config.include_content},
            "created_at": {"S": config.created_at.isoformat()},
            "updated_at": {"S": config.updated_at.isoformat()},
            "updated_by": {"S": config.updated_by},
        }
        if config.event_types is not None:
            item["event_types"] = {"S": json.dumps([t.value for t in config.event_types])}
        try:
            self.client.put_item(TableName=self.table_name, Item=item)  # type: ignore[arg-type]
        except (ClientError, BotoCoreError) as exc:
            raise _error("store the webhook", exc) from exc

    def delete_webhook(self, tenant_id: str) -> bool:
        try:
            answer = self.client.delete_item(
                TableName=self.table_name, Key={"tenant_id": {"S": tenant_id}}, ReturnValues="ALL_OLD"
            )
        except (ClientError, BotoCoreError) as exc:
            raise _error("delete the webhook", exc) from exc
        return bool(answer.get("Attributes"))


def _error(what: str, exc: Exception) -> DependencyError:
    """The operation and the service's error code only: never the item (it holds the secret)."""
    code = (
        exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else type(exc).__name__
    )
    return DependencyError(f"could not {what} ({code})")
