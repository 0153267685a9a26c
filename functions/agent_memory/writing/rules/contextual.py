"""What a memory is embedded and indexed from: its own words in their setting, not alone.

A conversation turn means little on its own ("Yes, last Tuesday!"): who said it, when, and what
was said just before carry the meaning a question will ask about. So a working memory gets:

* a **self text**: the speaker (or role), the day it happened and the topic before its content,
  e.g. ``Caroline on 08 May 2023: I went to a LGBTQ support group yesterday.``;
* a **context** (turns only): the speaker-labelled text of up to ``context_turns`` turns before it
  in the same conversation, followed by its own labelled text. The writer stores it on the record
  (`MemoryRecord.context`), and the lexical index reads it.

What the model embeds is each piece of text once (`vector_texts`), and the vector is composed from
those pieces (`tenancy.models.record_vectors`):

* the **own words** (`dedup_text`: the content, the topic first when it lacks it), which the
  near-duplicate check and the statement comparison need anyway;
* the **setting** (`setting_text`: ``Caroline on 08 May 2023``), one text for every turn of one
  speaker on one day, so embedded once for all of them;
* the **earlier turns' words** (`context_parts`, read back from the stored context), which are the
  own words those turns were embedded with when they were written.

The self vector is the normalised sum of the setting and the own words (`SETTING_WEIGHT`), the
context vector the normalised mean of the earlier turns' words and this turn's self vector, and the
stored vector the normalised sum of the two. Embedding the self text and the whole context instead
cost 5.2 times the characters of the turn alone (three texts, the earlier turns embedded again in
every later context); the pieces cost 1.02, with LoCoMo recall no lower (docs/decisions.md).
Only earlier turns are used: they are already stored when a turn arrives (one FIFO group per
agent), so a turn is embedded once, never revisited. Summaries are embedded from their content
alone: their lines are already dated.

Measured on LoCoMo with the local MiniLM model (benchmarks/README.md): speaker and date in the
self text lift dense recall@10 from 29 to 50; adding two turns of context lifts it to 54, and
lexical search over the context adds the most of all.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.model.grains import Grain
from agent_memory.model.limits import MAX_CONTEXT_CHARS
from agent_memory.model.records import MemoryRecord

#: At most this many characters of one earlier turn go into a context.
TURN_CHARS = 600
#: How much the setting (speaker and day) weighs against the own words in a self vector: the
#: same (a plain sum), which stands for the self text as its embedding did on LoCoMo, recall no
#: lower (docs/decisions.md, "Retrieval: a turn is embedded and indexed in its setting").
SETTING_WEIGHT = 1.0
#: Between a label and the words in a context line (`_turn`): every line written has one, an
#: unlabelled turn's at its start, and a label's own ": " is written with a no-break space
#: (`_LABEL_SPACE`), so the first one in a line is where its words begin (`context_parts`).
_LABEL_END = ": "
_LABEL_SPACE = ":\u00a0"
#: Where a context cut to its limit starts (`context_text`).
_CUT = "… "


def _label(record: MemoryRecord) -> str | None:
    return record.speaker or record.role


def dedup_text(record: MemoryRecord) -> str:
    """What a memory says, with nothing of its setting: the topic gives a short memory its subject.
    Dedup-on-write compares these (the same fact said on two days is still one fact)."""
    if record.topic_raw and record.topic_raw.casefold() not in record.content.casefold():
        return f"{record.topic_raw}: {record.content}"
    return record.content


def setting_text(record: MemoryRecord) -> str | None:
    """Who said a working memory and on what day (None for a summary: its lines are dated)."""
    if record.grain is not Grain.WORKING:
        return None
    when = record.occurred_at.strftime("%d %B %Y")
    label = _label(record)
    return f"{label} on {when}" if label else f"On {when}"


def self_text(record: MemoryRecord) -> str:
    """The record's own text in its setting: who, when and what about, then what was said (what
    a reader is shown, and what the self vector is composed to stand for)."""
    content = dedup_text(record)
    setting = setting_text(record)
    return f"{setting}: {content}" if setting else content


def context_parts(context: str | None) -> list[str]:
    """The earlier turns' words in a stored context (`context_text`), oldest first: each line but
    the last (the turn itself) without its label, so a turn written with no topic is the text it
    was embedded as (`dedup_text`) and the model is not asked for it again. Read from the record,
    not from the turns, so the re-embedding job makes the vector the writer made. A line with no
    separator (an unlabelled turn in a context stored before every line had one) is words alone;
    the first line of a context cut from the front may have lost its label and is read the same
    way, a few words of a turn either way."""
    if not context:
        return []
    lines = (line.removeprefix(_CUT) for line in context.split("\n")[:-1])
    return [words for line in lines if (words := line.split(_LABEL_END, 1)[-1]).strip()]


def vector_texts(record: MemoryRecord) -> list[str]:
    """Every text a record's vector is composed from, each once: its own words, its setting (a
    working memory) and the earlier turns' words of its context."""
    texts = [dedup_text(record)]
    setting = setting_text(record)
    if setting is not None:
        texts.append(setting)
    return list(dict.fromkeys([*texts, *context_parts(record.context)]))


def _turn(record: MemoryRecord) -> str:
    text = " ".join(record.content.split())
    if len(text) > TURN_CHARS:
        text = text[:TURN_CHARS].rsplit(" ", 1)[0] + " …"
    label = _label(record) or ""
    return f"{label.replace(_LABEL_END, _LABEL_SPACE)}{_LABEL_END}{text}"


def context_text(record: MemoryRecord, previous: Sequence[MemoryRecord]) -> str | None:
    """Earlier turns (oldest first), then this one, each labelled; None without earlier turns.

    Cut from the front to `MAX_CONTEXT_CHARS`: the turns nearest this one matter most.
    """
    if not previous:
        return None
    text = "\n".join([*(_turn(r) for r in previous), _turn(record)])
    if len(text) > MAX_CONTEXT_CHARS:
        text = _CUT + text[-(MAX_CONTEXT_CHARS - len(_CUT)) :].split(" ", 1)[-1]
    return text
