"""Example payloads shared across the suite: the HTTP contract's examples, the sample events in
`events/` (API Gateway, SQS, scheduler, CloudFormation), SQS events as the event source mapping
builds them, and memory records for the store and the services."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agent_memory.model.ids import content_hash
from agent_memory.model.queries import Hit
from agent_memory.model.records import MemoryRecord

#: The sample events at the repository root (`events/`), as the handlers receive them in AWS.
EVENTS = Path(__file__).resolve().parents[1] / "events"

#: The full write item of the HTTP contract's example (ARCHITECTURE.md, "HTTP contract"), verbatim.
CONTRACT_ITEM: dict[str, Any] = {
    "content": "Alice moved the launch to March 3.",
    "role": "user",
    "occurred_at": "2026-11-20T14:03:00Z",
    "conversation_id": "c-42",
    "topic": "launch date",
    "importance": 0.8,
    "kind": "decision",
    "tags": ["launch"],
    "ttl_days": 30,
    "user_id": "u-7",
    "source": {"platform": "slack", "channel_id": "C1", "message_id": "m-9"},
    "links": [{"entity_type": "person", "entity_id": "alice", "weight": 1.0}],
    "metadata": {"any": "json"},
}
#: The search example of the HTTP contract, verbatim.
CONTRACT_SEARCH: dict[str, Any] = {
    "query": "when is the launch?",
    "grain": "working",
    "min_days_ago": 0,
    "max_days_ago": 365,
    "max_results": 10,
    "as_of": "2026-11-22T00:00:00Z",
    "kinds": ["decision"],
    "tags": [],
    "user_id": None,
}

#: When `memory_record` says a memory happened, unless told otherwise.
RECORDED_AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)

#: Sentences far apart, so no write merges into another (each is written at most once): what the
#: stateful write-race and staleness machines write.
FACTS = tuple(
    f"{who} {what} on {where}."
    for who in ("Alice", "Bruno", "Chen", "Dana")
    for what, where in (
        ("booked the movers", "the Lisbon office"),
        ("renewed the vault code 7391", "the Porto branch"),
        ("paid invoice 4410", "the hosting contract"),
    )
)


def load_event(name: str, **overrides: Any) -> dict[str, Any]:
    """A sample event from `events/`, with top-level fields replaced by ``overrides``."""
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    event.update(overrides)
    return event


def sqs_event(messages: Iterable[dict[str, Any]], queue: str = "writes.fifo") -> dict[str, Any]:
    """What the SQS event source mapping hands a function for one receive of ``messages``
    (as ``receive_message`` returns them, with ``AttributeNames=["All"]``)."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m["Attributes"],
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:us-east-1:123456789012:{queue}",
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


def memory_record(
    record_id: str,
    content: str,
    *,
    tenant: str = "t1",
    agent: str = "a1",
    at: datetime = RECORDED_AT,
    **fields: Any,
) -> MemoryRecord:
    """A working memory of ``tenant``/``agent`` that happened (and was written) ``at``; ``fields``
    set or override any other field (``content_hash``, ``created_at``, ``grain``, ...)."""
    base: dict[str, Any] = {
        "id": record_id,
        "tenant_id": tenant,
        "agent_id": agent,
        "content": content,
        "content_hash": content_hash(content),
        "created_at": at,
        "updated_at": at,
        "occurred_at": at,
    }
    return MemoryRecord(**{**base, **fields})


def said_hit(record_id: str, content: str, days: int, score: float, **fields: Any) -> Hit:
    """A search hit of a turn said ``days`` after `RECORDED_AT` in a conversation of its own
    (``fields`` override), scored ``score`` (its similarity too): what the search-time orderings
    of statements read."""
    fields.setdefault("conversation_id", f"c-{record_id}")
    record = memory_record(record_id, content, at=RECORDED_AT + timedelta(days=days), **fields)
    return Hit(record=record, score=score, similarity=score, recency=1.0)


#: Turns of one speaker that say something else than what a test asks about.
OTHER_TURNS = [
    "I cleaned out the garage, found my old skateboard from school.",
    "We're hosting my in-laws for the weekend, wish me luck.",
    "I finally fixed the squeaky door with a bit of olive oil, ha.",
    "Went to a jazz concert on Friday, the saxophonist was incredible.",
    "The kids built a massive pillow fort in the living room, chaos.",
]


def api_event(
    method: str, path: str, body: Any = None, authorizer: dict[str, str] | None = None
) -> dict[str, Any]:
    """An API Gateway proxy event for the API handler: ``body`` sent as JSON, the caller as the
    authorizer's context (tenant ``acme``, read, write and forget by default)."""
    return {
        "httpMethod": method,
        "path": path,
        "resource": path,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body) if body is not None else None,
        "requestContext": {
            "authorizer": authorizer or {"tenant_id": "acme", "key_id": "k1", "scopes": "read write forget"},
            "requestId": "r-1",
        },
        "queryStringParameters": None,
        "pathParameters": None,
    }
