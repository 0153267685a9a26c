"""Messages on the write queue.

A `WriteCommand` carries one fully formed record (without its vector: embedding is the writer's
job, so the API stays fast and a model outage never fails a write). ``op`` says how the writer
treats it: ``remember`` is a new working-memory write that may be merged into a near duplicate;
``upsert`` overwrites by id (summaries, which are re-made in place).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agent_memory.domain.records import MemoryRecord

#: SQS FIFO's limit on ``MessageGroupId`` (characters, ``[A-Za-z0-9!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~]``).
MAX_GROUP_ID = 128


def group_id(tenant_id: str, agent_id: str, grain: str) -> str:
    """The FIFO message group of one slice, ``tenant:agent:grain``: one writer at a time per slice.

    Tenant and agent ids may each be 128 characters, SQS allows 128 in all. A group id that would
    be longer keeps a readable prefix of each id and ends in a hash of the whole: still one
    stable group per slice (the same slice always maps to the same id, two slices to two ids
    but with a 2^-80 chance), and what fits stays as it was, so short ids' groups never move.
    """
    plain = f"{tenant_id}:{agent_id}:{grain}"
    if len(plain) <= MAX_GROUP_ID:
        return plain
    digest = hashlib.sha256(plain.encode()).hexdigest()[:20]
    return f"{tenant_id[:40]}:{agent_id[:40]}:{grain}:{digest}"


class WriteCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    op: Literal["remember", "upsert"] = "remember"
    record: MemoryRecord

    @property
    def group_id(self) -> str:
        r = self.record
        return group_id(r.tenant_id, r.agent_id, r.grain.value)
