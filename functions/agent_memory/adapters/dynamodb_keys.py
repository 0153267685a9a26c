"""API keys in the DynamoDB tenants table, for the deployed stack.

The Lambda authorizer reads it (`lookup`, one GetItem per cache miss); `agent-memory keys
--table NAME` writes it. Like the local store it keeps only the SHA-256 of each key, so a
leaked table (or backup) cannot be replayed against the API.

Table schema (created by the CDK stack):

- partition key ``key_hash`` (S): the hex SHA-256 of the key (`hash_api_key`); no sort key;
- ``key_id`` (S): the public id of the key (``key_...``), what `list` shows and `revoke` takes;
- ``tenant_id`` (S), ``plan`` (S);
- ``scopes`` (S) and ``agents`` (S): space-separated, sorted; ``agents`` is ``""`` when the key
  may touch every agent of its tenant (the authorizer context carries lists the same way);
- ``created_at`` (S): ISO 8601 UTC; ``revoked_at`` (S): ISO 8601 UTC, absent while active.
  Revoking keeps the item, so `list` still shows who had access and until when;
- global secondary index ``key_id-index``: partition key ``key_id`` (S), projection
  ``KEYS_ONLY``. `revoke` finds the item by its id there instead of scanning the table;
- billing mode on-demand (PAY_PER_REQUEST); no TTL attribute.

Read grants (an admin let agent R read agent O's memory) share the table: one item per tenant
and reader, ``key_hash`` = ``"reads#{tenant}#{reader}"`` (no key's hex hash looks like it), with
``owners`` (SS) and no ``key_id``, so `list` and the key-id index never see it. `lookup` of a key
bound to agents reads those items (one BatchGetItem, strongly consistent like the key itself) and
names their owners in the caller's ``reads``.

`lookup` reads strongly consistently: the authorizer caches answers (misses too), so an
eventually consistent read that missed a key created a moment ago would lock that key out for
a whole cache period. A revocation reaches the API once the caches expire: the authorizer's
in-process cache and API Gateway's authorizer cache (both a short TTL).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.dynamodb_table import DynamoDbTable
from agent_memory.errors import ConflictError
from agent_memory.model.caller import Caller
from agent_memory.tenancy.rules.keys import KeyInfo, NewKey, hash_api_key

if TYPE_CHECKING:
    pass

KEY_ID_INDEX = "key_id-index"


class DynamoDbKeyStore(DynamoDbTable):
    """`KeyStore` on the DynamoDB tenants table (schema in the module docstring)."""

    holds = "tenants"
    missing_hint = " in this account and region (check the table name, AWS_REGION and the AWS profile)"

    def create(self, new: NewKey) -> tuple[str, str]:
        """Store a new key (or the given one) and return ``(key_id, key)``; the key is not kept.

        The put is conditional: registering a key that is already in the table is a
        `ConflictError`, never a silent overwrite of another tenant's key.
        """
        issued = new.issue(datetime.now(UTC))
        info = issued.info
        item = {
            "key_hash": {"S": issued.key_hash},
            "key_id": {"S": info.key_id},
            "tenant_id": {"S": info.tenant_id},
            "plan": {"S": info.plan},
            "scopes": {"S": info.scopes},
            "agents": {"S": info.agents},
            "created_at": {"S": info.created_at},
        }
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item=item,
                ConditionExpression="attribute_not_exists(#key_hash)",
                ExpressionAttributeNames={"#key_hash": "key_hash"},
            )
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                raise ConflictError("that API key is already registered") from exc
            raise self._error("store an API key", exc) from exc
        except BotoCoreError as exc:
            raise self._error("store an API key", exc) from exc
        return info.key_id, issued.key

    def ensure(self, key: str, tenant_id: str, plan: str, admin: bool) -> None:
        """Register ``key`` unless it already is (as `LocalKeyStore.ensure`)."""
        if self.lookup(key) is None:
            self.create(NewKey(tenant_id, plan, admin=admin, key=key))

    def lookup(self, key: str) -> Caller | None:
        item = self._read_item(
            "look up an API key",
            {"key_hash": {"S": hash_api_key(key)}},
            **_projection("key_id", "tenant_id", "plan", "scopes", "agents", "revoked_at"),
        )
        if item is None or "revoked_at" in item:
            return None
        tenant_id, agents = item["tenant_id"]["S"], frozenset(_s(item, "agents").split())
        return Caller(
            tenant_id=tenant_id,
            key_id=item["key_id"]["S"],
            plan=item["plan"]["S"],
            scopes=frozenset(_s(item, "scopes").split()),
            agents=agents,
            reads=self._reads(tenant_id, agents),
        )

    def _reads(self, tenant_id: str, readers: frozenset[str]) -> frozenset[str]:
        """The agents ``readers`` were granted read access to (one batch read; none unbound)."""
        if not readers:
            return frozenset()
        keys = [{"key_hash": {"S": _grant_key(tenant_id, r)}} for r in sorted(readers)]
        owners: set[str] = set()
        try:
            for start in range(0, len(keys), 100):
                request: dict[str, Any] = {
                    self.table_name: {"Keys": keys[start : start + 100], "ConsistentRead": True}
                }
                while request:
                    answer = self.client.batch_get_item(RequestItems=request)
                    for found in answer.get("Responses", {}).get(self.table_name, []):
                        owners.update(found.get("owners", {}).get("SS", []))
                    request = answer.get("UnprocessedKeys") or {}
        except (ClientError, BotoCoreError) as exc:
            raise self._error("read the read grants of an API key", exc) from exc
        return frozenset(owners)

    def grant_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        return self._change_grant("ADD", tenant_id, reader, owner)

    def revoke_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        return self._change_grant("DELETE", tenant_id, reader, owner)

    def _change_grant(self, action: str, tenant_id: str, reader: str, owner: str) -> bool:
        """ADD or DELETE ``owner`` in the reader's set; whether the set changed (from the old item)."""
        try:
            answer = self.client.update_item(
                TableName=self.table_name,
                Key={"key_hash": {"S": _grant_key(tenant_id, reader)}},
                UpdateExpression=f"{action} #owners :owner SET #tenant_id = :tenant, #reader = :reader",
                ExpressionAttributeNames=_names("owners", "tenant_id", "reader"),
                ExpressionAttributeValues={
                    ":owner": {"SS": [owner]},
                    ":tenant": {"S": tenant_id},
                    ":reader": {"S": reader},
                },
                ReturnValues="ALL_OLD",
            )
        except (ClientError, BotoCoreError) as exc:
            raise self._error("change a read grant", exc) from exc
        before = set(answer.get("Attributes", {}).get("owners", {}).get("SS", []))
        return (owner not in before) if action == "ADD" else (owner in before)

    def readers_of(self, tenant_id: str, owner: str) -> list[str]:
        """A Scan of the tenant's grant items: an admin's question, asked rarely."""
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "FilterExpression": "begins_with(#key_hash, :prefix) AND contains(#owners, :owner)",
            "ExpressionAttributeNames": _names("key_hash", "owners", "reader"),
            "ExpressionAttributeValues": {":prefix": {"S": f"reads#{tenant_id}#"}, ":owner": {"S": owner}},
            "ProjectionExpression": "#reader",
        }
        readers: list[str] = []
        try:
            while True:
                page = self.client.scan(**params)
                readers.extend(_s(item, "reader") for item in page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    break
                params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except (ClientError, BotoCoreError) as exc:
            raise self._error("list read grants", exc) from exc
        return sorted(r for r in readers if r)

    def list(self) -> list[KeyInfo]:
        """Every key, oldest first. A Scan: the table holds one small item per key."""
        params: dict[str, Any] = {
            "TableName": self.table_name,
            **_projection(*KeyInfo.__slots__),
        }
        infos: list[KeyInfo] = []
        try:
            while True:
                page = self.client.scan(**params)
                # read-grant items have no key_id: they are not keys
                infos.extend(_info(item) for item in page.get("Items", []) if "key_id" in item)
                if "LastEvaluatedKey" not in page:
                    break
                params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except (ClientError, BotoCoreError) as exc:
            raise self._error("list API keys", exc) from exc
        return sorted(infos, key=lambda info: (info.created_at, info.key_id))

    def revoke(self, key_id: str) -> bool:
        """Mark the key revoked (the item stays, for the record). False if no active key has that id.

        The id is found on the ``key_id-index`` GSI, which is eventually consistent: a key
        created within the last second may not be found there yet.
        """
        try:
            hashes = [
                item["key_hash"]["S"]
                for item in self.client.query(
                    TableName=self.table_name,
                    IndexName=KEY_ID_INDEX,
                    KeyConditionExpression="#key_id = :key_id",
                    ExpressionAttributeNames=_names("key_id"),
                    ExpressionAttributeValues={":key_id": {"S": key_id}},
                ).get("Items", [])
            ]
        except (ClientError, BotoCoreError) as exc:
            raise self._error("find an API key", exc) from exc
        revoked = False
        for key_hash in hashes:
            revoked = self._revoke_hash(key_hash) or revoked
        return revoked

    def _revoke_hash(self, key_hash: str) -> bool:
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"key_hash": {"S": key_hash}},
                UpdateExpression="SET #revoked_at = :now",
                # Only an active key that still exists: never resurrect a deleted item as a stub.
                ConditionExpression="attribute_exists(#key_hash) AND attribute_not_exists(#revoked_at)",
                ExpressionAttributeNames=_names("key_hash", "revoked_at"),
                ExpressionAttributeValues={":now": {"S": datetime.now(UTC).isoformat()}},
            )
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise self._error("revoke an API key", exc) from exc
        except BotoCoreError as exc:
            raise self._error("revoke an API key", exc) from exc
        return True


def _grant_key(tenant_id: str, reader: str) -> str:
    """The item of one reader's grants: ``#`` is in no id, and no hex hash starts with ``r``."""
    return f"reads#{tenant_id}#{reader}"


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _names(*attributes: str) -> dict[str, str]:
    """Placeholders for attribute names: some of ours may be DynamoDB reserved words."""
    return {f"#{name}": name for name in attributes}


def _projection(*attributes: str) -> dict[str, Any]:
    return {
        "ProjectionExpression": ", ".join(f"#{name}" for name in attributes),
        "ExpressionAttributeNames": _names(*attributes),
    }


def _s(item: dict[str, Any], name: str) -> str:
    value = item.get(name)
    return str(value["S"]) if value and "S" in value else ""


def _info(item: dict[str, Any]) -> KeyInfo:
    return KeyInfo(
        key_id=_s(item, "key_id"),
        tenant_id=_s(item, "tenant_id"),
        plan=_s(item, "plan"),
        scopes=_s(item, "scopes"),
        agents=_s(item, "agents"),
        created_at=_s(item, "created_at"),
        revoked_at=_s(item, "revoked_at") or None,
    )
