"""The stack's DynamoDB tables: on demand, point-in-time recovery, string keys."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from agent_memory_stack.removal import retained


def string_key(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


def on_demand_table(
    scope: Construct,
    construct_id: str,
    partition_key: str,
    sort_key: str | None = None,
    *,
    ttl: str | None = None,
    retain: bool | None = None,
) -> dynamodb.Table:
    """A pay-per-request table with point-in-time recovery, keyed by strings.

    ``retain`` is given for tables of tenants' data (the stack's ``retain_data``): when true, the
    table is kept on delete (`removal.retained`). Without it, the table holds nothing worth keeping
    after the stack and goes with it. No deletion protection: it would stop the rollback of a
    failed first deploy from deleting the table, and the stack would be stuck in
    ``ROLLBACK_FAILED`` instead of ready for a retry. ``ttl`` names the attribute DynamoDB expires items by.
    """
    return dynamodb.Table(
        scope,
        construct_id,
        partition_key=string_key(partition_key),
        sort_key=string_key(sort_key) if sort_key is not None else None,
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        time_to_live_attribute=ttl,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        removal_policy=retained(bool(retain)),
    )
