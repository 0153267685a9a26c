"""The idempotency table: first answers to writes sent with an ``Idempotency-Key``.

Powertools' DynamoDB persistence layer owns the item layout (`adapters/dynamodb_idempotency.py`):
partition key ``id`` (a hash of tenant and key), TTL attribute ``expiration``. Records live a day
(``AGENT_MEMORY_IDEMPOTENCY_TTL_S``), so nothing here is worth keeping after the stack. Only the
API function may use it, and only with the four item calls Powertools makes.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.environment import settings_env
from agent_memory_stack.tables import on_demand_table

#: What Powertools' layer calls: a conditional put, a consistent get, the update on success and
#: the delete when the request failed.
ACTIONS = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")


class IdempotencyTable(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.table = on_demand_table(self, "Table", "id", ttl="expiration")

    def environment(self, function_timeout: Duration) -> dict[str, str]:
        """Settings of a function that uses the table. A request that dies holds its key for at
        most the function's timeout; then a retry with the same key may run."""
        return settings_env(
            idempotency="dynamodb",
            idempotency_table=self.table.table_name,
            idempotency_in_progress_s=int(function_timeout.to_seconds()),
        )

    def grant(self, function: lambda_.IFunction) -> None:
        """Item access to this table only (no scans, no queries, no indexes)."""
        function.add_to_role_policy(
            iam.PolicyStatement(actions=list(ACTIONS), resources=[self.table.table_arn])
        )
