"""What every SQS producer here shares: the default client and a batch send that retries.

`SendMessageBatch` can succeed as a call yet fail some entries. Entries that failed on the
service's side are retried with exponential backoff; entries refused as the sender's fault are
not (the queue will never accept them). Whatever still failed is returned for the caller to
report in its own terms.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

MAX_BATCH_ENTRIES = 10


def default_client() -> SQSClient:
    import boto3
    from botocore.config import Config

    return boto3.client("sqs", config=Config(retries={"mode": "standard", "max_attempts": 5}))


@dataclass
class BatchSender:
    """One queue's batch sender; ``what`` names the queue in errors ("the write queue")."""

    queue_url: str
    what: str
    client_: SQSClient | None = None
    max_retries: int = 3
    backoff_s: float = 0.1
    sleep: Callable[[float], None] = field(default=time.sleep)

    @property
    def client(self) -> SQSClient:
        if self.client_ is None:
            self.client_ = default_client()
        return self.client_

    def send(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send up to 10 entries (each with a unique ``Id``); returns the entries' failures left."""
        pending = {e["Id"]: e for e in entries}
        permanent: list[dict[str, Any]] = []
        transient: list[dict[str, Any]] = []
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response: Any = self.client.send_message_batch(
                    QueueUrl=self.queue_url,
                    Entries=list(pending.values()),  # type: ignore[arg-type]
                )
            except (ClientError, BotoCoreError) as exc:
                raise DependencyError(f"{self.what} refused {len(pending)} message(s): {exc}") from exc
            failed = response.get("Failed", [])
            permanent += [f for f in failed if f.get("SenderFault")]
            transient = [f for f in failed if not f.get("SenderFault")]
            pending = {f["Id"]: pending[f["Id"]] for f in transient}
            if not pending:
                break
        return permanent + transient


class SqsQueue:
    """What the SQS adapters share: the queue's URL, and a `BatchSender` that retries."""

    #: How errors name the queue ("the write queue is unavailable").
    label = "the queue"

    def __init__(
        self,
        queue_url: str,
        client: SQSClient | None = None,
        *,
        max_retries: int = 3,
        backoff_s: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.queue_url = queue_url
        self._sender = BatchSender(queue_url, self.label, client, max_retries, backoff_s, sleep)

    @property
    def client(self) -> SQSClient:
        return self._sender.client
