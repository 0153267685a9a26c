"""Messages on the write queue.

A `DocumentCommand` carries one document of a tenant's shared knowledge (`knowledge.rules.passages`),
whole: the writer splits, embeds and stores its passages. Its group is the tenant's document
(`knowledge_group_id`), so two versions of one document are stored in the order they were
accepted while other documents and every agent's writes go on beside them.

A `FeedbackCommand` counts one confirmation, refutation or application of an experience
(`experience.rules.confidence`), on the agent's working-memory group.

A `WriteCommand` carries one fully formed record (without its vector: embedding is the writer's
job, so the API stays fast and a model outage never fails a write). ``op`` says how the writer
treats it: ``remember`` is a new working-memory write that may be merged into a near duplicate;
``upsert`` overwrites by id (summaries, which are re-made in place).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

from agent_memory.experience.rules.confidence import MAX_NOTE_CHARS, FeedbackOutcome
from agent_memory.knowledge.rules.passages import KnowledgeDocument
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord
from agent_memory.model.types import AgentId, TenantId, UtcDatetime

#: SQS FIFO's limit on ``MessageGroupId`` (characters, ``[A-Za-z0-9!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~]``).
MAX_GROUP_ID = 128


def group_id(tenant_id: str, agent_id: str, grain: str) -> str:
    """The FIFO message group of one slice, ``tenant:agent:grain``: one writer at a time per slice.

    Tenant and agent ids may each be 128 characters, and a knowledge document's id (the third
    part of its group, `knowledge_group_id`) 128 more; SQS allows 128 in all. A group id that
    would be longer keeps a readable prefix of each part and ends in a hash of the whole: still
    one stable group per slice (the same slice always maps to the same id, two slices to two ids
    but with a 2^-80 chance), so what one slice sends stays in order; and what fits stays as it
    was, so short ids' groups never move (nor do memory grains', which are short words).
    """
    plain = f"{tenant_id}:{agent_id}:{grain}"
    if len(plain) <= MAX_GROUP_ID:
        return plain
    digest = hashlib.sha256(plain.encode()).hexdigest()[:_DIGEST_CHARS]
    return f"{tenant_id[:40]}:{agent_id[:40]}:{grain[:_GRAIN_CHARS]}:{digest}"


#: The hash that keeps a long slice's group unique, and how much of its third part stays readable:
#: 40 + 1 + 40 + 1 + 24 + 1 + 20 = 127 characters at most.
_DIGEST_CHARS = 20
_GRAIN_CHARS = MAX_GROUP_ID - 40 - 1 - 40 - 1 - 1 - _DIGEST_CHARS - 1


class WriteCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    op: Literal["remember", "upsert"] = "remember"
    record: MemoryRecord

    @property
    def group_id(self) -> str:
        r = self.record
        return group_id(r.tenant_id, r.agent_id, r.grain.value)


#: The middle part of a knowledge group id: ``#`` is in no agent id, so no agent's slice shares it.
KNOWLEDGE_GROUP = "#knowledge"


def knowledge_group_id(tenant_id: str, doc_id: str) -> str:
    """The FIFO message group of one document of a tenant's knowledge, ``tenant:#knowledge:doc``."""
    return group_id(tenant_id, KNOWLEDGE_GROUP, doc_id)


class DocumentCommand(BaseModel):
    """Store one version of a document (split, embedded, every older passage replaced), unless
    the document was deleted after ``accepted_at``."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    op: Literal["document"] = "document"
    document: KnowledgeDocument
    accepted_at: UtcDatetime

    @property
    def group_id(self) -> str:
        return knowledge_group_id(self.document.tenant_id, self.document.doc_id)


class FeedbackCommand(BaseModel):
    """Count one feedback on an experience. It travels the agent's working-memory group, so the
    writer applies feedback and pattern re-makes of one agent one at a time: two confirmations
    sent at once both count. ``feedback_id`` makes a redelivery count once."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    op: Literal["feedback"] = "feedback"
    feedback_id: str = Field(min_length=1, max_length=64)
    tenant_id: TenantId
    agent_id: AgentId
    record_id: str = Field(min_length=1, max_length=128)
    outcome: FeedbackOutcome
    note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    actor: str = Field(min_length=1, max_length=256)
    accepted_at: UtcDatetime

    @property
    def group_id(self) -> str:
        return group_id(self.tenant_id, self.agent_id, Grain.WORKING.value)


def _op(body: Any) -> str:
    """The command a body is: its ``op`` (a write without one is a ``remember``, as it always was)."""
    op = body.get("op", "remember") if isinstance(body, dict) else getattr(body, "op", "remember")
    return op if op in ("document", "feedback") else "write"


AnyCommand = WriteCommand | DocumentCommand | FeedbackCommand
Command = Annotated[
    Annotated[WriteCommand, Tag("write")]
    | Annotated[DocumentCommand, Tag("document")]
    | Annotated[FeedbackCommand, Tag("feedback")],
    Discriminator(_op),
]
_COMMAND: TypeAdapter[AnyCommand] = TypeAdapter(Command)


def parse_command(body: str) -> AnyCommand:
    """A queue message's body as its command, or `pydantic.ValidationError` (a poison message)."""
    return _COMMAND.validate_json(body)
