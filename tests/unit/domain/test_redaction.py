"""Redaction on write (`writing.rules.redaction`): each kind in its usual formats, the hard negatives a
pattern alone would take for one, overlaps between kinds, placeholders, idempotence, and properties
checked against plain reference implementations: generated card numbers, IBANs and e-mail
addresses never survive, a Luhn-invalid number does, no labelled digit is left, and any text
redacts without an error to a fixed point."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.strategies import FUZZ, hostile

from agent_memory.writing.rules.pii_numbers import iban_valid, luhn_valid
from agent_memory.writing.rules.redaction import (
    PiiKind,
    Redaction,
    Span,
    find,
    map_strings,
    redact,
)

# --- reference checks, written out plainly ---------------------------------------------------


def reference_luhn(digits: str) -> bool:
    doubled = [int(d) for d in digits[-1::-2]] + [sum(divmod(2 * int(d), 10)) for d in digits[-2::-2]]
    return sum(doubled) % 10 == 0


def reference_mod97(iban: str) -> bool:
    compact = iban.replace(" ", "")
    moved = compact[4:] + compact[:4]
    number = "".join(str(ord(c) - ord("A") + 10) if c.isalpha() else c for c in moved)
    return int(number) % 97 == 1


# --- each kind ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("Mail john.doe@example.com today.", "john.doe@example.com", PiiKind.EMAIL),
        ("Write to ana+news@mail.example.co.uk, thanks", "ana+news@mail.example.co.uk", PiiKind.EMAIL),
        ("Contact <josé.garcía@correo.es>", "josé.garcía@correo.es", PiiKind.EMAIL),
        ("Call +49 30 1234567 tomorrow", "+49 30 1234567", PiiKind.PHONE),
        ("Call +1 (415) 555-0100 tomorrow", "+1 (415) 555-0100", PiiKind.PHONE),
        ("Call 0044 20 7946 0958 tomorrow", "0044 20 7946 0958", PiiKind.PHONE),
        ("US office (415) 555-0100.", "(415) 555-0100", PiiKind.PHONE),
        ("US office 415-555-0100.", "415-555-0100", PiiKind.PHONE),
        ("UK office 020 7946 0958.", "020 7946 0958", PiiKind.PHONE),
        ("Büro 030 12345678.", "030 12345678", PiiKind.PHONE),
        ("Büro 030/1234567.", "030/1234567", PiiKind.PHONE),
        ("Tel:+49 (0)30 1234567", "+49 (0)30 1234567", PiiKind.PHONE),
        ("Bureau 01 23 45 67 89.", "01 23 45 67 89", PiiKind.PHONE),
        ("Portable 06.12.34.56.78.", "06.12.34.56.78", PiiKind.PHONE),
        ("Llámame al 612 34 56 78.", "612 34 56 78", PiiKind.PHONE),
        ("Mi teléfono es 912 345 678.", "912 345 678", PiiKind.PHONE),
        ("Visa 4111 1111 1111 1111 expires", "4111 1111 1111 1111", PiiKind.CARD),
        ("Visa 4111-1111-1111-1111 expires", "4111-1111-1111-1111", PiiKind.CARD),
        ("Visa 4111111111111111 expires", "4111111111111111", PiiKind.CARD),
        ("Amex 3782 822463 10005 expires", "3782 822463 10005", PiiKind.CARD),
        ("Mastercard 5555 5555 5555 4444.", "5555 5555 5555 4444", PiiKind.CARD),
        ("IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00", PiiKind.IBAN),
        ("IBAN DE89370400440532013000 please", "DE89370400440532013000", PiiKind.IBAN),
        ("Pay GB82 WEST 1234 5698 7654 32 now", "GB82 WEST 1234 5698 7654 32", PiiKind.IBAN),
        ("Compte FR14 2004 1010 0505 0001 3M02 606.", "FR14 2004 1010 0505 0001 3M02 606", PiiKind.IBAN),
        ("Konto AT61 1904 3002 3457 3201 Wien", "AT61 1904 3002 3457 3201", PiiKind.IBAN),
        ("Server 192.168.1.10 is down", "192.168.1.10", PiiKind.IP),
        ("Server 10.0.0.1:8080 is down", "10.0.0.1", PiiKind.IP),
        ("Host 2001:0db8:85a3:0000:0000:8a2e:0370:7334 up", "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
         PiiKind.IP),
        ("Host 2001:db8::8a2e:370:7334 up", "2001:db8::8a2e:370:7334", PiiKind.IP),
        ("Host [fe80::1ff:fe23:4567:890a]:443 up", "fe80::1ff:fe23:4567:890a", PiiKind.IP),
        ("key AKIAIOSFODNN7EXAMPLE leaked", "AKIAIOSFODNN7EXAMPLE", PiiKind.SECRET),
        ("use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z please", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
         PiiKind.SECRET),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 here", "ghp_0123456789abcdefghijABCDEFGHIJ012345",
         PiiKind.SECRET),
        ("bot xoxb-123456789012-abcdefABCDEF here", "xoxb-123456789012-abcdefABCDEF", PiiKind.SECRET),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc here", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", PiiKind.SECRET),
        ("maps AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI here", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
         PiiKind.SECRET),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl done",
         "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", PiiKind.SECRET),
        ("password: hunter2", "hunter2", PiiKind.SECRET),
        ("my password is hunter2.", "hunter2", PiiKind.SECRET),
        ("pwd=s3cr3t!x and more", "s3cr3t!x", PiiKind.SECRET),
        ("Passwort: Sommer2026", "Sommer2026", PiiKind.SECRET),
        ("mein Passwort ist Sommer2026", "Sommer2026", PiiKind.SECRET),
        ("mot de passe : azerty12", "azerty12", PiiKind.SECRET),
        ("contraseña: Luna_77", "Luna_77", PiiKind.SECRET),
        ("api key: abcDEF123456", "abcDEF123456", PiiKind.SECRET),
        ("token: xyz12345abc", "xyz12345abc", PiiKind.SECRET),
        ("secret=Sup3rS3cret", "Sup3rS3cret", PiiKind.SECRET),
        ('{"password": "correct horse battery"}', "correct horse battery", PiiKind.SECRET),
        ("DB_PASSWORD=pa55word", "pa55word", PiiKind.SECRET),
        ("the wifi password for the office is Blue-42", "Blue-42", PiiKind.SECRET),
    ],
)  # fmt: skip
def test_each_kind_is_replaced_by_its_placeholder(text: str, value: str, kind: PiiKind) -> None:
    # WHEN
    result = redact(text)

    # THEN the value, and only it, became the placeholder, and the count says what it was
    assert result.text == text.replace(value, kind.placeholder)
    assert result.counts == {kind: 1}


def test_a_private_key_block_is_replaced_whole() -> None:
    # GIVEN
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq1w2e3r4\n-----END RSA PRIVATE KEY-----"

    # WHEN
    result = redact(f"the key:\n{block}\nthanks")

    # THEN
    assert result.text == "the key:\n[SECRET]\nthanks"


@pytest.mark.parametrize(
    "text",
    [
        "The launch is on 2026-11-25, or 25.11.2026, or 11/25/2026, or 05.11.2026 10:30.",
        "We meet at 10:30 or 14:45:00, it's 9.30 Uhr.",
        "In 2026 we shipped v2.10.4, then 1.2.3, then version 4.1.0.12 and Python 3.11.7.",
        "Order #12345 and invoice 4711-2026 and PO-2491.",
        "It costs $1,299.00 or 1.299,00 € or 12,50 € or 1 299 €.",
        "ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2.",
        "She lives at 10115 Berlin, 75008 Paris, 28013 Madrid or SW1A 1AA London.",
        "Reference 4111 1111 1111 1112 is not a card.",
        "Reference 4111111111111112 is not a card.",
        "The old IBAN DE88 3704 0044 0532 0130 00 has a wrong check.",
        "The barcode reads EAN 4006381333931.",
        "We now have 1,234,567 users at 52.5200, 13.4050 and 12.5% growth.",
        "The password is too short, reset your password. Tokens: 1500. The token expired.",
        "Das Passwort ist abgelaufen. Le mot de passe est expiré. La contraseña es incorrecta.",
        "std::vector and 12:30:45 and 00:1A:2B:3C:4D:5E are not addresses.",
        "The request id is 123e4567-e89b-12d3-a456-426614174000.",
    ],
)
def test_a_hard_negative_is_left_alone(text: str) -> None:
    # WHEN / THEN
    assert redact(text) == Redaction(text, {})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4111 1111 1111 1111", {PiiKind.CARD: 1}),
        ("DE89 3704 0044 0532 0130 00", {PiiKind.IBAN: 1}),
        ("john.4111111111111111@example.com", {PiiKind.EMAIL: 1}),
        ("+4915112345678@example.com", {PiiKind.EMAIL: 1}),
        ("token: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", {PiiKind.SECRET: 1}),
        ("::ffff:192.0.2.1", {PiiKind.IP: 1}),
    ],
)
def test_overlapping_candidates_give_one_item_of_the_longest_and_most_specific_kind(
    text: str, expected: dict[PiiKind, int]
) -> None:
    # WHEN / THEN
    assert redact(text).counts == expected


def test_placeholders_are_never_matched() -> None:
    # GIVEN every placeholder, also where a keyword's value would be
    placeholders = " ".join(kind.placeholder for kind in PiiKind)
    text = f"{placeholders} password: [SECRET] token=[PHONE] mot de passe : [EMAIL]"

    # WHEN / THEN
    assert find(text) == []


def test_the_counts_and_the_redaction_never_hold_the_value() -> None:
    # WHEN
    result = redact("Call 020 7946 0958 or mail ana@example.com, password: hunter2")

    # THEN
    assert result.counts == {PiiKind.PHONE: 1, PiiKind.EMAIL: 1, PiiKind.SECRET: 1}
    assert result.total == 3
    assert not {"7946", "ana@", "hunter2"} & set(re.findall(r"\w+@?", repr(result)))


def test_the_validators_agree_with_the_reference_checks() -> None:
    # GIVEN
    numbers = ["4111111111111111", "4111111111111112", "378282246310005", "0", "79927398713"]
    ibans = ["DE89370400440532013000", "DE88370400440532013000", "GB82WEST12345698765432"]

    # WHEN / THEN
    assert [luhn_valid(n) for n in numbers] == [reference_luhn(n) for n in numbers]
    assert [iban_valid(i) for i in ibans] == [reference_mod97(i) for i in ibans]


# --- properties --------------------------------------------------------------------------------

#: Words to embed items in: no digits, and none that makes a number an order number or a version.
FILLER = st.lists(
    st.sampled_from(
        ["the", "card", "is", "pay", "with", "Ana", "tomorrow", "please", "thanks", "and", "or", "meine",
         "Karte", "la", "tarjeta", ",", ":", "(", ")", "—", "für", "über", "ça", "mañana", "\n"]
    ),
    max_size=8,
).map(" ".join)  # fmt: skip
CARD_PREFIXES = ["4", "51", "55", "2221", "2720", "34", "37", "6011", "65", "3528", "36", "62"]


@st.composite
def card_numbers(draw: st.DrawFn, valid: bool = True) -> str:
    """A card number's digits: a brand's prefix, random digits, and a correct (or wrong) check."""
    prefix = draw(st.sampled_from(CARD_PREFIXES))
    length = draw(st.integers(13, 19))
    body = prefix + draw(
        st.text("0123456789", min_size=length - 1 - len(prefix), max_size=length - 1 - len(prefix))
    )
    check = next(d for d in "0123456789" if reference_luhn(body + d))
    if not valid:
        check = str((int(check) + draw(st.integers(1, 9))) % 10)
    return body + check


@st.composite
def grouped(draw: st.DrawFn, digits: str) -> str:
    """``digits`` cut into groups of random sizes, joined by a space or a dash."""
    cuts = sorted(draw(st.sets(st.integers(1, len(digits) - 1), max_size=6)))
    groups = [digits[a:b] for a, b in zip([0, *cuts], [*cuts, len(digits)], strict=True)]
    return draw(st.sampled_from([" ", "-"])).join(groups)


@given(before=FILLER, number=card_numbers().flatmap(grouped), after=FILLER)
def test_a_luhn_valid_card_number_never_survives(before: str, number: str, after: str) -> None:
    """A Luhn-valid card number, grouped any way, in any text, leaves no digit behind."""
    result = redact(f"{before} {number} {after}")
    assert not any(c.isdigit() for c in result.text)
    assert result.counts == {PiiKind.CARD: 1}


@given(
    before=FILLER, digits=card_numbers(valid=False), separator=st.sampled_from(["", " ", "-"]), after=FILLER
)
def test_a_luhn_invalid_number_survives(before: str, digits: str, separator: str, after: str) -> None:
    """A number that fails Luhn, written as cards are, is not a card (nor anything else)."""
    number = separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    text = f"{before} {number} {after}"
    assert not reference_luhn(digits)
    assert redact(text).text == text


IBAN_FORMATS = {
    "DE": "n18",
    "FR": "n10c11n2",
    "GB": "a4n14",
    "ES": "n20",
    "NL": "a4n10",
    "IT": "a1n10c12",
    "BE": "n12",
}
POOLS = {"n": "0123456789", "a": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "c": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


@st.composite
def ibans(draw: st.DrawFn) -> str:
    """A valid IBAN of a common country, compact or printed in groups of four."""
    country = draw(st.sampled_from(sorted(IBAN_FORMATS)))
    pieces = re.findall(r"([nac])(\d+)", IBAN_FORMATS[country])
    bban = "".join(draw(st.text(POOLS[kind], min_size=int(n), max_size=int(n))) for kind, n in pieces)
    check = next(f"{c:02d}" for c in range(2, 99) if reference_mod97(f"{country}{c:02d}{bban}"))
    compact = f"{country}{check}{bban}"
    spaced = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return draw(st.sampled_from([compact, spaced]))


@given(before=FILLER, iban=ibans(), after=FILLER)
def test_a_valid_iban_never_survives(before: str, iban: str, after: str) -> None:
    """A valid IBAN (its mod-97 check holds) in any text is replaced, and nothing of it is left."""
    result = redact(f"{before} {iban} {after}")
    assert reference_mod97(iban)
    assert not any(c.isdigit() for c in result.text)
    assert result.counts == {PiiKind.IBAN: 1}


LOCAL = st.text("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_+-áéüñçø", min_size=1, max_size=12)
LABEL = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
emails = st.builds(
    lambda local, labels, tld: f"{'.'.join(local)}@{'.'.join(labels)}.{tld}",
    st.lists(LOCAL, min_size=1, max_size=3),
    st.lists(LABEL, min_size=1, max_size=3),
    st.from_regex(r"[a-z]{2,6}", fullmatch=True),
)


@given(before=FILLER, address=emails, after=FILLER)
def test_an_email_address_never_survives(before: str, address: str, after: str) -> None:
    """An e-mail address (plus-addressing, subdomains, non-ASCII local parts) is replaced whole."""
    result = redact(f"{before} {address} {after}")
    assert "@" not in result.text
    assert result.counts == {PiiKind.EMAIL: 1}


PHONES = st.sampled_from(
    ["+49 30 1234567", "+1 (415) 555-0100", "0044 20 7946 0958", "(415) 555-0100", "415.555.0100",
     "020 7946 0958", "030 12345678", "01 23 45 67 89", "+33 6 12 34 56 78", "0151 12345678"]
)  # fmt: skip


@given(
    items=st.lists(
        st.one_of(card_numbers().flatmap(grouped), ibans(), emails, PHONES), min_size=1, max_size=4
    ),
    filler=st.lists(FILLER, min_size=5, max_size=5),
)
def test_no_labelled_items_digits_are_left(items: list[str], filler: list[str]) -> None:
    """Cards, IBANs, e-mail addresses and phone numbers side by side: the output has no digit left."""
    text = filler[0] + "".join(f" {item} {words}" for item, words in zip(items, filler[1:], strict=False))
    result = redact(text)
    assert not any(c.isdigit() for c in result.text)
    assert result.total == len(items)


@FUZZ
@given(st.one_of(st.text(), hostile(), st.text("0123456789 +-.:/()@[]abcdeEFXY#€,", max_size=60)))
def test_any_text_redacts_without_error_to_a_fixed_point(text: str) -> None:
    """Redaction never raises, its spans are in order and apart, and redacting again changes nothing."""
    spans = find(text)
    once = redact(text).text
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert redact(once).text == once


def test_another_engines_spans_join_the_first_pass_and_lose_ties() -> None:
    # GIVEN another engine that calls a phone number a secret, and names a word it alone knows
    text = "word kestrel, desk +49 30 1234567"
    desk = text.index("+49")
    extra = [Span(PiiKind.SECRET, 5, 12), Span(PiiKind.SECRET, desk, len(text)), Span(PiiKind.EMAIL, 90, 99)]
    # WHEN
    done = redact(text, lambda _: extra)
    # THEN its own find is kept, the tie goes to the local kind, and spans outside the text are ignored
    assert done.text == "word [SECRET], desk [PHONE]"
    assert done.counts == {PiiKind.SECRET: 1, PiiKind.PHONE: 1}


def test_map_strings_reaches_every_string_of_json_and_no_key() -> None:
    value = {"a@example.com": ["x@example.com", {"n": 3, "s": "y@example.com"}], "k": None}
    assert map_strings(value, lambda s: redact(s).text) == {
        "a@example.com": ["[EMAIL]", {"n": 3, "s": "[EMAIL]"}],
        "k": None,
    }
