"""`TenantSettingsStore` on a DynamoDB table, for the deployed stack.

Table schema (created by the CDK stack): partition key ``tenant_id`` (S); attributes ``settings``
(S, JSON of `TenantSettings`), ``version`` (N), ``updated_at`` (S, ISO 8601), ``updated_by`` (S);
on-demand billing, no indexes. A table of its own: every function reads it (through a per-tenant
cache) and only the API function writes it, which IAM can then say exactly.

A tenant's embedding spaces (`EmbeddingState`) are a second item of the same table, under
``<tenant_id>#embedding`` (no tenant id holds a ``#``): attributes ``state`` (S, JSON) and
``version`` (N). The settings service and the re-embedding job write it, conditionally on the
version read, like the settings.

Calls: GetItem (strongly consistent: an admin's change is seen by the next cache miss), PutItem
with a condition on the version read (`ConflictError` when another change came first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.dynamodb_table import DynamoDbTable
from agent_memory.errors import ConflictError
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.tenant_settings import StoredSettings, TenantSettings


class DynamoDbTenantSettingsStore(DynamoDbTable):
    holds = "settings"
    echo_errors = False

    def get_settings(self, tenant_id: str) -> StoredSettings | None:
        item = self._read_item("read tenant settings", {"tenant_id": {"S": tenant_id}})
        if item is None:
            return None
        return StoredSettings(
            tenant_id=tenant_id,
            settings=TenantSettings.model_validate_json(item["settings"]["S"]),
            version=int(item["version"]["N"]),
            updated_at=datetime.fromisoformat(item["updated_at"]["S"]),
            updated_by=item["updated_by"]["S"],
        )

    def put_settings(
        self, tenant_id: str, settings: TenantSettings, expected_version: int, actor: str, at: datetime
    ) -> StoredSettings:
        stored = StoredSettings.after(tenant_id, settings, expected_version, actor, at)
        item = {
            "tenant_id": {"S": tenant_id},
            "settings": {"S": settings.model_dump_json()},
            "version": {"N": str(stored.version)},
            "updated_at": {"S": at.isoformat()},
            "updated_by": {"S": actor},
        }
        self._put_if_version(
            item,
            expected_version,
            "store tenant settings",
            "the settings changed since they were read: read them again and retry",
        )
        return stored

    def get_embedding_state(self, tenant_id: str) -> EmbeddingState | None:
        item = self._read_item("read the embedding state", {"tenant_id": {"S": _state_key(tenant_id)}})
        if item is None:
            return None
        state = EmbeddingState.model_validate_json(item["state"]["S"])
        return state.model_copy(update={"version": int(item["version"]["N"])})

    def put_embedding_state(
        self, tenant_id: str, state: EmbeddingState, expected_version: int
    ) -> EmbeddingState:
        stored = state.model_copy(update={"version": expected_version + 1})
        item = {
            "tenant_id": {"S": _state_key(tenant_id)},
            "state": {"S": stored.model_dump_json()},
            "version": {"N": str(stored.version)},
        }
        self._put_if_version(
            item,
            expected_version,
            "store the embedding state",
            "the tenant's embedding state changed since it was read",
        )
        return stored

    def _put_if_version(self, item: dict[str, Any], expected_version: int, what: str, conflict: str) -> None:
        """PutItem if the stored item's version is still ``expected_version`` (0: none stored);
        else `ConflictError` with ``conflict``, nothing written."""
        condition = (
            {"ConditionExpression": "attribute_not_exists(tenant_id)"}
            if expected_version == 0
            else {
                "ConditionExpression": "version = :read",
                "ExpressionAttributeValues": {":read": {"N": str(expected_version)}},
            }
        )
        try:
            self.client.put_item(TableName=self.table_name, Item=item, **condition)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise ConflictError(conflict) from None
            raise self._error(what, exc) from exc
        except BotoCoreError as exc:
            raise self._error(what, exc) from exc


def _state_key(tenant_id: str) -> str:
    return f"{tenant_id}#embedding"
