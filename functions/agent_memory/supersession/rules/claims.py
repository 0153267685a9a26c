"""Whether a new memory states a new value for something an older one stated, decided without a model.

People move, change jobs, reschedule and change their minds: "I live in Berlin" (March) and "I
moved to Lisbon" (June) are not two facts to rank side by side, nor one to merge into the other;
the second *supersedes* the first. The write path must decide that cheaply (no model call: a write
is searchable in under a second), so this module reads *claims* out of a memory's text with
patterns, each claim an attribute of a holder with a value ("the user" · residence · "lisbon"),
and compares them:

* the same holder and attribute with **another value** is an **update** (the old memory holds no
  more);
* the same value again is a **restatement** (a paraphrase: not an update; the near-duplicate
  merge deals with it);
* anything else is **unrelated** (two true facts about different things: both hold).

"I switched from green tea to black coffee" names the old value itself: it updates whatever older
claim had "green tea" as its value, whatever attribute the older text used.

The patterns read English and only the attributes people most often change (where someone lives
and works, their job, their favourites and preferences, their partner, when and where a planned
event happens); what they miss stays unrelated, which costs nothing but a missed update: both
memories are kept and ranked as before. The daily summary, which calls the model anyway, is where
a missed or a wrong decision is caught (a later step). Precision and recall on a labelled set,
tuned on one half and reported on the other: benchmarks/supersession.py and docs/decisions.md.

Conversation says the same things in a thousand other ways: for what no pattern reads,
`supersession.rules.shape` compares two statements near by meaning by their light structure.

Pure (no I/O).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

#: Who a first-person claim is about.
SELF = "self"

_NAME = r"(?P<v>[A-Z][\w'\u2019-]*(?:[ -](?:[A-Z][\w'\u2019-]*|de|da|del|do|di|van|von|of))*)"
_PHRASE = r"(?P<v>[\w'\u2019 .&-]{2,60}?)"
_END = r"(?=[.,;!?]|\s+(?:now|instead|these days|since|from|last|this|next|after|before|because|and)\b|$)"
_I = r"(?i:i|we)"
#: A straight or a typographic apostrophe.
_APOS = "['\u2019]"
#: A date runs on past its commas ("Friday, April 7"), up to the end of its clause.
_DATE_END = r"(?=[.;!?]|,\s*(?:don't|please|so|and|but|see|then)\b|$)"


def _words(pattern: str) -> re.Pattern[str]:
    """``pattern`` with its words matched in any case and a `_NAME` in it still capitalised:
    the name's own group is case-sensitive, so "Porto with two cats" ends at "Porto"."""
    name = _NAME.replace("(?P<v>", "(?-i:(?P<v>", 1) + ")"
    return re.compile("(?i)" + pattern.replace(_NAME, name))


#: (attribute, pattern): the first group ``v`` is the value; ``a`` (if any) refines the attribute,
#: ``o`` (if any) is an old value the text itself names.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "residence",
        re.compile(
            rf"\b{_I}(?:{_APOS}ve| have)?\s+(?:now\s+|just\s+|finally\s+)?"
            rf"(?:live|lived|living|am living|{_APOS}m living|reside|moved|relocated|am moving"
            rf"|{_APOS}m moving)"
            rf"\s+(?:in|to)\s+{_NAME}"
        ),
    ),
    (
        "residence",
        _words(rf"\bmy (?:new )?(?:flat|apartment|home|house|place) is in {_NAME}"),
    ),
    ("residence", _words(rf"\b{_I}(?:'re|\u2019re| are|'m|\u2019m| am) (?:now )?based in {_NAME}")),
    (
        "employer",
        _words(
            rf"\b{_I}\s+(?:now\s+|currently\s+)?(?:work|works|worked|am working|{_APOS}m working)\s+"
            rf"(?:at|for)\s+{_NAME}"
        ),
    ),
    (
        "employer",
        _words(
            rf"\b{_I}\s+(?:just\s+|recently\s+)?(?:joined|started at|started working at|got a job at|"
            rf"took a job at|was hired by|signed with)\s+{_NAME}"
        ),
    ),
    (
        "role",
        _words(
            # "I'm a teacher" needs its article: "I'm after ...", "I'm super keen" state no role.
            rf"\b(?:{_I}(?:'m|\u2019m| am)\s+(?:now\s+)?an?\s+"
            rf"|(?:{_I} work as|my (?:job|role|title) is)\s+(?:now\s+)?(?:an?\s+)?)"
            r"(?!(?:better|bigger|smaller|faster|slower|older|younger|member|beginner|fan|other)\b)"
            r"(?P<v>(?:(?:senior|junior|lead|head|chief|staff) )?"
            r"[a-z]*(?:er|or|ist|ant|ent|ian|ect|nurse|chef|pilot))\b"
        ),
    ),
    (
        "favourite",
        _words(
            rf"\bmy (?:new )?(?:favou?rite|preferred) (?P<a>[a-z]+(?: [a-z]+)?) is (?:now )?{_PHRASE}{_END}"
        ),
    ),
    (
        "favourite",
        _words(
            rf"\b{_I}\s+(?:now\s+)?(?:prefer|love|drink|eat|use)\s+{_PHRASE}"
            r"\s+(?:the most|most of all|above all)\b"
        ),
    ),
    (
        "partner",
        _words(rf"\bmy (?:new )?(?:partner|wife|husband|boyfriend|girlfriend|fiancée?|spouse) is {_NAME}"),
    ),
    (
        "partner",
        _words(rf"\b{_I}(?:'m|\u2019m| am| are) (?:now )?(?:dating|seeing|married to|engaged to) {_NAME}"),
    ),
    (
        "when",
        _words(
            r"\bthe (?P<a>[a-z]+(?: [a-z]+){0,3}?) (?:is|was|has been|got|will be)\s+(?:now\s+)?"
            r"(?:moved|rescheduled|postponed|pushed|pulled forward|brought forward|changed)\s+to\s+"
            + _PHRASE
            + _END
        ),
    ),
    (
        "when",
        _words(
            r"\bthe (?P<a>[a-z]+(?: [a-z]+){0,3}?) (?:is|will be|takes place|happens)\s+(?:now\s+)?"
            r"(?:on|at|in)\s+(?P<v>(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|"
            r"june|july|august|september|october|november|december|\d)[\w ,:]{0,30}?)" + _END
        ),
    ),
]
#: Words each pattern of `_PATTERNS` cannot match without, in the same order, lower case: a text
#: that holds none of a pattern's words is not read by it. Most texts hold none of most of them,
#: and looking for a word in a string costs far less than a pattern's search at every word.
_CUES: list[tuple[str, ...]] = [
    ("liv", "resid", "moved", "moving", "relocated"),
    ("is in",),
    ("based in",),
    ("work",),
    ("joined", "started", "got a job", "took a job", "hired by", "signed with"),
    ("'m", "\u2019m", " am", "work as", "job", "role", "title"),
    ("favourite", "favorite", "preferred"),
    ("the most", "most of all", "above all"),
    ("partner", "wife", "husband", "boyfriend", "girlfriend", "fianc", "spouse"),
    ("dating", "seeing", "married to", "engaged to"),
    ("moved", "rescheduled", "postponed", "pushed", "forward", "changed"),
    (" is", " will be", " takes place", " happens"),
]
#: "switched from A to B", "changed from A to B", "no longer A but B".
_SWITCH = _words(
    rf"\b(?:switched|changed|moved|went|upgraded|downgraded)\s+from\s+{_PHRASE.replace('v', 'o')}"
    rf"\s+to\s+{_PHRASE}{_END}"
)
_ARTICLE = _words(r"^(?:the|a|an|my|our)\s+")


@dataclass(frozen=True, slots=True)
class Claim:
    """One thing a text says: an attribute of a holder has a value (``old``: a value the text
    itself says no longer holds, "switched from A to B")."""

    holder: str
    attribute: str
    value: str
    old: str | None = None


class Relation(StrEnum):
    UPDATE = "update"
    RESTATEMENT = "restatement"
    UNRELATED = "unrelated"


@dataclass(frozen=True, slots=True)
class Verdict:
    relation: Relation
    #: The attribute the update or restatement is about (None when unrelated).
    attribute: str | None = None


def normalise(value: str) -> str:
    """A value as compared: lower case, no leading article, single spaces, no trailing dots."""
    text = " ".join(value.replace("\u2019", "'").split()).strip(" .,;:!?'\"")
    return _ARTICLE.sub("", text).lower()


def claims(text: str, holder: str = SELF) -> list[Claim]:
    """The claims ``text`` makes, first-person ones held by ``holder``."""
    found: list[Claim] = []
    low = text.lower()
    for (attribute, pattern), cue in zip(_PATTERNS, _CUES, strict=True):
        if not any(word in low for word in cue):
            continue
        for match in pattern.finditer(text):
            groups = match.groupdict()
            refined = f"{attribute}:{normalise(groups['a'])}" if groups.get("a") else attribute
            value = normalise(groups["v"])
            if value:
                found.append(Claim(holder, refined, value))
    for match in _SWITCH.finditer(text) if "from" in low else ():
        found.append(Claim(holder, "switch", normalise(match.group("v")), old=normalise(match.group("o"))))
    return found


def relate(new_text: str, old_text: str, holder: str = SELF) -> Verdict:
    """How ``new_text`` relates to ``old_text``, both said by (or of) ``holder``."""
    return relate_claims(claims(new_text, holder), claims(old_text, holder))


def relate_claims(new: list[Claim], old: list[Claim]) -> Verdict:
    """`relate` on claims already read (a text compared with many reads its own once)."""
    for n in new:
        if n.old is not None and any(n.old == o.value or n.old in o.value.split(" or ") for o in old):
            matched = next(o for o in old if n.old == o.value or n.old in o.value.split(" or "))
            return Verdict(Relation.UPDATE, matched.attribute)
    restated: str | None = None
    for n in new:
        for o in old:
            if (n.holder, n.attribute) != (o.holder, o.attribute) or n.attribute == "switch":
                continue
            if n.value != o.value:
                return Verdict(Relation.UPDATE, n.attribute)
            restated = n.attribute
    if restated is not None:
        return Verdict(Relation.RESTATEMENT, restated)
    return Verdict(Relation.UNRELATED)
