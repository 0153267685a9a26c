"""Numbers in what people say: said in words ("two thousand and forty") and as amounts, a number
with what it counts ("£32 a week", "eighteen hours every week", "R250 a day").

An amount is what lets two statements of one holder read as one quantity changing when nothing
else in their wording says so ("mum gives me $20 a week" → "thirty-five a week now but i have to
hang the washing out too"): the same kind of amount, another value. Only the words around the
number are read, so it knows nothing of what the amount is for; `supersession.rules.shape.replaces`
asks it only of two statements it already found to be of one holder and one attribute.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agent_memory.model.words import STOPWORDS

_UNITS = {
    w: n
    for n, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen"]
    )
}  # fmt: skip
_TENS = {
    w: 10 * n
    for n, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2)
}
_SCALES = {"hundred": 100, "thousand": 1000}
NUMBER_WORDS = "|".join([*_UNITS, *_TENS, *_SCALES])
#: A number said in words ("seventy-four", "a hundred", "two thousand and forty"); "one" alone is
#: as often a pronoun ("the old one") and is not read.
_SPELLED = re.compile(
    rf"\b(?:a\s+(?=hundred|thousand))?(?:(?:{NUMBER_WORDS})\b(?:[\s-]+(?:and\s+)?(?=(?:{NUMBER_WORDS})\b))?)+",
    re.IGNORECASE,
)


def _number(words: str) -> int | None:
    """The value of a number said in words, or None when its words make none ("ten thirty")."""
    total, part, last = 0, 0, ""
    for word in re.findall(r"[a-z]+", words.lower()):
        if word in ("a", "and"):  # "a hundred", "two thousand and forty"
            continue
        if word in _SCALES:
            part = (part or 1) * _SCALES[word]
            if _SCALES[word] == 1000:
                total, part = total + part, 0
        elif word in _TENS:
            if part % 100 and last not in _SCALES:
                return None
            part += _TENS[word]
        else:
            if last in _UNITS or (part % 10 and last not in _SCALES):
                return None
            part += _UNITS[word]
        last = word
    return total + part


def _spelled(text: str) -> list[tuple[int, int]]:
    """Each number ``text`` says in words, as its value and where its words end."""
    out: list[tuple[int, int]] = []
    for match in _SPELLED.finditer(text):
        said = match.group(0).strip(" -")
        value = _number(said) if said.lower() != "one" else None
        if value is not None:
            out.append((value, match.end()))
    return out


#: Currency signs, as the word an amount's unit is compared by ("£32" and "twenty-five pounds").
_CURRENCY = {"£": "pound", "$": "dollar", "€": "euro", "₹": "rupee", "¥": "yen", "r": "rand"}
#: Units that are money, by sign or by name.
CURRENCIES = frozenset([*_CURRENCY.values(), "cedi", "shilling", "peso", "naira", "krona", "krone"])
#: Other names of one unit.
_ALIASES = {"quid": "pound", "buck": "dollar", "hr": "hour", "hrs": "hour", "min": "minute", "mins": "minute",
            "kilo": "kg", "kilogram": "kg", "milligram": "mg"}  # fmt: skip
#: Words that count time: after a number alone they say how long ("eleven years behind the
#: counter", "7 years old"), an age or a tally, not an amount; after "a", "per", "every" they are
#: an amount's period ("£32 a week").
_DURATIONS = frozenset(
    ["year", "month", "week", "day", "hour", "minute", "second", "decade", "time", "night"]
)
#: A number in digits, with a currency sign before it maybe; not part of a time ("7:15"), a
#: date ("12/03"), a word ("2nd", "5k", "A1C") or a longer number.
_DIGITS = re.compile(
    r"(?<![\w.,:/])([£$€₹¥]|\br(?=\d))?\s?(\d(?:[\d,]*\d)?(?:\.\d+)?)(?![\w:/]|[.,]\d)", re.IGNORECASE
)
#: What follows an amount: the word it counts ("pounds", "hours", "cedis"), after "a", "per",
#: "every" its period, and after the word counted a period too ("hours every week").
_PERIOD = r"(?:a|an|per|every|each|for\s+the|the|a\s+whole)"
_AFTER = re.compile(rf"\s*(?:({_PERIOD})\s+)?([a-z]+)(?:\s+{_PERIOD}\s+([a-z]+))?", re.IGNORECASE)
#: Words after a number that are not what it counts ("twenty so is fine", "5 more", "30 old").
_NOT_UNITS = STOPWORDS | frozenset(["less", "instead", "every", "per", "old", "still", "already"])
#: ... nor a verb ("the 38 stopped running", "the 6 going to town").
_VERB_ENDINGS = ("ed", "ing")


def _unit(word: str) -> str:
    word = word.lower()
    word = word[:-1] if len(word) > 3 and word.endswith("s") else word
    return _ALIASES.get(word, word)


def _said_after(text: str, end: int) -> set[str]:
    """The units an amount ending at ``end`` is said with: the word it counts, when that is not
    a bare duration, and its period."""
    after = _AFTER.match(text, end)
    if after is None:
        return set()
    period, word, rate = after.group(1), after.group(2), after.group(3)
    units: set[str] = set()
    counted = _unit(word)
    if word.lower() not in _NOT_UNITS and not word.isdigit() and not word.lower().endswith(_VERB_ENDINGS):
        if period is not None:
            units.add(counted)  # "a week": a period, so a rate
        elif counted not in _DURATIONS or rate is not None:
            units.add(counted)  # "pounds", "hours every week"; not "eleven years" alone
    if rate is not None and rate.lower() not in _NOT_UNITS:
        units.add(_unit(rate))
    return units


class Numbers(NamedTuple):
    """What a text says in numbers, read in one pass over its number words."""

    #: The numbers it says in words, as digits (a value compares with its digits: "eight" after
    #: "6" is a new number, "eleven hundred" after "1,100" the same one).
    spelled: frozenset[str]
    #: Its amounts, as (unit, value) pairs, one for each unit an amount is said with ("£32 a
    #: week": ("pound", "32") and ("week", "32")); years ("in 2019") and numbers said with nothing
    #: they count are none.
    amounts: frozenset[tuple[str, str]]


def numbers_in(text: str) -> Numbers:
    """The numbers ``text`` says in words and the amounts it says (`Numbers`)."""
    out: set[tuple[str, str]] = set()
    for match in _DIGITS.finditer(text):
        sign, said = match.group(1), match.group(2)
        if sign is None and len(said) == 4 and said.startswith(("19", "20")):
            continue  # a year: a plain number from 1900 to 2099 with no currency sign
        units = _said_after(text, match.end())
        if sign is not None:
            units.add(_CURRENCY[sign.lower()])
        digits = said.replace(",", "")
        out.update((unit, digits) for unit in units)
    spelled = _spelled(text)
    for value, end in spelled:
        out.update((unit, str(value)) for unit in _said_after(text, end))
    return Numbers(frozenset(str(value) for value, _ in spelled), frozenset(out))


def amounts(text: str) -> frozenset[tuple[str, str]]:
    """The amounts ``text`` says (`Numbers.amounts`)."""
    return numbers_in(text).amounts


def changed_units(new: frozenset[tuple[str, str]], old: frozenset[tuple[str, str]]) -> frozenset[str]:
    """The units ``new`` says an amount of with a value ``old`` does not say for them ("week" for
    "thirty-five a week" after "$20 a week"); the old value said again beside it still counts
    ("from £900 to £1,000 a month")."""
    values: dict[str, set[str]] = {}
    for unit, value in old:
        values.setdefault(unit, set()).add(value)
    return frozenset(unit for unit, value in new if unit in values and value not in values[unit])


def amount_changed(new: frozenset[tuple[str, str]], old: frozenset[tuple[str, str]]) -> bool:
    """Whether ``new`` says an amount of a unit ``old`` says, with another value."""
    return bool(changed_units(new, old))


def counted_changed(new: frozenset[tuple[str, str]], old: frozenset[tuple[str, str]]) -> bool:
    """Whether the amount that changed is of a unit other than money: what it counts or its
    period ("hours", "a week"), not a currency alone, which any two prices share ("Electricity
    came to $140 this month" after "My rent is $2,300 a month")."""
    return bool(changed_units(new, old) - CURRENCIES)
