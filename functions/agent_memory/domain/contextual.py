"""What a memory is embedded and indexed from: its own words in their setting, not alone.

A conversation turn means little on its own ("Yes, last Tuesday!"): who said it, when, and what
was said just before carry the meaning a question will ask about. So a working memory gets:

* a **self text**: the speaker (or role), the day it happened and the topic before its content,
  e.g. ``Caroline on 08 May 2023: I went to a LGBTQ support group yesterday.``;
* a **context** (turns only): the speaker-labelled text of up to ``context_turns`` turns before it
  in the same conversation, followed by its own labelled text. The writer stores it on the record
  (`MemoryRecord.context`), the lexical index reads it, and it is embedded too.

The stored vector is the normalised sum of the two embeddings, so a query can match the turn
itself or the exchange it belongs to. Only earlier turns are used: they are already stored when
a turn arrives (one FIFO group per agent), so a turn is embedded once, never revisited.
Summaries are embedded from their content alone: their lines are already dated.

Measured on LoCoMo with the local MiniLM model (benchmarks/README.md): speaker and date in the
self text lift dense recall@10 from 29 to 50; adding two turns of context lifts it to 54, and
lexical search over the context adds the most of all.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.domain.grains import Grain
from agent_memory.domain.limits import MAX_CONTEXT_CHARS
from agent_memory.domain.records import MemoryRecord

#: At most this many characters of one earlier turn go into a context.
TURN_CHARS = 600


def _label(record: MemoryRecord) -> str | None:
    return record.speaker or record.role


def dedup_text(record: MemoryRecord) -> str:
    """What a memory says, with nothing of its setting: the topic gives a short memory its subject.
    Dedup-on-write compares these (the same fact said on two days is still one fact)."""
    if record.topic_raw and record.topic_raw.casefold() not in record.content.casefold():
        return f"{record.topic_raw}: {record.content}"
    return record.content


def self_text(record: MemoryRecord) -> str:
    """The record's own text as it is embedded: who, when and what about, then what was said."""
    content = dedup_text(record)
    if record.grain is not Grain.WORKING:
        return content
    when = record.occurred_at.strftime("%d %B %Y")
    label = _label(record)
    return f"{label} on {when}: {content}" if label else f"On {when}: {content}"


def _turn(record: MemoryRecord) -> str:
    text = " ".join(record.content.split())
    if len(text) > TURN_CHARS:
        text = text[:TURN_CHARS].rsplit(" ", 1)[0] + " …"
    label = _label(record)
    return f"{label}: {text}" if label else text


def context_text(record: MemoryRecord, previous: Sequence[MemoryRecord]) -> str | None:
    """Earlier turns (oldest first), then this one, each labelled; None without earlier turns.

    Cut from the front to `MAX_CONTEXT_CHARS`: the turns nearest this one matter most.
    """
    if not previous:
        return None
    text = "\n".join([*(_turn(r) for r in previous), _turn(record)])
    if len(text) > MAX_CONTEXT_CHARS:
        text = "… " + text[-(MAX_CONTEXT_CHARS - 2) :].split(" ", 1)[-1]
    return text
