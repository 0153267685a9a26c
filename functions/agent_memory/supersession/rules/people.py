"""Whose fact a statement is, by the people it names: "my sister lives in Oslo" is hers, "Oma" is
"my grandmother", "Mum and Dad" are "my parents", "my younger sister" is one of several sisters
(`supersession.rules.shape` reads the rest of a statement's shape).

Pure (no I/O).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: People a statement may be about instead of the speaker ("my sister lives in Oslo"): whose a
#: fact is, not what it says. A statement about one of them never supersedes the speaker's own.
PEOPLE = frozenset(
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


def person(word: str) -> str:
    """One of `PEOPLE` as compared: "Oma", "grandma" and "grandmother" are one person."""
    return _KIN.get(word, word)


#: Words before a person that say which of several is meant ("my younger sister"): one of them, not
#: known to be the one the plain word names elsewhere ("my sister lives in Bergen").
_ONE_OF = frozenset(
    ["younger", "older", "little", "big", "eldest", "oldest", "youngest", "middle", "other", "baby",
     "half", "step"]
)  # fmt: skip


def kin_holder(words: Sequence[str]) -> str | None:
    """The person of `PEOPLE` among ``words`` (in the possessive or not), as compared, with the
    word before it that says which of several ("younger sister"); None when none is named."""
    for i, word in enumerate(words):
        who = word.removesuffix("'s")
        if who in PEOPLE:
            qualifier = words[i - 1] if i > 0 and words[i - 1] in _ONE_OF else None
            return f"{qualifier} {person(who)}" if qualifier else person(who)
    return None


def pair_holder(opening: str) -> str | None:
    """Whose fact a statement opening with two people is ("Mum and Dad have settled in Nice"):
    the one word for both (`_GROUPS`: "parents"), or both words for a pair no word names; None
    when the opening names no two of `PEOPLE` ("Luca and I ...")."""
    match = _PAIR.match(opening)
    if match is None:
        return None
    a, b = (w.lower() for w in match.groups())
    if a not in PEOPLE or b not in PEOPLE:
        return None
    both = frozenset({person(a), person(b)})
    return _GROUPS.get(both, " and ".join(sorted(both)))
