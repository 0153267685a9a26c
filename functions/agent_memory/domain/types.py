"""Reusable annotated types: ids, tags and bounded numbers.

Ids are deliberately narrow. Tenant and agent ids may not contain ``:`` because they are joined
with it into FIFO message groups and routing keys; none may contain ``/`` or start with ``.`` so an
id can never be read as a path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from agent_memory.domain.limits import MAX_SPEAKER_CHARS, MAX_TAG_CHARS

_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

TenantId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
AgentId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
UserId = Annotated[str, StringConstraints(pattern=_ID, max_length=128)]
ConversationId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")]
#: Record ids are made by the service: a prefix and a base32 digest (see `domain.ids`).
MemoryId = Annotated[str, StringConstraints(pattern=r"^[a-z]{1,8}_[a-z2-7]{16,64}$")]
#: No control characters, C1 (``\x80``-``\x9f``, terminal escapes among them) included.
Tag = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_TAG_CHARS, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$"
    ),
]
Score = Annotated[float, Field(ge=0.0, le=1.0)]
#: Who said a conversation turn, as people call them ("Alice", "Support bot"): it goes into the
#: text that is embedded and indexed, so "what did Alice say about ..." finds Alice's turns.
Speaker = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_SPEAKER_CHARS, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$"
    ),
]


def _as_utc(value: datetime) -> datetime:
    """Naive datetimes are read as UTC; aware ones are converted to it."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
