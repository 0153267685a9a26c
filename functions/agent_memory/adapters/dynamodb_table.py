"""What every DynamoDB adapter shares: its table name, a client made on first use, and how a
failed call is told apart (configuration, or something a retry may pass).

The client is made lazily (not at import, not in the constructor) so a function that never
touches the table never pays for the client, and tests hand in a moto or Stubber client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import ConfigurationError, DependencyError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


class DynamoDbTable:
    #: What the table holds, as an error names it: "the ``holds`` table 'name' does not exist".
    holds: ClassVar[str] = ""
    #: Said after "does not exist": where to look.
    missing_hint: ClassVar[str] = ""
    #: Whether an unexpected failure is named by the service's message (False: by its code or
    #: class only, for a table whose requests a message could echo).
    echo_errors: ClassVar[bool] = True

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

    def _read_item(self, what: str, key: dict[str, Any], **params: Any) -> dict[str, Any] | None:
        """The item at ``key`` (None when there is none), read consistently: a change is seen by
        the next read, not one replica later. A failure to ``what`` is `_error`'s."""
        try:
            item = self.client.get_item(TableName=self.table_name, Key=key, ConsistentRead=True, **params)
        except (ClientError, BotoCoreError) as exc:
            raise self._error(what, exc) from exc
        return item.get("Item")

    def _error(self, what: str, exc: ClientError | BotoCoreError) -> Exception:
        """A missing table or a refused call is configuration; anything else may pass if retried."""
        code = str(exc.response.get("Error", {}).get("Code", "")) if isinstance(exc, ClientError) else ""
        if code == "ResourceNotFoundException":
            return ConfigurationError(
                f"cannot {what}: the {self.holds} table {self.table_name!r} does not exist{self.missing_hint}"
            )
        if code in ("AccessDeniedException", "UnrecognizedClientException"):
            return ConfigurationError(f"cannot {what} in {self.table_name!r}: {code} (check IAM)")
        detail = exc if self.echo_errors else code or type(exc).__name__
        return DependencyError(f"cannot {what} in {self.table_name!r}: {detail}")
