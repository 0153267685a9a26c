"""Importance of a write that names none: a small, deterministic scorer over its words and kind.

Importance only dampens a score (docs/decisions.md, "Ranking"), so the scorer's job is coarse: keep
decisions, commitments, amounts and approvals from sinking under small talk, and let a client's
explicit "remember this" win outright. It reads the content once with a handful of regexes compiled
at import, so it costs microseconds per item on the write path, and the same text and kind always
give the same number (a client retry scores the same as the first attempt).

The table (also in docs/api.md, "Importance"):

===============================================  ==========================================
signal                                           effect
===============================================  ==========================================
explicit "remember this", "don't forget", ...    1.0, whatever else the text says
greetings, thanks, acknowledgements alone        0.1
kind (the base)                                  decision 0.7, task 0.65, preference 0.55,
                                                 error 0.5, fact/event/note 0.45,
                                                 conversation 0.3
decision / obligation words ("decided", "must")  +0.2
approval words ("approved", "signed off")        +0.2
commitment words ("will", "going to", "promise") +0.1
an amount (currency, number with a unit, %)      +0.15
a date or time ("March 3", "2026-11-20", "Fri")  +0.1
only questions, no decision or approval          -0.1
===============================================  ==========================================

The sum is clamped to [0.1, 0.95]: only an explicit request to remember reaches 1.0. Only the first
`SCAN_CHARS` characters are read (what a memory is about is said early; a 16 KiB paste costs no
more than a paragraph), and only a text of at most `SMALL_TALK_CHARS` can be small talk.
"""

from __future__ import annotations

import re

from agent_memory.model.records import MemoryKind

EXPLICIT = 1.0
SMALL_TALK = 0.1
FLOOR = 0.1
CEILING = 0.95

#: Where the score starts, by kind: what a memory is about says most about whether it matters.
KIND_BASE: dict[MemoryKind, float] = {
    MemoryKind.DECISION: 0.7,
    MemoryKind.TASK: 0.65,
    MemoryKind.PREFERENCE: 0.55,
    MemoryKind.ERROR: 0.5,
    MemoryKind.FACT: 0.45,
    MemoryKind.EVENT: 0.45,
    MemoryKind.NOTE: 0.45,
    MemoryKind.CONVERSATION: 0.3,
    MemoryKind.SUMMARY: 0.45,
    # What an agent learned from an outcome is what it should find first when it acts again.
    MemoryKind.PATTERN: 0.7,
    # Who someone is outlasts any one thing they said.
    MemoryKind.PROFILE: 0.7,
    MemoryKind.FAILURE: 0.6,
    MemoryKind.INSIGHT: 0.6,
    MemoryKind.SUCCESS: 0.55,
}

SCAN_CHARS = 2_048
SMALL_TALK_CHARS = 200

DECISION_BONUS = 0.2
APPROVAL_BONUS = 0.2
COMMITMENT_BONUS = 0.1
AMOUNT_BONUS = 0.15
DATE_BONUS = 0.1
QUESTION_PENALTY = 0.1

_I = re.IGNORECASE

_EXPLICIT = re.compile(
    # "do you remember that ..." asks, it does not tell: "remember" after you/I/we does not count.
    r"\b(?:(?<!\byou\s)(?<!\bi\s)(?<!\bwe\s)remember\s+(?:this|that|to)\b|remember\s*:|important\s*:|"
    r"please\s+remember|don'?t\s+forget|do\s+not\s+forget|"
    r"never\s+forget|note\s+(?:that|this)|make\s+a\s+note|take\s+note|keep\s+in\s+mind|"
    r"for\s+the\s+record|save\s+this|memori[sz]e\s+(?:this|that))\b",
    _I,
)

_DECISION = re.compile(
    r"\b(?:decid(?:e|ed|es|ing)|decision|agreed?|agreement|settled\s+on|chose|chosen|"
    r"(?:we|i)\s+(?:will\s+)?go\s+with|must|have\s+to|has\s+to|need\s+to|required?|"
    r"deadline|due\s+(?:on|by|date)|final(?:ised|ized)?|confirmed?|commit(?:ted|ment)?|"
    r"cancel(?:l?ed)?|postponed?|moved\s+(?:the|it)|resched\w*|assign(?:ed)?\s+to)\b",
    _I,
)

_APPROVAL = re.compile(
    r"\b(?:approv(?:e|ed|es|al)|signed[\s-]off|sign[\s-]off|green[\s-]?light(?:ed)?|greenlit|"
    r"lgtm|authori[sz](?:e|ed|ation)|accepted|rejected|denied|ok'?d|okayed)\b",
    _I,
)

_COMMITMENT = re.compile(
    r"\b(?:will|shall|i'll|we'll|they'll|she'll|he'll|going\s+to|plan(?:s|ned)?\s+to|"
    r"promis(?:e|ed)|intend\s+to|todo|to-do|action\s+item|follow[\s-]up)\b",
    _I,
)

_AMOUNT = re.compile(
    r"(?:[$€£¥₹]\s?\d|\b\d[\d,.]*\s?(?:usd|eur|gbp|jpy|chf|cad|aud|k|m|bn|%|percent|"
    r"kg|g|mg|lb|lbs|km|m|cm|mm|mi|miles?|hours?|hrs?|h|minutes?|mins?|days?|weeks?|months?|"
    r"years?|gb|mb|tb|users?|seats?|units?|items?|people|dollars?|euros?|pounds?)(?!\w)|"
    r"\b(?:usd|eur|gbp)\s?\d)",
    _I,
)

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|"
    r"sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE = re.compile(
    r"(?:\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|"
    rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b|"
    # Weekdays in full, or abbreviated where the abbreviation is no common word ("sat", "sun").
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tue|tues|wed|thu|thur|thurs|fri)\b|"
    r"\b(?:today|tonight|tomorrow|yesterday|next\s+(?:week|month|quarter|year)|end\s+of\s+"
    r"(?:the\s+)?(?:day|week|month|quarter|year)|eod|eow|q[1-4])\b|"
    r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b)",
    _I,
)

#: Words a turn of pure small talk is made of. A turn is small talk when nothing else is left
#: after these (and punctuation, emoji) are taken out.
_SMALL_TALK = re.compile(
    r"\b(?:hi|hello|hey|hiya|yo|howdy|good\s+(?:morning|afternoon|evening|night)|morning|"
    r"thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much)?|thx|ty|cheers|much\s+appreciated|appreciate\s+it|"
    r"ok(?:ay)?|k|kk|sure|yes|yeah|yep|yup|no|nope|nah|got\s+it|understood|noted|cool|nice|great|"
    r"awesome|perfect|sounds\s+good|all\s+good|no\s+problem|np|no\s+worries|you'?re\s+welcome|"
    r"welcome|bye|goodbye|see\s+you|see\s+ya|later|ttyl|lol|haha+|hah|hmm+|uh|um|oh|ah|wow|"
    r"right|alright|fine|great\s+job|well\s+done|how\s+are\s+you|i'?m\s+(?:good|fine|well)|"
    r"there|all|everyone|again|too|very|so|much|a\s+lot|and|you|guys|folks|team)\b",
    _I,
)
_LEFTOVER = re.compile(r"\w", re.UNICODE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def is_small_talk(content: str) -> bool:
    """Greetings, thanks and acknowledgements and nothing else ("thanks!", "ok, got it 👍")."""
    if not content.strip():
        return True
    if len(content) > SMALL_TALK_CHARS:
        return False
    return _LEFTOVER.search(_SMALL_TALK.sub(" ", content)) is None


def is_question_only(content: str) -> bool:
    """Every sentence of the text is a question: asking is rarely worth as much as telling."""
    sentences = [s.strip() for s in _SENTENCE.findall(content) if _LEFTOVER.search(s)]
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def score_importance(content: str, kind: MemoryKind) -> float:
    """The importance of ``content`` of ``kind`` in [0, 1] (the table in the module docstring)."""
    content = content[:SCAN_CHARS]
    if _EXPLICIT.search(content):
        return EXPLICIT
    if is_small_talk(content):
        return SMALL_TALK
    score = KIND_BASE.get(kind, KIND_BASE[MemoryKind.NOTE])
    decided = _DECISION.search(content) is not None
    approved = _APPROVAL.search(content) is not None
    if decided:
        score += DECISION_BONUS
    if approved:
        score += APPROVAL_BONUS
    if _COMMITMENT.search(content):
        score += COMMITMENT_BONUS
    if _AMOUNT.search(content):
        score += AMOUNT_BONUS
    if _DATE.search(content):
        score += DATE_BONUS
    if not (decided or approved) and is_question_only(content):
        score -= QUESTION_PENALTY
    return round(min(CEILING, max(FLOOR, score)), 3)
