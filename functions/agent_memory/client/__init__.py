"""A typed Python client for the agent-memory HTTP API (v1).

    from agent_memory.client import MemoryClient

    with MemoryClient("http://127.0.0.1:8000", api_key="am_...") as memory:
        memory.remember("support-bot", "Alice moved the launch to March 3.", importance=0.8)
        for hit in memory.search("support-bot", "when is the launch?").results:
            print(hit.text)
        # the tenant's shared knowledge: documents put once, found by every agent of the tenant
        memory.put_document("adr-12", version="v3", title="ADR-12: failover", text=markdown)
        memory.search("support-bot", "how do we fail over?", sources=["shared"])

Requests and responses are the contract's models (`agent_memory.contract.v1`); errors are typed
(`ApiError` and its subclasses carry the contract's error body and the request id).
`SigV4Auth` (in `agent_memory.client.sigv4`) signs requests for IAM-authorized deployments.
"""

from agent_memory.client.api_errors import (
    AgentMemoryClientError,
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TransportError,
    UnexpectedResponseError,
)
from agent_memory.client.client import MemoryClient
from agent_memory.client.credentials import ApiKeyAuth, Auth, NoAuth
from agent_memory.client.retry import NO_RETRIES, RetryPolicy
from agent_memory.client.transport import HttpTransport, RawResponse, Transport

__all__ = [
    "NO_RETRIES",
    "AgentMemoryClientError",
    "ApiError",
    "ApiKeyAuth",
    "Auth",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "HttpTransport",
    "MemoryClient",
    "NoAuth",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "RawResponse",
    "RetryPolicy",
    "ServerError",
    "Transport",
    "TransportError",
    "UnexpectedResponseError",
]
