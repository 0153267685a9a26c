"""Idempotency records in DynamoDB, for the deployed stack: Powertools' own persistence layer.

Table schema (created by the CDK stack, `cdk/agent_memory_stack/idempotency.py`): partition key
``id`` (S, ``agent-memory.write#<sha256 of tenant and key>``: the client's key is never stored
as sent), ``expiration`` (N, epoch seconds) as the TTL attribute, on-demand billing. Powertools
writes ``status``, ``in_progress_expiration``, ``data`` (the first response) and ``validation``
(the request's fingerprint) with a conditional put, so two requests with one key cannot both run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


def dynamodb_layer(table_name: str, client: DynamoDBClient | None = None) -> DynamoDBPersistenceLayer:
    """The layer over ``table_name`` with Powertools' default attribute names (the stack's)."""
    return DynamoDBPersistenceLayer(table_name=table_name, boto3_client=client)
