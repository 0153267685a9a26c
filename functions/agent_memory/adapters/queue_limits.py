"""The write queue's size limit, refused the same way by every queue adapter.

SQS FIFO takes at most 1 MiB a message; the local queue refuses the same, so a write that would
fail in AWS fails on a laptop too, and before anything of its batch is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.errors import PayloadTooLargeError
from agent_memory.model.limits import MAX_MESSAGE_BYTES
from agent_memory.ports import QueueMessage


def refuse_oversized(messages: Sequence[QueueMessage]) -> list[int]:
    """Each message's size in bytes, or `PayloadTooLargeError` naming those over the limit."""
    sizes = [len(m.body.encode("utf-8")) for m in messages]
    too_big = [i for i, size in enumerate(sizes) if size > MAX_MESSAGE_BYTES]
    if too_big:
        raise PayloadTooLargeError(
            f"{len(too_big)} message(s) exceed the queue's {MAX_MESSAGE_BYTES} byte limit",
            details=[{"index": i, "bytes": sizes[i], "limit": MAX_MESSAGE_BYTES} for i in too_big],
        )
    return sizes
