"""Messages on the write queue.

A `WriteCommand` carries one fully formed record (without its vector: embedding is the writer's
job, so the API stays fast and a model outage never fails a write). ``op`` says how the writer
treats it: ``remember`` is a new working-memory write that may be merged into a near duplicate;
``upsert`` overwrites by id (summaries, which are re-made in place).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agent_memory.domain.records import MemoryRecord


class WriteCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    op: Literal["remember", "upsert"] = "remember"
    record: MemoryRecord

    @property
    def group_id(self) -> str:
        r = self.record
        return f"{r.tenant_id}:{r.agent_id}:{r.grain.value}"
