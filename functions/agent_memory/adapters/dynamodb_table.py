"""What every DynamoDB adapter shares: its table name, and a client made on first use.

The client is made lazily (not at import, not in the constructor) so a function that never
touches the table never pays for the client, and tests hand in a moto or Stubber client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


class DynamoDbTable:
    def __init__(self, table_name: str, client: DynamoDBClient | None = None) -> None:
        self.table_name = table_name
        self._client = client

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client("dynamodb", config=Config(retries={"mode": "standard"}))
        return self._client
