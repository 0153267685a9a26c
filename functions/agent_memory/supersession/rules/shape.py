"""Whether a newer statement replaces an older one of the same speaker, by its light shape, for
what no pattern of `supersession.rules.claims` reads.

Conversation says the same things in a thousand other ways ("finally unpacked the last boxes in
our new flat in Lisbon"), so two statements near by meaning (their vectors' cosine, which the
caller has) replace one another when their light structure says one value took another's place:
the same holder (the speaker, "my sister", "Mum and Dad" for "my parents"; not a person named in
the possessive, "Yasmin's birthday") and subject ("my manager", not "my mentor"; "the theory test",
not "the practical test"), a new value (a name, a number, a number said in words where the older
one named a number) or a word of change, the same verb when both open with one ("I work in Porto"
is not "I live in Lisbon", unless a word says it changed), and neither "also" nor a restatement
(the old value named again, unless beside a new one of its kind and a word of beginning); a newer
statement that names no subject, value or word of an older one that names its subject is not
tied to it. Whose fact a statement is reads from a person word in its opening, whatever the verb
("my wife drives ..."), with a word that says which of several ("my younger sister"), and a named
person's thing is theirs ("Olivia's manager is Derek" after "My manager is Olivia").

At write time (``replaces(..., named_anew=True)``), a statement that names the old value, person
or thing again beside a new name of the kind the older one named replaces it without a word of
change ("Marta went back to Poland, so a lovely lady called Gloria does Thursdays"), where the
writer also asks that the two stand out from the holder's other statements; not in a turn of one
day's news ("this morning"), which names who was there that day.

Neither a countdown ("3 seconds left": its number is no value, its "left" no ending) nor a text
shouted in capitals (its capitals are no names) names a value.

Pure (no I/O).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache

from agent_memory.model.words import STOPWORDS
from agent_memory.supersession.rules.claims import SELF
from agent_memory.supersession.rules.numbers import NUMBER_WORDS as _NUMBER_WORDS
from agent_memory.supersession.rules.numbers import amount_changed, numbers_in
from agent_memory.supersession.rules.people import PEOPLE, kin_holder, pair_holder, person


def _any_of(words: str, *, opening: bool = False) -> re.Pattern[str]:
    """``words`` (an alternation) as whole words in any case: anywhere, or only where a text opens
    (``opening``). The shape's cue words are all read alike."""
    return re.compile(("^" if opening else r"\b") + f"(?:{words})\\b", re.IGNORECASE)


#: Words that say a value ended or was replaced ("left", "switched", "no longer"): strong enough
#: to tell an update that names the old value again ("I left Initech and joined Globex") from a
#: restatement of it.
_ENDED = _any_of(
    r"moved|moving|relocated|switched|switching|changed|swapped|left|quit|quitting|stopped|"
    r"no longer|not\s+\w+\s+anymore|anymore|any more|instead|replaced|sold|retired|became|"
    r"promoted|dropped|gave up|given up|cancell?ed|broke up|from now on|turns out|transferred|"
    r"upgraded|downgraded|rebooked|rescheduled|postponed|pushed|pulled|slipped|raised|cut|reset|"
    r"renamed|ended|took over|takes over|handed|stepped down|fell through|passed away|last day|"
    r"closed|shut down|binned|ditched|got rid of|(?:the|my|our) (?:old|former)|switch(?:es)? to|"
    r"(?:is|are|'s) going (?:up |down )?to (?=\d|[£$€]|a hundred|(?:" + _NUMBER_WORDS + r")\b)"
)
#: "Left" after a span of time says what remains ("two weeks left until the deadline", a countdown
#: "2 secs left"), not what ended; nor is the span's number a value: taken out, with its number,
#: before the shape reads a text.
_REMAINING = re.compile(
    r"\b(?:(?:\d+|an?|" + _NUMBER_WORDS + r")[\s-]*)?"
    r"(?:secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?)\s+(?:left|to go)\b",
    re.IGNORECASE,
)
#: Words that say something began, weaker: enough beside a new value, not beside the old one.
_BEGAN = _any_of(
    r"new|newly|now|finally|since|started|starting|joined|joining|got|passed|graduated|"
    r"settled|(?:down|up) to (?=\d|a hundred|(?:" + _NUMBER_WORDS + r")\b)|bumped|first week|first day|"
    r"actually|these days|no more"
)
#: Words that say a second value is added beside the first ("we also got a dog").
#: "too" adds only where it ends its clause ("there, too"); before a word it says "very" ("flat
#: whites feel too heavy").
_ADDS = _any_of(r"also|too(?!\s+[a-z])|as well|another|second|added|in addition|on top of|besides|extra|both")
#: Words that say one more thing was taken on ("opened an account with ...", "picked up a
#: camera"): an addition, unless the statement also says something ended ("sold the licence and
#: opened a bakery").
_TAKEN_ON = _any_of(r"(?:opened|picked up|took out|set up) (?:a|an)")
#: Words that say the value still holds ("still vegan").
_STILL = _any_of(r"still|same as (?:always|ever|before)|as always|as usual|as ever")
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
_SELF_START = _any_of(r"i|i'm|i've|i'd|i'll|im|we|we're|we've|we'd|me|us", opening=True)
_OWNED = re.compile(
    r"^(?:my|our|the)\s+((?:[a-z-]+(?:'s)?\s+){0,3}?[a-z-]+(?:'s)?)\s+(?:is|are|was|were|has|have|had|will|got|lives|live|works|work|moved|'s)\b",
    re.IGNORECASE,
)
#: Numbers, and capitalised words inside a sentence (names): the values a statement names.
_PARTICULAR = re.compile(r"(?<![\w])(?:\d[\d.,:/-]*\d|\d)|(?<=[\w,;:] )(?!I\b|I')[A-Z][\w'+.-]*[\w+]")
#: A capitalised word opening a sentence: a name or just a capital, so it only counts as shared.
_INITIAL = re.compile(r"(?:^|(?<=[.!?] ))[A-Z][\w'+-]*[\w+]")
_REQUEST = _any_of(
    r"give|tell|help|recommend|remind|explain|summari[sz]e|write|make|find|show|suggest|list|"
    r"plan|please|can you|could you|would you|any tips|what's a|what is a|how do|how can|is it",
    opening=True,
)
_QUESTION = _any_of(
    r"who|what|when|where|why|how|which|is|are|do|does|did|can|could|would|should|will|shall|any",
    opening=True,
)


#: A statement opening with someone's name in the possessive ("Yasmin's birthday is ..."): that
#: person's fact, not the speaker's.
_NAMED = re.compile(r"^([A-Z][a-z]+)'s\s+[a-z]")
#: ... and what of theirs it is about, when a verb follows ("Olivia's manager is a guy called Derek").
_NAMED_OWNED = re.compile(
    r"^[A-Z][a-z]+'s\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:is|are|was|were|has|have|had|will)\b"
)
#: Words that place what a statement tells within one day.
_MOMENT = re.compile(
    r"\b(?:today|yesterday|tonight|this (?:morning|afternoon|evening)|last night)\b", re.IGNORECASE
)
#: Words of a wish, a plan or a maybe.
_WISH = _any_of(
    r"thinking (?:about|of)|want to|wanna|(?:would|'d) (?:like|love) to|hop(?:e|ing) to|plan(?:ning)? to|"
    r"might|maybe|some ?day|considering|if only|wish|if (?:i|we) ever|one of these days|keep saying|"
    r"one day(?!\s+(?:a|per|each|every|left|late|early|off|at|after|before|later|old)\b)"
)
#: A word of a wish said not to be one ("I didn't want to follow"): a decision, not a plan.
_NEGATED = re.compile(r"(?:n't|\bnot|\bnever)\s+$", re.IGNORECASE)
#: A request to take note of something ("Please note that ..."): what follows is stated.
_NOTE = _any_of(r"(?:please\s+)?(?:note|be aware|keep in mind|remember)\s+that", opening=True)
#: Words that frame a statement as a story of the past ("Back when I lived in Hull we had a
#: cat", "when I was a student in Porto", "we used to live by the sea"): what held then, not a
#: value that holds now, unless the statement also says what changed ("used to live in Berlin,
#: now Lisbon").
_PAST_FRAME = _any_of(
    r"back (?:when|then|in the day)|used to|when (?:i|we) (?:was|were|lived|worked|had|still)|"
    r"years ago|as a (?:kid|child|teenager)|growing up|in my (?:twenties|teens|thirties)"
)
#: A statement opening with a name and the speaker ("Camille and I ...").
_BESIDE_SPEAKER = re.compile(r"^([A-Z][\w'-]*) and (?:I|me|we)\b")
#: How a holder known only by name is written (`Shape.holder`), to tell it from a word of `PEOPLE`.
_NAMED_HOLDER = "name:"
#: The verb after a first-person opening, past the adverbs that may stand before it.
_FIRST_VERB = re.compile(
    r"^(?:i|we)\s+(?:(?:now|just|still|currently|mostly|usually|also|really|actually|only|always|"
    r"often|finally|recently|both)\s+)*([a-z]+)\b",
    re.IGNORECASE,
)
_NOT_VERB = frozenset(
    ["am", "are", "was", "were", "be", "been", "have", "has", "had", "do", "does", "did", "will",
     "would", "can", "could", "should", "shall", "may", "might", "must", "got", "get", "gets"]
)  # fmt: skip


def _verb(opening: str) -> str | None:
    """The verb a first-person statement opens with, stemmed ("lives", "lived", "living": "liv")."""
    match = _FIRST_VERB.match(opening)
    if match is None or (word := match.group(1).lower()) in _NOT_VERB:
        return None
    return re.sub(r"(?:ing|ed|es|s|e)$", "", word) or word


@dataclass(frozen=True, slots=True)
class Shape:
    """A statement read lightly, for comparing it with another by the same speaker: whose fact
    it is (``holder``: "self", a person of `PEOPLE`, or None when it does not say), what it is
    about when it names that (``subject``: "manager" in "My manager is Priya"), the particulars
    it names (numbers, names), and whether it says a value changed, was added or still holds."""

    statement: bool
    holder: str | None
    subject: str | None
    #: Every subject the statement names of its holder's things: the opening's and a later
    #: clause's ("The building was sold, our new landlord is a company called Vonovia": the
    #: building and the landlord).
    subjects: frozenset[str]
    #: What a later clause opening with "the" is about ("I'm learning to drive, the practical test
    #: is in May": the practical test). Not the speaker's for sure, so only compared by its head
    #: noun with the other statement's subjects (`same_attribute`).
    things: frozenset[str]
    #: Its words but stopwords, lower case and singular: what two statements say alike.
    words: frozenset[str]
    particulars: frozenset[str]
    #: Capitalised words opening a sentence (maybe names, maybe not): compared, never new.
    initials: frozenset[str]
    ended: bool
    began: bool
    adds: bool
    still: bool
    #: The verb a first-person statement opens with ("I *work* in Porto", "we *pay* for
    #: Netflix"), crudely stemmed; None when it opens otherwise or with a form of "be" or "have".
    verb: str | None = None
    #: The numbers it says in words, as digits (also among ``particulars``).
    spelled: frozenset[str] = frozenset()
    #: The name it opens with beside the speaker ("Camille and I ..."), as compared.
    beside_speaker: str | None = None
    #: Whether it tells of a moment of one day ("this morning", "last night"): news, not a value
    #: that holds until another replaces it.
    moment: bool = False
    #: Whether it tells of a wish, a plan or a maybe ("thinking about taking a pottery class some
    #: day"): what may come, not what holds.
    wish: bool = False
    #: Whether it tells a story of the past and says nothing changed ("Back when we lived in
    #: Hull we kept chickens"): what held then, not what holds now.
    past: bool = False
    #: The amounts it says, as (unit, value) pairs (`supersession.rules.numbers.amounts`).
    amounts: frozenset[tuple[str, str]] = frozenset()


_NOT_UPPER = str.maketrans("", "", string.ascii_uppercase)
_NOT_LETTER = str.maketrans("", "", string.ascii_letters)


def _shouted(text: str) -> bool:
    """Whether ``text`` is written in capitals ("WHAT A GAME, WON IT AT THE BUZZER"): its capitals
    then tell no name from a word, so only its numbers are particulars."""
    upper = len(text) - len(text.translate(_NOT_UPPER))
    return upper > 0.6 * (len(text) - len(text.translate(_NOT_LETTER)))


def _value(word: str) -> str:
    """A particular as compared: lower case, no possessive, no thousands separator."""
    word = word.lower().replace(",", "").rstrip(".")
    return word[:-2] if word.endswith("'s") else word


def _first_words(opening: str) -> list[str]:
    """The first four words of an opening after "my" or "our", lower case, without punctuation."""
    return [w.strip(",.!:;") for w in opening.lower().split()[1:5]]


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
    if words[0].endswith("'s") or words[-1] in PEOPLE:
        return None
    return " ".join(w for w in words if w not in _NOT_SUBJECT and _value(w) not in particulars) or None


def _clause_thing(clause: str) -> str | None:
    """What a later clause opening with "the" names as its subject ("the practical test is in
    May"), or None."""
    owned = _OWNED.match(clause)
    if owned is None or not clause.lower().startswith("the "):
        return None
    words = [w for w in owned.group(1).lower().split() if w not in _NOT_SUBJECT]
    return " ".join(words) if len(words) > 1 else None


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
    if not (_QUESTION.match(_opening(opening)) or _REQUEST.match(_opening(opening))) or _NOTE.match(
        _opening(sentence)
    ):
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
    pair = pair_holder(opening)
    if pair is not None:
        holder = pair
    elif owned is not None:
        phrase = owned.group(1).lower()
        words = phrase.split()
        if words[0].endswith("'s") and words[0][:-2] in PEOPLE:  # "my wife's car": hers
            holder, subject = person(words[0][:-2]), " ".join(words[1:]) or None
        elif (kin := kin_holder(words)) is not None:
            # a person anywhere in it, named or not: "my sister Ines is ...", "my best mate Owen"
            holder = kin
        else:
            holder = "self" if opening.lower().startswith(("my ", "our ")) else None
            subject = " ".join(w for w in words if w not in _NOT_SUBJECT)
    elif _SELF_START.match(opening):
        holder = "self"
    elif (
        opening.lower().startswith(("my ", "our ")) and (kin := kin_holder(_first_words(opening))) is not None
    ):
        # "My wife drives a red Mini", "my younger sister has settled in Tromsø": theirs, whatever
        # the verb
        holder = kin
    elif first in PEOPLE:
        holder = person(first)
    elif (named := _NAMED.match(opening)) is not None and named.group(1).lower() not in PEOPLE:
        holder = _NAMED_HOLDER + named.group(1).lower()
        if (thing := _NAMED_OWNED.match(opening)) is not None:  # "Olivia's manager is ...": her manager
            subject = " ".join(w for w in thing.group(1).lower().split() if w not in _NOT_SUBJECT)
    low = flat.lower()
    # "2 secs left": neither a value nor an ending (the pattern only read where it may match)
    told = _REMAINING.sub("", flat) if "left" in low or "to go" in low else flat
    said = numbers_in(told)
    spelled = said.spelled
    found = [m.group(0) for m in _PARTICULAR.finditer(told)]
    if any(not p[:1].isdigit() for p in found) and _shouted(told):
        found = [p for p in found if p[:1].isdigit()]
    particulars = frozenset(_value(p) for p in found) | spelled
    if subject is not None:  # a name is a value, not what the statement is about ("the new Hokas")
        subject = " ".join(w for w in subject.split() if _value(w) not in particulars)
    initials = frozenset(_value(m.group(0)) for m in _INITIAL.finditer(opening)) - STOPWORDS
    clauses = _CLAUSE.split(opening)[1:]
    later = (_clause_subject(c, particulars) for c in clauses)
    aside = (_clause_thing(c) for c in clauses)
    return Shape(
        statement=not asks and bool(opening),
        holder=holder,
        subject=subject or None,
        subjects=frozenset(x for x in (subject, *later) if x),
        things=frozenset(x for x in aside if x),
        words=_stems(flat),
        particulars=particulars,
        initials=initials - particulars,
        ended=(ended := bool(_ENDED.search(told))),
        began=(began := bool(_BEGAN.search(flat))),
        adds=bool(_ADDS.search(flat)) or (not ended and bool(_TAKEN_ON.search(flat))),
        still=bool(_STILL.search(flat)),
        verb=_verb(opening),
        spelled=spelled,
        beside_speaker=_value(m.group(1)) if (m := _BESIDE_SPEAKER.match(opening)) else None,
        moment=bool(_MOMENT.search(flat)),
        wish=any(not _NEGATED.search(flat, 0, m.start()) for m in _WISH.finditer(flat)),
        past=bool(_PAST_FRAME.search(flat)) and not (ended or began),
        amounts=said.amounts,
    )


#: How near (cosine of their stored vectors) two statements must be to be about the same thing;
#: chosen on half A of benchmarks/data/knowledge_update, with `supersession.marking.STANDS_OUT`.
#: A writer with an embedder compares their own vectors instead (`supersession.marking.OWN_SAME_THING`).
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
    if _person_named(new, old) or _person_named(old, new) or _their_own(new, old) or _their_own(old, new):
        # "Yasmin's birthday is ..." after "My birthday is ...": hers, not the speaker's.
        return False
    if new.holder and old.holder and new.holder != old.holder and not _named(new.holder, old.holder):
        # Two people, or a person and the speaker; a name the other does not use as a word and a
        # word of `PEOPLE` ("Masha" and "my daughter") may be one person.
        return False
    if (
        not (new.holder or old.holder)
        and new.initials
        and old.initials
        and not new.initials & old.initials
        and not _said_by(new.initials, old)
        and not _said_by(old.initials, new)
    ):
        # Neither says whose fact it is, and each opens with a different capitalised word (a
        # name, most often): "Rosa left at 23:59" and "Sven arrived at 01:00" are two people's news.
        # A capital the other statement says as a word is a sentence's first word, not a name
        # ("Registration came in at ..." after "Hockey registration for Ava was ...").
        return False
    if _same_head(new.subjects | new.things, old.subjects | old.things):
        # "the theory test" and "the practical test": one kind of thing, two of them.
        return False
    return not (new.subjects and old.subjects and not new.subjects & old.subjects)


def _said_by(initials: frozenset[str], other: Shape) -> bool:
    """Whether ``other`` says one of ``initials`` as a word of its own."""
    return bool(_stems(" ".join(initials)) & other.words)


def _same_head(new: frozenset[str], old: frozenset[str]) -> bool:
    """Whether two statements name things of one kind but not the same one: subjects whose last
    word is the same and whose words before it differ ("theory test", "practical test")."""
    return any(
        a != b and a.split()[-1] == b.split()[-1] and len(a.split()) > 1 and len(b.split()) > 1
        for a in new
        for b in old
    )


#: Names of days and months: when something happens, not a value of the kind a name is.
_CALENDAR = frozenset(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
     "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
)  # fmt: skip


def _named_anew(new: Shape, novel: frozenset[str], shared: frozenset[str], named_old: frozenset[str]) -> bool:
    """Whether a newer statement that names something of the older one again also names a new
    name where the older one named one ("Marta went back to Poland, so a lovely lady called Gloria
    does Thursdays" after "Our cleaner is Marta"; "Karim says his flat in Toronto is freezing,
    Dubai never prepared him" after "My brother Karim lives in Dubai"): the shared name is whose
    fact it is, or the value that went, and the new name is what holds now. Not when it opens
    with the shared name beside the speaker ("Camille and I just had our anniversary"): the two
    are still together; nor in a turn of one day's news ("Rev. Hale and a visiting Bishop Osei
    took the service this morning"), which names who was there that day. Days and months are
    when, not a new value."""
    names = {p for p in novel if _kind(p) == "name" and p.rstrip("s") not in _CALENDAR}
    if new.moment or not names or not _same_kind(frozenset(names), named_old):
        return False
    return new.beside_speaker not in shared


def _person_named(one: Shape, other: Shape) -> bool:
    """Whether ``one`` is a named person's fact and ``other`` the speaker's: the name opens ``one``
    in the possessive and ``other`` does not use it as a word ("Handicap's down to 12" after "My
    handicap is 18" names no person: a sentence's first capital is no proof of a name)."""
    if one.holder is None or not one.holder.startswith(_NAMED_HOLDER) or other.holder != SELF:
        return False
    return one.holder.removeprefix(_NAMED_HOLDER) not in other.words


def _their_own(one: Shape, other: Shape) -> bool:
    """Whether ``one`` is about a named person's thing that ``other`` names as its holder's own:
    "Olivia's manager is Derek" after "My manager is Olivia" is her manager, not the speaker's,
    though the older statement names her."""
    return bool(
        one.holder
        and one.holder.startswith(_NAMED_HOLDER)
        and one.subject
        and other.holder != one.holder
        and one.subject in other.subjects
    )


def _named(a: str, b: str) -> bool:
    """Whether one of two holders is known by a name only (whether it is the other is not known:
    `_person_named` says when it is not)."""
    return a.startswith(_NAMED_HOLDER) != b.startswith(_NAMED_HOLDER)


def replaces(
    new: Shape, old: Shape, similarity: float, threshold: float = SAME_THING, *, named_anew: bool = False
) -> bool:
    """Whether a newer statement replaces an older one of the same speaker. ``named_anew``: one
    that names the old value, person or thing again beside a new name of the kind the older one
    named replaces it without a word of change (`_named_anew`); the write path asks for it,
    where the two must also stand out from the holder's other statements."""
    if not same_attribute(new, old):
        return False
    if new.verb and old.verb and new.verb != old.verb and not (new.ended or new.began):
        # "I work in Porto" after "I live in Lisbon": what each does differs, and the newer says
        # nothing changed, so it is another attribute of the same topic.
        return False
    if old.verb and not old.subjects and new.subject and not (new.ended or new.began):
        # "The studio where I paint is in Amsterdam" after "I live in Utrecht": what the speaker
        # does, then a thing of theirs, and nothing said to have changed.
        return False
    if amount_changed(new.amounts, old.amounts):
        # The same kind of amount with another value ("thirty-five a week now but i have to hang
        # the washing out too" after "$20 a week"): the amount changed, whatever else the newer
        # one adds or names again (the holder, "Ayaan ... £32 a week").
        return similarity >= threshold
    if new.adds:
        return False
    named_old = old.particulars | old.initials
    novel = new.particulars - named_old
    if not any(_kind(p) == "number" for p in old.particulars):
        # A number said in words is a value only where the older statement named one ("a solid
        # eight hours" after "six hours"); else it is a detail ("still vegan, going on three years").
        novel -= new.spelled
    shared = (new.particulars | new.initials) & named_old
    if (
        shared
        and not new.ended
        and not (new.began and _same_kind(novel, named_old))
        and not (named_anew and _named_anew(new, novel, shared, named_old))
    ):
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
