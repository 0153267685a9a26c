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

Conversation says the same things in a thousand other ways, so for what no pattern reads there is
a second test (`shape`, `replaces`): two statements near by meaning (their vectors' cosine, which
the caller has) replace one another when their light structure says one value took another's
place: the same holder (the speaker, "my sister", or "Mum and Dad" for "my parents") and
subject ("my manager", not "my mentor"), a new value (a name, a number) or a word of change, and
neither "also" nor a restatement (the old value named again, unless beside a new one of its kind
and a word of beginning); a newer statement that names no subject, value or word of an older one
that names its subject is not tied to it.

Pure (no I/O).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from agent_memory.domain.words import STOPWORDS

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
    for attribute, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            refined = f"{attribute}:{normalise(groups['a'])}" if groups.get("a") else attribute
            value = normalise(groups["v"])
            if value:
                found.append(Claim(holder, refined, value))
    for match in _SWITCH.finditer(text):
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


# --------------------------------------------------------------------------------------------
# By meaning: a statement's light shape, and whether a newer one replaces an older one
# --------------------------------------------------------------------------------------------

#: People a statement may be about instead of the speaker ("my sister lives in Oslo"): whose a
#: fact is, not what it says. A statement about one of them never supersedes the speaker's own.
_PEOPLE = frozenset(
    [
        "mum",
        "mom",
        "mother",
        "dad",
        "father",
        "parents",
        "folks",
        "grandparents",
        "sister",
        "brother",
        "son",
        "daughter",
        "kids",
        "children",
        "wife",
        "husband",
        "partner",
        "boyfriend",
        "girlfriend",
        "fiance",
        "fiancee",
        "spouse",
        "cousin",
        "aunt",
        "uncle",
        "grandmother",
        "grandma",
        "grandfather",
        "grandpa",
        "oma",
        "opa",
        "nan",
        "niece",
        "nephew",
        "friend",
        "mate",
        "flatmate",
        "roommate",
        "neighbour",
        "neighbor",
        "boss",
        "colleague",
        "coworker",
        "sister-in-law",
        "brother-in-law",
        "mother-in-law",
        "father-in-law",
    ]
)
#: Several words for one person ("Oma" after "my grandmother"): each maps to the one compared.
_KIN = {
    "oma": "grandmother",
    "grandma": "grandmother",
    "granny": "grandmother",
    "nan": "grandmother",
    "opa": "grandfather",
    "grandpa": "grandfather",
    "mum": "mother",
    "mom": "mother",
    "dad": "father",
    "fiancee": "fiance",
    "coworker": "colleague",
    "neighbor": "neighbour",
    "roommate": "flatmate",
    "folks": "parents",
}
#: Two people named together ("Mum and Dad", "my grandma and grandpa") as the one word for both.
_GROUPS = {
    frozenset({"mother", "father"}): "parents",
    frozenset({"grandmother", "grandfather"}): "grandparents",
}
_PAIR = re.compile(r"^(?:(?:my|our)\s+)?([a-z-]+)\s+(?:and|&)\s+(?:(?:my|our)\s+)?([a-z-]+)\b", re.IGNORECASE)


def _person(word: str) -> str:
    """One of `_PEOPLE` as compared: "Oma", "grandma" and "grandmother" are one person."""
    return _KIN.get(word, word)


def _pair(opening: str) -> str | None:
    """Whose fact a statement opening with two people is ("Mum and Dad have settled in Nice"):
    the one word for both (`_GROUPS`: "parents"), or both words for a pair no word names; None
    when the opening names no two of `_PEOPLE` ("Luca and I ...")."""
    match = _PAIR.match(opening)
    if match is None:
        return None
    a, b = (w.lower() for w in match.groups())
    if a not in _PEOPLE or b not in _PEOPLE:
        return None
    both = frozenset({_person(a), _person(b)})
    return _GROUPS.get(both, " and ".join(sorted(both)))


#: Words that say a value ended or was replaced ("left", "switched", "no longer"): strong enough
#: to tell an update that names the old value again ("I left Initech and joined Globex") from a
#: restatement of it.
_ENDED = re.compile(
    r"\b(?:moved|moving|relocated|switched|switching|changed|swapped|left|quit|quitting|stopped|"
    r"no longer|not\s+\w+\s+anymore|anymore|any more|instead|replaced|sold|retired|became|"
    r"promoted|dropped|gave up|given up|cancell?ed|broke up|from now on|turns out|transferred|"
    r"upgraded|downgraded|rebooked|rescheduled|postponed|pushed|pulled|slipped|raised|cut|reset|"
    r"renamed|ended|took over|takes over|handed|stepped down|fell through|passed away|last day|"
    r"closed|shut down|binned|ditched|got rid of|(?:the|my|our) (?:old|former))\b",
    re.IGNORECASE,
)
#: Words that say something began, weaker: enough beside a new value, not beside the old one.
_BEGAN = re.compile(
    r"\b(?:new|newly|now|finally|since|started|starting|joined|joining|got|passed|graduated|"
    r"settled|down to|up to|bumped|first week|first day|actually|these days|no more)\b",
    re.IGNORECASE,
)
#: Words that say a second value is added beside the first ("we also got a dog").
#: "too" adds only where it ends its clause ("there, too"); before a word it says "very" ("flat
#: whites feel too heavy").
_ADDS = re.compile(
    r"\b(?:also|too(?!\s+[a-z])|as well|another|second|added|in addition|on top of|besides|extra|both)\b",
    re.IGNORECASE,
)
#: Words that say the value still holds ("still vegan").
_STILL = re.compile(r"\b(?:still|same as (?:always|ever|before)|as always|as usual|as ever)\b", re.IGNORECASE)
#: Filler a turn may open with before its subject.
_FILLER = re.compile(
    r"^(?:(?:so|ok|okay|well|oh|yeah|yes|and|but|honestly|btw|anyway|hey|hi|lol|update|big news|"
    r"heads up|fyi|guess what|ugh|finally|also)\b[\s,:!.-]*)+",
    re.IGNORECASE,
)
#: Words that ride along in a subject without changing what it is ("my new manager", "my
#: favourite band these days").
_NOT_SUBJECT = frozenset(
    ["new", "current", "old", "usual", "actual", "these", "those", "days", "now", "currently", "still"]
)
_SELF_START = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|we|we're|we've|we'd|me|us)\b", re.IGNORECASE)
_OWNED = re.compile(
    r"^(?:my|our|the)\s+((?:[a-z-]+(?:'s)?\s+){0,3}?[a-z-]+(?:'s)?)\s+(?:is|are|was|were|has|have|had|will|got|lives|live|works|work|moved|'s)\b",
    re.IGNORECASE,
)
#: Numbers, and capitalised words inside a sentence (names): the values a statement names.
_PARTICULAR = re.compile(r"(?<![\w])(?:\d[\d.,:/-]*\d|\d)|(?<=[\w,;:] )(?!I\b|I')[A-Z][\w'+.-]*[\w+]")
#: A capitalised word opening a sentence: a name or just a capital, so it only counts as shared.
_INITIAL = re.compile(r"(?:^|(?<=[.!?] ))[A-Z][\w'+-]*[\w+]")
_REQUEST = re.compile(
    r"^(?:give|tell|help|recommend|remind|explain|summari[sz]e|write|make|find|show|suggest|list|"
    r"plan|please|can you|could you|would you|any tips|what's a|what is a|how do|how can|is it)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:who|what|when|where|why|how|which|is|are|do|does|did|can|could|would|should|will|shall|any)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Shape:
    """A statement read lightly, for comparing it with another by the same speaker: whose fact
    it is (``holder``: "self", a person of `_PEOPLE`, or None when it does not say), what it is
    about when it names that (``subject``: "manager" in "My manager is Priya"), the particulars
    it names (numbers, names), and whether it says a value changed, was added or still holds."""

    statement: bool
    holder: str | None
    subject: str | None
    #: Every subject the statement names of its holder's things: the opening's and a later
    #: clause's ("The building was sold, our new landlord is a company called Vonovia": the
    #: building and the landlord).
    subjects: frozenset[str]
    #: Its words but stopwords, lower case and singular: what two statements say alike.
    words: frozenset[str]
    particulars: frozenset[str]
    #: Capitalised words opening a sentence (maybe names, maybe not): compared, never new.
    initials: frozenset[str]
    ended: bool
    began: bool
    adds: bool
    still: bool


def _value(word: str) -> str:
    """A particular as compared: lower case, no possessive, no thousands separator."""
    word = word.lower().replace(",", "").rstrip(".")
    return word[:-2] if word.endswith("'s") else word


def _opening(text: str) -> str:
    return _FILLER.sub("", " ".join(text.replace("\u2019", "'").split())).strip()


#: Where a later clause of a statement begins: after a stop or a comma, or at "and", "but", "so".
_CLAUSE = re.compile(r"[.;,!?]\s+|\s+(?:and|but|so)\s+", re.IGNORECASE)


def _clause_subject(clause: str, particulars: frozenset[str]) -> str | None:
    """The subject a later clause names of the speaker's own things ("our new landlord is ..."),
    or None (it names none, or a person's: "my sister's car is ...")."""
    owned = _OWNED.match(clause)
    if owned is None or not clause.lower().startswith(("my ", "our ")):
        return None
    words = owned.group(1).lower().split()
    if words[0].endswith("'s") or words[-1] in _PEOPLE:
        return None
    return " ".join(w for w in words if w not in _NOT_SUBJECT and _value(w) not in particulars) or None


#: A clause that opens with a subject states something ("the old one is going away"); one that
#: opens otherwise is a fragment of the request before it ("for two", "as soon as possible").
_STATES = re.compile(
    r"^(?:i|i'm|i've|we|we're|we've|it|it's|he|she|they|they're|the|my|our|his|her|their|this|that)\b",
    re.IGNORECASE,
)


def _stems(text: str) -> frozenset[str]:
    """The words of ``text`` that are not stopwords, lower case, a plural's "s" dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in STOPWORDS)


def _asks(sentence: str) -> bool:
    """Whether a sentence only asks: a question, or a request none of whose clauses states
    anything ("Please use my new address from now on, the old one is going away" states that the
    old one is going away)."""
    if sentence.rstrip().endswith("?"):
        return True
    opening, *clauses = [c for c in re.split(r",\s+|;\s+|\s+-+\s+|\s+—\s+", sentence) if c.strip()]
    if not (_QUESTION.match(_opening(opening)) or _REQUEST.match(_opening(opening))):
        return False
    return not any(_STATES.match(c) and not _QUESTION.match(c) for c in clauses)


@lru_cache(maxsize=4096)
def shape(text: str) -> Shape:
    """The light shape of ``text`` (`Shape`). Kept for the texts read last: a write reads the
    shapes of the earlier statements it is compared with, mostly the same ones as the write
    before it."""
    flat = " ".join(text.replace("\u2019", "'").split())
    opening = _opening(flat)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", flat) if s.strip()]
    asks = bool(sentences) and all(_asks(s) for s in sentences)
    holder: str | None = None
    subject: str | None = None
    first = opening.split(" ", 1)[0].lower().strip(",.!:") if opening else ""
    owned = _OWNED.match(opening)
    pair = _pair(opening)
    if pair is not None:
        holder = pair
    elif owned is not None:
        phrase = owned.group(1).lower()
        words = phrase.split()
        if words[0].endswith("'s") and words[0][:-2] in _PEOPLE:  # "my wife's car": hers
            holder, subject = _person(words[0][:-2]), " ".join(words[1:]) or None
        elif phrase in _PEOPLE or any(w in _PEOPLE for w in words):
            # a person anywhere in it, named or not: "my sister Ines is ...", "my best mate Owen"
            holder = _person(phrase if phrase in _PEOPLE else next(w for w in words if w in _PEOPLE))
        else:
            holder = "self" if opening.lower().startswith(("my ", "our ")) else None
            subject = " ".join(w for w in words if w not in _NOT_SUBJECT)
    elif _SELF_START.match(opening):
        holder = "self"
    elif first in _PEOPLE:
        holder = _person(first)
    particulars = frozenset(_value(m.group(0)) for m in _PARTICULAR.finditer(flat))
    if subject is not None:  # a name is a value, not what the statement is about ("the new Hokas")
        subject = " ".join(w for w in subject.split() if _value(w) not in particulars)
    initials = frozenset(_value(m.group(0)) for m in _INITIAL.finditer(opening)) - STOPWORDS
    later = (_clause_subject(c, particulars) for c in _CLAUSE.split(opening)[1:])
    return Shape(
        statement=not asks and bool(opening),
        holder=holder,
        subject=subject or None,
        subjects=frozenset(x for x in (subject, *later) if x),
        words=_stems(flat),
        particulars=particulars,
        initials=initials - particulars,
        ended=bool(_ENDED.search(flat)),
        began=bool(_BEGAN.search(flat)),
        adds=bool(_ADDS.search(flat)),
        still=bool(_STILL.search(flat)),
    )


#: How near (cosine of their stored vectors) two statements must be to be about the same thing;
#: chosen on half A of benchmarks/data/knowledge_update, with `services.superseding.STANDS_OUT`.
#: A writer with an embedder compares their own vectors instead (`services.superseding.OWN_SAME_THING`).
SAME_THING = 0.65


def _kind(particular: str) -> str:
    """A number or a name: values are replaced by values of their kind (a date by a date)."""
    return "number" if particular[:1].isdigit() else "name"


def _same_kind(novel: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a new particular is of a kind the older statement named ("Shopify" beside
    "Amazon", "9" beside "2"), not a detail of another kind ("2,000 notes" in an Obsidian vault)."""
    return bool({_kind(p) for p in novel} & {_kind(p) for p in named})


def same_attribute(new: Shape, old: Shape) -> bool:
    """Whether two statements of one speaker may be about one attribute of one holder: both state
    something, neither names another holder or another subject than the other ("my sister" is not
    the speaker, "my mentor" not "my manager"), and neither opens with another name. Says nothing
    of whether the newer one replaces, restates or adds to the older (`replaces` does)."""
    if not (new.statement and old.statement):
        return False
    if new.holder and old.holder and new.holder != old.holder:
        return False
    if not (new.holder or old.holder) and new.initials and old.initials and not new.initials & old.initials:
        # Neither says whose fact it is, and each opens with a different capitalised word (a
        # name, most often): "Rosa left at 23:59" and "Sven arrived at 01:00" are two people's news.
        return False
    return not (new.subjects and old.subjects and not new.subjects & old.subjects)


def replaces(new: Shape, old: Shape, similarity: float, threshold: float = SAME_THING) -> bool:
    """Whether a newer statement replaces an older one of the same speaker."""
    if not same_attribute(new, old):
        return False
    if new.adds:
        return False
    named_old = old.particulars | old.initials
    novel = new.particulars - named_old
    shared = (new.particulars | new.initials) & named_old
    if shared and not new.ended and not (new.began and _same_kind(novel, named_old)):
        # Names the old value again without saying it ended: restates it ("Another year at
        # Globex"), unless it says something began and names a new value of the kind the old
        # one had ("First week at Shopify done, way better than Amazon's was"; "parents' evening
        # is now the 9th of April" after "the 2nd of April").
        return False
    if old.subjects and not (new.subjects or novel or shared or old.words & new.words):
        # The older one says what it is about ("Our weekly sync is ..."); the newer names no
        # subject of its own, no value and no word of the older one: nothing ties the two but
        # nearness ("The new season of my favourite baking show starts next week").
        return False
    if not (novel or new.ended or new.began):  # says nothing new
        return False
    if new.still and not novel:
        return False
    return similarity >= threshold
