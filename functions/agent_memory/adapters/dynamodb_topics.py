"""`TopicStore` on a DynamoDB table, for the deployed stack.

A table of its own rather than items in the tenants table: the tenants table is keyed by the hash
of an API key and listed by scanning (`agent-memory keys list`, retention's plans), and only the
authorizer reads it. Keeping topics apart keeps that scan to keys, and lets the API functions
touch topics without being able to read a single key.

Table schema (created by the CDK stack):

- partition key ``tenant_id`` (S);
- sort key ``sk`` (S): ``"dictionary"`` for the tenant's dictionary, ``"proposal#<topic>"`` for
  an unknown topic (normalised);
- dictionary item: ``terms`` (S, JSON ``{canonical: [synonyms]}``), ``updated_at`` (S, ISO 8601);
- proposal item: ``topic`` (S), ``count`` (N, added to atomically), ``first_seen`` and
  ``last_seen`` (S, ISO 8601 UTC), ``expires_at`` (N, epoch seconds, the table's TTL attribute:
  `PROPOSAL_TTL_DAYS` after the last sighting, so a name no longer used leaves the list);
- billing mode on-demand (PAY_PER_REQUEST); no indexes.

Calls: GetItem (a dictionary, on a cache miss), PutItem / DeleteItem (an admin replacing it),
UpdateItem (one per distinct unknown topic of a write), Query (listing proposals).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.dynamodb_table import DynamoDbTable
from agent_memory.knowledge.rules.topic_dictionary import PROPOSAL_TTL_DAYS, TopicDictionary, TopicProposal
from agent_memory.ports import StoredTopicDictionary

if TYPE_CHECKING:
    pass

DICTIONARY_SK = "dictionary"
PROPOSAL_PREFIX = "proposal#"
#: Proposals read at most per listing (Query pages of up to 1 MB): the TTL keeps a tenant's list
#: to the names in use, this bounds a listing whatever happens.
MAX_PROPOSALS_READ = 10_000
_PROPOSAL_ATTRIBUTES = ("count", "topic", "last_seen", "expires_at", "first_seen")


class DynamoDbTopicStore(DynamoDbTable):
    """`TopicStore` on the topics table (schema in the module docstring)."""

    holds = "topics"

    def get_dictionary(self, tenant_id: str) -> StoredTopicDictionary | None:
        # An admin's change is seen by the next cache miss, not one replica later.
        item = self._read_item(
            "read a topic dictionary", {"tenant_id": {"S": tenant_id}, "sk": {"S": DICTIONARY_SK}}
        )
        if item is None:
            return None
        return StoredTopicDictionary(
            TopicDictionary.from_json(item["terms"]["S"]), datetime.fromisoformat(item["updated_at"]["S"])
        )

    def put_dictionary(self, tenant_id: str, dictionary: TopicDictionary, at: datetime) -> None:
        key = {"tenant_id": {"S": tenant_id}, "sk": {"S": DICTIONARY_SK}}
        try:
            if not dictionary:
                self.client.delete_item(TableName=self.table_name, Key=key)
                return
            self.client.put_item(
                TableName=self.table_name,
                Item={**key, "terms": {"S": dictionary.to_json()}, "updated_at": {"S": at.isoformat()}},
            )
        except (ClientError, BotoCoreError) as exc:
            raise self._error("store a topic dictionary", exc) from exc

    def record_proposals(self, tenant_id: str, counts: Mapping[str, int], at: datetime) -> None:
        expires = int((at + timedelta(days=PROPOSAL_TTL_DAYS)).timestamp())
        for topic, n in sorted(counts.items()):
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key={"tenant_id": {"S": tenant_id}, "sk": {"S": PROPOSAL_PREFIX + topic}},
                    UpdateExpression=(
                        "ADD #count :n SET #topic = :topic, #last_seen = :at, #expires_at = :expires, "
                        "#first_seen = if_not_exists(#first_seen, :at)"
                    ),
                    ExpressionAttributeNames={f"#{name}": name for name in _PROPOSAL_ATTRIBUTES},
                    ExpressionAttributeValues={
                        ":n": {"N": str(n)},
                        ":topic": {"S": topic},
                        ":at": {"S": at.isoformat()},
                        ":expires": {"N": str(expires)},
                    },
                )
            except (ClientError, BotoCoreError) as exc:
                raise self._error("count an unknown topic", exc) from exc

    def list_proposals(self, tenant_id: str, now: datetime) -> list[TopicProposal]:
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#tenant_id = :tenant AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#tenant_id": "tenant_id", "#sk": "sk"},
            "ExpressionAttributeValues": {":tenant": {"S": tenant_id}, ":prefix": {"S": PROPOSAL_PREFIX}},
        }
        # TTL deletion runs late (within days): expired items are skipped here.
        horizon = now.timestamp()
        proposals: list[TopicProposal] = []
        try:
            while len(proposals) < MAX_PROPOSALS_READ:
                page = self.client.query(**params)
                for item in page.get("Items", []):
                    if float(item["expires_at"]["N"]) > horizon:
                        proposals.append(_proposal(item))
                if "LastEvaluatedKey" not in page:
                    break
                params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except (ClientError, BotoCoreError) as exc:
            raise self._error("list unknown topics", exc) from exc
        return proposals[:MAX_PROPOSALS_READ]


def _proposal(item: dict[str, Any]) -> TopicProposal:
    return TopicProposal(
        topic=item["topic"]["S"],
        count=int(item["count"]["N"]),
        first_seen=datetime.fromisoformat(item["first_seen"]["S"]),
        last_seen=datetime.fromisoformat(item["last_seen"]["S"]),
    )
