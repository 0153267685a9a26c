"""Starting a retention run in the retention function: an asynchronous Lambda invoke.

``POST /v1/admin/retention`` runs in the API function, which has 20 s; a run over every tenant
may take the retention function's 15 minutes. So the route hands the run over with
``InvocationType=Event`` (Lambda queues it and answers 202 at once; a failed run is retried and
then sent to the function's on-failure destination, like a scheduled one) and answers 202.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import DependencyError


class LambdaRetentionStarter:
    """`RetentionStarter` that invokes the retention function asynchronously."""

    def __init__(self, function_name: str, client: Any | None = None) -> None:
        self.function_name = function_name
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = boto3.client("lambda")
        return self._client

    def start(self, reason: str, tenants: Sequence[str] | None = None) -> None:
        try:
            response = self.client.invoke(
                FunctionName=self.function_name,
                InvocationType="Event",
                Payload=json.dumps(
                    {"reason": reason, **({"tenants": list(tenants)} if tenants is not None else {})}
                ).encode(),
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"the retention function could not be started: {exc}") from exc
        if response.get("StatusCode") != 202:
            raise DependencyError(
                f"the retention function was not queued: status {response.get('StatusCode')}"
            )
