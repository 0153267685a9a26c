"""The numbers among personal data: payment card numbers, IBANs and phone numbers, as spans.

A pattern alone over-matches (every 16-digit order number would be a card, every date a phone),
so each candidate passes a validator before it counts: the Luhn checksum and an issuer's leading
digit for card numbers, mod-97 and the country's length for IBANs, digit counts and grouping for
phone numbers (a date, a time, a version, an amount or an order number is not a phone). The three
share their guards (the words that make a number an order number, the IBAN shapes a phone must
not overlap), so they are one module; `writing.rules.redaction` ranks and replaces what they find.

Pure (no I/O).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# --------------------------------------------------------------------------------------------
# Validators
# --------------------------------------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a string of ASCII digits (every card number passes it)."""
    if not digits.isascii() or not digits.isdigit():
        return False
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


#: IBAN lengths of the countries most IBANs come from (ISO 13616 registry).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18,
    "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30,
    "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_valid(compact: str) -> bool:
    """An IBAN without spaces: a known country, its length, and the mod-97 check (ISO 7064)."""
    if not compact.isascii() or not compact.isalnum():
        return False
    compact = compact.upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


# --------------------------------------------------------------------------------------------
# Card numbers and IBANs
# --------------------------------------------------------------------------------------------

#: Digits in groups separated by one space or dash, not glued to a word or a decimal part.
_DIGIT_RUN = re.compile(r"(?<![\w.,+/#-])(?>[0-9]+(?:[ -][0-9]+)*)(?![\w]|[.,/][0-9])")
_GROUP = re.compile(r"[0-9]+")
#: Cards are issued under major industry identifiers 2 to 6 (Mastercard 2-series up to Discover).
_CARD_FIRST_DIGITS = "23456"
#: How card numbers are printed; inside a longer run of digits only these shapes count as a card.
_CARD_GROUPINGS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 5), (4, 4, 4, 4, 3)}
_IBAN = re.compile(
    r"(?<![\w])(?:[A-Za-z]{2}[0-9]{2}[A-Za-z0-9]{11,30}"
    r"|[A-Za-z]{2}[0-9]{2}(?:[ \u00a0][A-Za-z0-9]{4}){2,7}(?:[ \u00a0][A-Za-z0-9]{1,4})?)(?![\w])"
)
#: Anything shaped like an IBAN, valid or not: its digits are neither a card nor a phone number.
_IBAN_SHAPE = re.compile(r"(?<![\w])[A-Z]{2}[0-9]{2}(?:[ \u00a0]?[A-Z0-9]{4}){3,8}")


def cards(text: str) -> Iterator[tuple[int, int]]:
    blocked = _iban_shapes(text)
    for run in _DIGIT_RUN.finditer(text):
        groups = [(m.start() + run.start(), m.end() + run.start()) for m in _GROUP.finditer(run.group())]
        for start, end in _card_windows(text, groups):
            if not _overlaps_any(start, end, blocked) and not _NOT_A_NUMBER_BEFORE.search(
                text, max(0, start - 16), start
            ):
                yield start, end


def _card_windows(text: str, groups: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The run if it is a card number; else, in a run too long to be one number, left to right the
    longest stretch of it grouped as cards are printed."""
    digits = [text[start:end] for start, end in groups]
    if _is_card("".join(digits)):
        yield groups[0][0], groups[-1][1]
        return
    if len("".join(digits)) <= 19:
        return
    i = 0
    while i < len(groups):
        best = None
        for j in range(i, min(len(groups), i + 5)):
            sizes = tuple(len(d) for d in digits[i : j + 1])
            if (sizes in _CARD_GROUPINGS or len(sizes) == 1) and _is_card("".join(digits[i : j + 1])):
                best = j
        if best is None:
            i += 1
            continue
        yield groups[i][0], groups[best][1]
        i = best + 1


def _is_card(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and digits[0] in _CARD_FIRST_DIGITS and luhn_valid(digits)


def ibans(text: str) -> Iterator[tuple[int, int]]:
    for match in _IBAN.finditer(text):
        end = _iban_end(match.group())
        if end is not None:
            yield match.start(), match.start() + end


def _iban_end(candidate: str) -> int | None:
    """Where the IBAN at the start of ``candidate`` ends: its country's length, at a group's end."""
    length = IBAN_LENGTHS.get(candidate[:2].upper())
    if length is None:
        return None
    positions = [i for i, char in enumerate(candidate) if char.isalnum()]
    if len(positions) < length:
        return None
    end = positions[length - 1] + 1
    if end < len(candidate) and candidate[end].isalnum():
        return None
    compact = "".join(candidate[i] for i in positions[:length])
    return end if iban_valid(compact) else None


def _iban_shapes(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _IBAN_SHAPE.finditer(text)]


def _overlaps_any(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


# --------------------------------------------------------------------------------------------
# Phone numbers
# --------------------------------------------------------------------------------------------

#: Digits with the characters phone numbers are written with; a time's colon never precedes.
_PHONE_RUN = re.compile(r"(?<![\w#$€£¥+.,/-])(?<![0-9]:)(?:\+ ?)?\(?[0-9][0-9() \u00a0./-]*[0-9]")
#: What may stand between two groups of digits once parentheses are taken out.
_PHONE_SEPARATORS = ("", " ", "\u00a0", ".", "-", "/")
#: Words and signs that make the number after them an order number, a barcode, an amount or a version.
_NOT_A_NUMBER_BEFORE = re.compile(
    r"(?i)(?:[$€£¥#]|\b(?:isbn(?:-1[03])?|ean(?:-1[38])?|gtin|upc|sku|order|invoice|ticket|bestellnummer"
    r"|rechnung|commande|facture|pedido|factura|version|ver|v|ref|iban|bic|plz|zip|postcode))\s*[:#.]?\s*$"
)
#: Words that say a number is a phone number, for the shapes a plain count also has (612 345 678).
_PHONE_WORDS = re.compile(
    r"(?i)\b(?:phone|tel|call|number|mobile|cell|whatsapp|fax|ring|telefon|handy|nummer|anrufen|ruf"
    r"|festnetz|t[ée]l[ée]phone|portable|num[ée]ro|appel\w*|fixe|tel[ée]fono|m[óo]vil|n[úu]mero|ll[aá]m\w*)\b"
)
_NOT_PHONE_AFTER = re.compile(
    r"(?i)[^\W\d]|_|[.,:/-][0-9]|\s?(?:[%€$£¥]|(?:eur|usd|gbp|chf|euros?|dollars?|pounds?)\b)"
)
_DATE_SEPARATORS = (".", "/", "-")


@dataclass(frozen=True)
class _Groups:
    """A run of digit groups: each group's span and digits, and what stands before each group."""

    spans: list[tuple[int, int]]
    digits: list[str]
    separators: list[str]
    trunk: list[bool]


def phones(text: str) -> Iterator[tuple[int, int]]:
    blocked = _iban_shapes(text)
    for run in _PHONE_RUN.finditer(text):
        for segment in _segments(text, run.start(), run.end()):
            for start, end in _phones_in(text, segment):
                if not _overlaps_any(start, end, blocked) and _phone_context_ok(text, start, end):
                    yield start, end


def _segments(text: str, start: int, end: int) -> Iterator[_Groups]:
    """The run's digit groups, cut wherever two groups are joined by something no phone has."""
    spans: list[tuple[int, int]] = []
    digits: list[str] = []
    separators: list[str] = []
    trunk: list[bool] = []
    previous_end = start
    for match in _GROUP.finditer(text, start, end):
        between = text[previous_end : match.start()]
        if spans and not _joins(between):
            yield _Groups(spans, digits, separators, trunk)
            spans, digits, separators, trunk = [], [], [], []
        spans.append(match.span())
        digits.append(match.group())
        separators.append(between)
        after = text[match.end() : match.end() + 1]
        trunk.append(match.group() == "0" and between.endswith("(") and after == ")")
        previous_end = match.end()
    if spans:
        yield _Groups(spans, digits, separators, trunk)


def _joins(between: str) -> bool:
    bare = between.replace("(", "").replace(")", "")
    return bare in _PHONE_SEPARATORS and between.count("(") <= 1 and between.count(")") <= 1


def _phones_in(text: str, run: _Groups) -> Iterator[tuple[int, int]]:
    """The longest phone number (of eight groups at most) at the run's start, then the next one
    right after it. A run that starts with something else (an ISBN, the tail of a longer number)
    holds no phone number, unless that something is a date."""
    if _card_shaped(run.digits):
        return
    i = 0
    while i < len(run.digits):
        best = next(
            (j for j in range(min(len(run.digits), i + 8), i, -1) if _is_phone(text, run, i, j)), None
        )
        if best is None:
            if i == 0 and _date_shaped(run.digits[:3], run.separators[1:3]):
                i = 3
                continue
            return
        yield _phone_start(text, run, i), run.spans[best - 1][1]
        i = best


def _card_shaped(digits: list[str]) -> bool:
    """Four groups of four digits in a row: a card or an account number, never a phone number."""
    streak = 0
    for group in digits:
        streak = streak + 1 if len(group) == 4 else 0
        if streak >= 4:
            return True
    return False


def _phone_start(text: str, run: _Groups, i: int) -> int:
    """The first group's start, widened over a ``+`` or an area code's opening parenthesis."""
    start = run.spans[i][0]
    if _opens(text, run, i):
        start -= 1
    if start > 1 and text[start - 1] == " " and text[start - 2] == "+":
        start -= 2
    elif start > 0 and text[start - 1] == "+":
        start -= 1
    return start


def _opens(text: str, run: _Groups, i: int) -> bool:
    """The first group is in parentheses of its own, as in "(415) 555-0100"."""
    start, end = run.spans[i]
    return text[start - 1 : start] == "(" and text[end : end + 1] == ")"


def _is_phone(text: str, run: _Groups, i: int, j: int) -> bool:
    groups = [g for g, trunk in zip(run.digits[i:j], run.trunk[i:j], strict=True) if not trunk]
    if not groups or not _parentheses_balanced(text, run, i, j):
        return False
    separators = run.separators[i + 1 : j]
    plus = text[_phone_start(text, run, i)] == "+"
    if plus:
        return 8 <= len("".join(groups)) <= 15 and groups[0][0] != "0"
    if _date_shaped(groups, separators):
        return False
    if _international_00(groups) or _nanp(groups) or _national(groups) or _italian_mobile(groups):
        return True
    return _spanish(groups) and (len(groups) != 3 or _said_to_be_a_phone(text, run.spans[i][0]))


def _parentheses_balanced(text: str, run: _Groups, i: int, j: int) -> bool:
    """Each parenthesis in the number encloses one group: "(415) 555", "+49 (0)30"."""
    before = "(" if _opens(text, run, i) else ""
    depth = 0
    for char in before + "".join(run.separators[i + 1 : j]):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth not in (0, 1):
            return False
    return depth == 0


def _date_shaped(groups: list[str], separators: list[str]) -> bool:
    """25.11.2026, 2026-11-25, 11/25/26: three groups with one date separator."""
    if len(groups) < 3 or len(separators) < 2:
        return False
    a, b, c = (len(g) for g in groups[:3])
    same = separators[0] == separators[1] and separators[0] in _DATE_SEPARATORS
    day_first = a <= 2 and b <= 2 and (c == 4 or (c == 2 and len(groups) == 3))
    year_first = a == 4 and b <= 2 and c <= 2
    return same and (day_first or year_first)


def _international_00(groups: list[str]) -> bool:
    """0044 20 7946 0958: the ``00`` prefix, in groups, with 8 to 15 digits after it."""
    digits = "".join(groups)
    return (
        len(groups) >= 2
        and len(groups[0]) <= 5
        and digits.startswith("00")
        and digits[2:3] not in ("", "0")
        and 8 <= len(digits) - 2 <= 15
    )


def _nanp(groups: list[str]) -> bool:
    """(415) 555-0100, 415.555.0100, 1-415-555-0100: area and exchange codes start at 2 to 9."""
    if [len(g) for g in groups] == [1, 3, 3, 4] and groups[0] == "1":
        groups = groups[1:]
    return [len(g) for g in groups] == [3, 3, 4] and groups[0][0] >= "2" and groups[1][0] >= "2"


def _national(groups: list[str]) -> bool:
    """020 7946 0958, 030 12345678, 01 23 45 67 89: a trunk ``0``, an area code, 9 to 12 digits."""
    digits = "".join(groups)
    if not (digits.startswith("0") and digits[1:2] not in ("", "0") and 9 <= len(digits) <= 12):
        return False
    if len(groups) == 1:
        return len(digits) in (10, 11)
    return 2 <= len(groups[0]) <= 5 and len(groups) <= 6 and all(len(g) >= 2 for g in groups)


def _italian_mobile(groups: list[str]) -> bool:
    """347 123 4567, 347 1234567: ten digits from 3."""
    return [len(g) for g in groups] in ([3, 3, 4], [3, 7]) and groups[0][0] == "3"


def _said_to_be_a_phone(text: str, start: int) -> bool:
    return _PHONE_WORDS.search(text, max(0, start - 30), start) is not None


def _spanish(groups: list[str]) -> bool:
    """912 345 678, 612 34 56 78, 91 234 56 78: nine digits from 6 to 9, in the usual groups (the
    first, also how a count is written, only after a word that says it is a phone number)."""
    shapes = ([3, 3, 3], [3, 2, 2, 2], [2, 3, 2, 2])
    return [len(g) for g in groups] in shapes and groups[0][0] in "6789"


def _phone_context_ok(text: str, start: int, end: int) -> bool:
    if _NOT_A_NUMBER_BEFORE.search(text, max(0, start - 16), start):
        return False
    return not _NOT_PHONE_AFTER.match(text, end)
