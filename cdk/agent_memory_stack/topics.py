"""The topics table: each tenant's topic dictionary and the unknown topics its writes named.

Item layout in `adapters/dynamodb_topics.py`: partition key ``tenant_id``, sort key ``sk``
(``dictionary`` or ``proposal#<topic>``), TTL attribute ``expires_at`` (proposals only). A table of
its own, not items in the tenants table, so that only the authorizer can read API keys and the
functions that read topics cannot. The API function reads and replaces dictionaries and counts
and lists proposals; the search function only reads a dictionary (to widen a query's words).
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.environment import settings_env
from agent_memory_stack.tables import on_demand_table

#: The API function: dictionary get / put / delete, proposal counts (update), listing (query).
API_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:DeleteItem",
    "dynamodb:UpdateItem",
    "dynamodb:Query",
)
#: The search function: the dictionary, on a cache miss.
SEARCH_ACTIONS = ("dynamodb:GetItem",)


class TopicsTable(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, retain: bool) -> None:
        super().__init__(scope, construct_id)
        # Dictionaries are tenants' configuration: kept with the data unless told otherwise.
        self.table = on_demand_table(self, "Table", "tenant_id", "sk", ttl="expires_at", retain=retain)

    def environment(self) -> dict[str, str]:
        return settings_env(topics="dynamodb", topics_table=self.table.table_name)

    def grant_api(self, function: lambda_.IFunction) -> None:
        """Item calls and a Query on this table only (no scans, no indexes)."""
        function.add_to_role_policy(
            iam.PolicyStatement(actions=list(API_ACTIONS), resources=[self.table.table_arn])
        )

    def grant_search(self, function: lambda_.IFunction) -> None:
        function.add_to_role_policy(
            iam.PolicyStatement(actions=list(SEARCH_ACTIONS), resources=[self.table.table_arn])
        )
