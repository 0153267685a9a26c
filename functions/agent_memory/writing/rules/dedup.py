"""When two writes may become one memory (dedup on write), decided before any vector is compared.

Dedup exists to keep one memory where a client or an agent said the same thing twice in one
sitting: a retry with a fresh id, a fact restated a few turns later. It must never make one
memory of two things that differ in what they are about, because the merge keeps one text and
the other is then unreadable and unerasable on its own:

* **Whose it is.** Two end users' words are never one record (erasing one user must not take
  the other's words, nor leave its own behind), nor are two conversations', unless the
  deployment widens the scope (`DedupScope`).
* **When it happened.** Only writes of the same local day are candidates: "I went for a run"
  on two days is two runs, and the timeline must show both days.
* **The particulars.** Embeddings place "paid invoice 1001 of $500" and "paid invoice 1002 of
  $500" at a cosine near 1; the numbers, amounts, dates, e-mail addresses, phone numbers, URLs,
  codes and names in a text are what tell such texts apart, so two texts merge only if they name
  exactly the same ones (`particulars`).

What is left (same person, same conversation, same day, same particulars) merges when the
wording is near-identical by cosine, as before.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from enum import StrEnum

from agent_memory.cascade.rules.periods import local_date
from agent_memory.model.limits import MAX_TAGS
from agent_memory.model.records import MemoryRecord, MergedWrite, check_metadata
from agent_memory.model.words import STOPWORDS


class DedupScope(StrEnum):
    """How far apart two writes may be in ownership and still merge.

    ``conversation`` (the default): same end user and same conversation. ``user``: same end user,
    any conversation of the agent. ``agent``: any writes of the agent, across end users (only
    for agents whose memory is not per person; erasure of one user then also takes merged text).
    """

    CONVERSATION = "conversation"
    USER = "user"
    AGENT = "agent"


_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
# Digits with the separators numbers, amounts, phone numbers, times and dates are written with.
_NUMBER = re.compile(r"\d(?:[\d.,:/-]*\d)?")
_TIME_LIST = """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday mon tue tues wed thu thur thurs fri sat sun today tomorrow yesterday tonight
"""
_TIME_WORDS = frozenset(_TIME_LIST.split())
_CURRENCY = frozenset("$€£¥₹₩₽¢")
_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")
# A token of letters and digits mixed (A1B2, INV-1001 is caught by its number), or capitals only
# (ACME, SKU), is a code or an acronym; "I" and "A" are words.
_CODE = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{2,}\b|\b[A-Z]{2,}\b")


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def particulars(text: str) -> frozenset[str]:
    """The things ``text`` names that a paraphrase would keep and another fact would change.

    Numbers (with their separators, so 555-1234 and 555-9876 differ), currency signs, URLs,
    e-mail addresses, codes, month/weekday words, and capitalised words other than function
    words (names: Berlin, Acme, Hannah; a capital that only starts a sentence counts too, which
    can only keep two texts apart). Case-insensitive; word order does not matter.
    Leaning towards more particulars is safe: a missed merge keeps two memories, a wrong merge
    loses one.
    """
    text = _folded(text)
    found: set[str] = set()
    rest = text
    for pattern, tag in ((_URL, "url"), (_EMAIL, "email")):
        for match in pattern.findall(rest):
            found.add(f"{tag}:{match.casefold().rstrip('.,;:!?)')}")
        rest = pattern.sub(" ", rest)
    found.update(f"code:{m.casefold()}" for m in _CODE.findall(rest))
    found.update(f"num:{m}" for m in _NUMBER.findall(rest))
    found.update(f"cur:{c}" for c in rest if c in _CURRENCY)
    for match in _WORD.finditer(rest):
        word = match.group(0)
        lowered = word.casefold()
        if lowered in _TIME_WORDS:
            found.add(f"time:{lowered}")
        elif word[0].isupper() and lowered not in STOPWORDS and not any(c.isdigit() for c in word):
            found.add(f"name:{lowered}")
    return frozenset(found)


def same_owner(existing: MemoryRecord, new: MemoryRecord, scope: DedupScope) -> bool:
    """Whether ``scope`` lets the two records' owners share one memory."""
    if scope is DedupScope.AGENT:
        return True
    if existing.user_id != new.user_id:
        return False
    return scope is DedupScope.USER or existing.conversation_id == new.conversation_id


def same_day(existing: MemoryRecord, new: MemoryRecord, timezone: str) -> bool:
    """Whether both happened on one local day (of either end of a merged record's span)."""
    day = local_date(new.occurred_at, timezone)
    return day in _days(existing, timezone)


def _days(record: MemoryRecord, timezone: str) -> set[date]:
    days = {local_date(record.occurred_at, timezone)}
    if record.last_seen_at is not None:
        days.add(local_date(record.last_seen_at, timezone))
    return days


def may_merge(existing: MemoryRecord, new: MemoryRecord, scope: DedupScope, timezone: str) -> bool:
    """Everything but the wording: owner, day, speaker, kind and particulars all agree.

    Never two experiences: each outcome is its own piece of evidence (a finding seen again in
    the next run is what makes a pattern), so merging them would erase what was learned.
    """
    return (
        existing.experience is None
        and new.experience is None
        and existing.grain is new.grain
        and existing.kind is new.kind
        and existing.role == new.role
        and existing.speaker == new.speaker
        and same_owner(existing, new, scope)
        and same_day(existing, new, timezone)
        and particulars(existing.content) == particulars(new.content)
        and particulars(existing.topic_raw or "") == particulars(new.topic_raw or "")
    )


def merge(existing: MemoryRecord, new: MemoryRecord, now: datetime) -> MemoryRecord:
    """One memory of two writes that say the same thing (`may_merge` decided they may).

    The newer wording becomes the content (it is what the stored vector was made from). Every
    write the record holds is kept verbatim in ``merged_from``, the first one included, under the
    id it was written with: nothing a write said is lost, every id still reads back (the absorbed
    ones as aliases), and the merge can be told apart and undone. ``occurred_at`` is the first
    occurrence, ``last_seen_at`` the latest. What either said about importance, tags and links is
    kept.
    """
    history = existing.merged_from or [_as_written(existing)]
    seen = sorted([existing.occurred_at, existing.last_seen_at or existing.occurred_at, new.occurred_at])
    return existing.model_copy(
        update={
            "content": new.content,
            "content_hash": new.content_hash,
            "context": new.context,
            "topic": new.topic or existing.topic,
            "topic_raw": new.topic_raw or existing.topic_raw,
            "importance": max(existing.importance, new.importance),
            "tags": list(dict.fromkeys([*existing.tags, *new.tags]))[:MAX_TAGS],
            "links": list(dict.fromkeys([*existing.links, *new.links])),
            "metadata": _merged_metadata(existing.metadata, new.metadata),
            "access_count": existing.access_count + 1,
            "updated_at": now,
            "expires_at": _later(existing.expires_at, new.expires_at),
            "occurred_at": seen[0],
            "last_seen_at": seen[-1],
            "merged_from": [*history, _as_written(new)],
        }
    )


def _as_written(record: MemoryRecord) -> MergedWrite:
    return MergedWrite(
        id=record.id, content=record.content, occurred_at=record.occurred_at, created_at=record.created_at
    )


def _merged_metadata(old: dict[str, object], new: dict[str, object]) -> dict[str, object]:
    """Both, newer keys winning; if together they break the size limit, the newer alone."""
    combined = {**old, **new}
    try:
        return check_metadata(combined)
    except ValueError:
        return new


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """Of two expiries the later one; no expiry (None) outlives any."""
    if a is None or b is None:
        return None
    return max(a, b)
