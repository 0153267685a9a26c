"""Precision and recall of redaction on write (`agent_memory.writing.rules.redaction`) on a labelled set of
generated sentences.

    python benchmarks/redaction.py [--json]

Why generated: no public set labels e-mail addresses, phone numbers, cards, IBANs, IP addresses
and secrets in the wording of an agent's memories, and real ones may not be published. So a seeded
generator writes 500 sentences in English, German, French and Spanish, in several shapes (a
sentence, a chat line, an e-mail, a list item, a log line), each with zero or more items of known
kind and span. The items are valid where validity is checkable: cards of several brands and
lengths pass Luhn, IBANs of twelve countries carry a computed mod-97 check, phone numbers follow
their country's grouping. Beside them stand hard negatives that a careless pattern takes for one:
16-digit numbers that fail Luhn, IBANs with a wrong check, dates, times, prices, order numbers,
versions, ISBNs, zip codes and sentences that name a password without stating one.

Why in two halves: sentence *i* is in half A when *i* is even, in half B when it is odd, and each
half is worded from its own family of phrasings and shapes (the items come from the same
generators). A was used while tuning the patterns; B is only reported.

Scoring: a labelled item is found when a predicted span of the same kind overlaps it; a predicted
span that overlaps no labelled item of its kind is a false positive. Printed per half: recall and
precision per kind and overall, then the misses and false positives (the first few); ``--json``
prints the whole report instead.
"""

from __future__ import annotations

import argparse
import base64
import ipaddress
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_memory.writing.rules.redaction import PiiKind, Span, find

SEED = 20261125
SENTENCES = 500
HALVES = ("A", "B")
LANGUAGES = ("en", "de", "fr", "es")
NAMES = ("Ana", "Jonas", "Marie", "Lucía", "Sam", "Priya", "Omar", "Chloé", "Sven", "Mateo")


@dataclass(frozen=True)
class Item:
    """A labelled stretch of a sentence: ``kind`` is a `PiiKind` value, or a hard negative's type."""

    kind: str
    form: str
    start: int
    end: int
    value: str


@dataclass(frozen=True)
class Sentence:
    index: int
    half: str
    language: str
    text: str
    items: tuple[Item, ...]
    negatives: tuple[Item, ...]


# --------------------------------------------------------------------------------------------
# Items
# --------------------------------------------------------------------------------------------


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def luhn_check_digit(body: str) -> str:
    """The digit that makes ``body`` + it pass Luhn."""
    total = 0
    for i, char in enumerate(reversed(body)):
        value = int(char) * (1 if i % 2 else 2)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


#: (brand, leading digits, lengths, grouping of each length).
CARD_BRANDS: list[tuple[str, Callable[[random.Random], str], tuple[int, ...]]] = [
    ("visa", lambda r: "4", (16, 16, 13, 19)),
    ("mastercard", lambda r: r.choice(["51", "52", "53", "54", "55", str(r.randint(2221, 2720))]), (16,)),
    ("amex", lambda r: r.choice(["34", "37"]), (15,)),
    ("discover", lambda r: r.choice(["6011", "65", str(r.randint(644, 649))]), (16, 19)),
    ("jcb", lambda r: str(r.randint(3528, 3589)), (16,)),
    ("diners", lambda r: r.choice(["36", "38"]), (14,)),
    ("unionpay", lambda r: "62", (16, 19)),
]
GROUPINGS = {13: (4, 4, 5), 14: (4, 6, 4), 15: (4, 6, 5), 16: (4, 4, 4, 4), 19: (4, 4, 4, 4, 3)}


def _group(digits: str, sizes: tuple[int, ...], separator: str) -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(digits[at : at + size])
        at += size
    return separator.join(parts)


def card(rng: random.Random, valid: bool = True) -> tuple[str, str]:
    """A card number of a random brand and length, grouped as printed; Luhn-valid unless not."""
    brand, prefix, lengths = rng.choice(CARD_BRANDS)
    length = rng.choice(lengths)
    body = prefix(rng)
    body += _digits(rng, length - 1 - len(body))
    check = luhn_check_digit(body)
    if not valid:
        check = str((int(check) + rng.randint(1, 9)) % 10)
    separator = rng.choice([" ", " ", "-", ""])
    return _group(body + check, GROUPINGS[length], separator), brand


#: Each country's BBAN as (kind, count) pieces: digits, upper-case letters, or either.
IBAN_FORMATS: dict[str, list[tuple[str, int]]] = {
    "DE": [("n", 18)],
    "AT": [("n", 16)],
    "CH": [("n", 5), ("c", 12)],
    "FR": [("n", 10), ("c", 11), ("n", 2)],
    "ES": [("n", 20)],
    "IT": [("a", 1), ("n", 10), ("c", 12)],
    "NL": [("a", 4), ("n", 10)],
    "GB": [("a", 4), ("n", 14)],
    "BE": [("n", 12)],
    "PL": [("n", 24)],
    "PT": [("n", 21)],
    "IE": [("a", 4), ("n", 14)],
}


def mod97(text: str) -> int:
    return int("".join(str(int(c, 36)) for c in text)) % 97


def iban(rng: random.Random, valid: bool = True) -> tuple[str, str]:
    """An IBAN of a random country with the check digits computed (or a wrong one), spaced or not."""
    country = rng.choice(sorted(IBAN_FORMATS))
    pools = {"n": string.digits, "a": string.ascii_uppercase, "c": string.digits + string.ascii_uppercase}
    bban = "".join(rng.choice(pools[kind]) for kind, n in IBAN_FORMATS[country] for _ in range(n))
    check = 98 - mod97(bban + country + "00")
    if not valid:
        check = rng.choice([c for c in range(2, 99) if c != check])
    compact = f"{country}{check:02d}{bban}"
    if rng.random() < 0.35:
        return compact, country
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4)), country


#: Phone formats: ``N`` a digit 2-9, ``M`` 1-9, ``X`` any digit.
PHONE_FORMATS: dict[str, list[str]] = {
    "us": ["(NXX) NXX-XXXX", "NXX-NXX-XXXX", "NXX.NXX.XXXX", "+1 NXX NXX XXXX", "+1 (NXX) NXX-XXXX",
           "1-NXX-NXX-XXXX", "+1-NXX-NXX-XXXX", "+1.NXX.NXX.XXXX"],
    "uk": ["020 XXXX XXXX", "+44 20 XXXX XXXX", "0044 20 XXXX XXXX", "07XXX XXXXXX", "+44 7XXX XXXXXX",
           "0161 XXX XXXX", "+44 (0)20 XXXX XXXX", "(020) XXXX XXXX"],
    "de": ["030 XXXXXXXX", "030/XXXXXXX", "+49 30 XXXXXXXX", "+49 (0)30 XXXXXXX", "0151 XXXXXXXX",
           "+49 151 XXXXXXXX", "089-XXXXXXX", "+4915XXXXXXXXX", "0049 30 XXXXXXXX", "+49-30-XXXXXXX",
           "(030) XXXXXXX", "030 XXXX XXXX"],
    "fr": ["0M XX XX XX XX", "06.XX.XX.XX.XX", "+33 M XX XX XX XX", "+33 (0)M XX XX XX XX",
           "0033 6 XX XX XX XX", "0M-XX-XX-XX-XX"],
    "es": ["9XX XXX XXX", "6XX XX XX XX", "+34 6XX XXX XXX", "+34 9XXXXXXXX", "91 XXX XX XX",
           "0034 6XX XXX XXX"],
    "nl": ["+31 6 XXXXXXXX", "06-XXXXXXXX", "020-XXX XXXX"],
    "it": ["+39 06 XXXX XXXX", "3XX XXX XXXX", "+39 3XX XXX XXXX"],
}  # fmt: skip


def phone(rng: random.Random) -> tuple[str, str]:
    country = rng.choice(sorted(PHONE_FORMATS))
    shape = rng.choice(PHONE_FORMATS[country])
    pools = {"N": "23456789", "M": "123456789", "X": string.digits}
    return "".join(rng.choice(pools[c]) if c in pools else c for c in shape), country


FIRST = ("ana", "jonas", "marie", "lucía", "sam", "priya", "omar", "chloé", "sven", "mateo", "jürgen")
LAST = ("silva", "müller", "dubois", "garcía", "lee", "patel", "haddad", "martin", "berg", "ruiz")
DOMAINS = ("example.com", "mail.example.co.uk", "correo.es", "firma.de", "entreprise.fr", "corp.acme.io")


def email(rng: random.Random) -> tuple[str, str]:
    first, last, domain = rng.choice(FIRST), rng.choice(LAST), rng.choice(DOMAINS)
    shape = rng.choice(["{f}.{l}", "{f}+{t}", "{i}.{l}{n}", "{f}_{l}", "{f}", "{F}.{L}", "{f}-{l}"])
    fields = {
        "f": first,
        "l": last,
        "F": first.title(),
        "L": last.upper(),
        "i": first[0],
        "n": rng.randint(1, 99),
    }
    local = shape.format(t=rng.choice(["news", "work", "bills"]), **fields)
    if rng.random() < 0.5:
        local = local.encode("ascii", "ignore").decode() or "info"
    if rng.random() < 0.2:
        domain = rng.choice(["my-company.de", "eu.mail.example.org", "Example.COM", "uni-wien.ac.at"])
    return f"{local}@{domain}", "unicode" if not local.isascii() else "ascii"


def ip(rng: random.Random) -> tuple[str, str]:
    form = rng.choice(["v4", "v4", "v6-full", "v6-compressed", "v6-mapped"])
    if form == "v4":
        first = rng.choice([10, 172, 192, rng.randint(1, 223)])
        return ".".join(str(o) for o in [first, *(rng.randint(0, 255) for _ in range(3))]), form
    groups = [rng.randint(0, 0xFFFF) if rng.random() < 0.6 else 0 for _ in range(8)]
    groups[0] = rng.choice([0x2001, 0xFE80, 0x2A00, 0x2606])
    address = ipaddress.IPv6Address(sum(g << (16 * (7 - i)) for i, g in enumerate(groups)))
    if form == "v6-full":
        return address.exploded, form
    if form == "v6-mapped":
        return f"::ffff:{ipaddress.IPv4Address(rng.randint(0x01000000, 0xDFFFFFFF))}", form
    return address.compressed, form


def _token(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(data: str) -> str:
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def api_key(rng: random.Random) -> tuple[str, str]:
    upper = string.ascii_uppercase + string.digits
    forms: dict[str, Callable[[], str]] = {
        "aws": lambda: rng.choice(["AKIA", "ASIA"]) + _token(rng, 16, upper),
        "openai": lambda: (
            rng.choice(["sk-", "sk-proj-"]) + _token(rng, 48, string.ascii_letters + "0123456789_-")
        ),
        "github": lambda: rng.choice(["ghp_", "gho_"]) + _token(rng, 36),
        "github-pat": lambda: "github_pat_" + _token(rng, 22) + "_" + _token(rng, 59),
        "slack": lambda: f"xox{rng.choice('bp')}-{_digits(rng, 12)}-{_digits(rng, 12)}-{_token(rng, 24)}",
        "stripe": lambda: rng.choice(["sk_live_", "rk_live_"]) + _token(rng, 24),
        "google": lambda: "AIza" + _token(rng, 35, string.ascii_letters + string.digits + "_-"),
        "jwt": lambda: ".".join(
            [_b64('{"alg":"HS256","typ":"JWT"}'), _b64(f'{{"sub":"{_digits(rng, 8)}"}}'), _token(rng, 43)]
        ),
        "pem": lambda: (
            "-----BEGIN RSA PRIVATE KEY-----\n"
            + "\n".join(_token(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(3))
            + "\n-----END RSA PRIVATE KEY-----"
        ),
    }
    form = rng.choice(sorted(forms))
    return forms[form](), form


WORDS = ("hunter", "Sommer", "Soleil", "Luna", "Tigre", "Bluebird", "Kaffee", "azerty", "Dragon", "Invierno")


def password(rng: random.Random) -> tuple[str, str]:
    """A password; one with spaces is written in quotes (the quotes are not part of it)."""
    word = rng.choice(WORDS)
    shape = rng.choice(["word-digits", "word-digits", "leet", "words", "phrase"])
    if shape == "leet":
        return word.replace("o", "0").replace("e", "3").replace("a", "@") + rng.choice("!?#%*") + str(
            rng.randint(0, 99)
        ), shape
    if shape == "words":
        return "-".join(rng.sample([w.lower() for w in WORDS], 3)), shape
    if shape == "phrase":
        return " ".join(rng.sample([w.lower() for w in WORDS], 3)) + f" {rng.randint(1, 99)}", shape
    joint, end = rng.choice(["", "_", "-", ".", "#"]), rng.choice(["", "!", "$", "&"])
    return f"{word}{joint}{rng.randint(1, 9999)}{end}", shape


def token(rng: random.Random) -> tuple[str, str]:
    return _token(rng, rng.randint(20, 40)), "token"


# --------------------------------------------------------------------------------------------
# Hard negatives
# --------------------------------------------------------------------------------------------


def isbn(rng: random.Random) -> str:
    group = rng.choice(["3", "2", "84", "0", "1"])
    publisher = _digits(rng, rng.randint(2, 5))
    title = _digits(rng, 9 - len(group) - len(publisher))
    body = "978" + group + publisher + title
    check = (10 - sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10) % 10
    return rng.choice(["ISBN ", "ISBN-13: ", ""]) + f"978-{group}-{publisher}-{title}-{check}"


def _ean13(rng: random.Random) -> str:
    body = rng.choice(["400", "590", "84", "30", "50"]) + _digits(rng, 10)
    body = body[:12]
    return body + str((10 - sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10) % 10)


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "non-luhn": lambda r: card(r, valid=False)[0],
    "bad-iban": lambda r: iban(r, valid=False)[0],
    "date": lambda r: r.choice(
        [
            f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
            f"{r.randint(1, 28):02d}.{r.randint(1, 12):02d}.2026",
            f"{r.randint(1, 12)}/{r.randint(1, 28)}/2026",
            f"{r.randint(1, 28):02d}/{r.randint(1, 12):02d}/2026",
            f"{r.randint(1, 28)}.{r.randint(1, 12)}.26",
        ]
    ),
    "time": lambda r: r.choice(
        [
            f"{r.randint(0, 23):02d}:{r.choice(['00', '15', '30', '45'])}",
            f"{r.randint(7, 20)}:{r.randint(10, 59)}:00",
            f"{r.randint(7, 20)}.{r.choice(['00', '30'])} Uhr",
            f"{r.randint(7, 20)}h{r.choice(['00', '30'])}",
        ]
    ),
    "price": lambda r: r.choice(
        [
            f"${r.randint(1, 9)},{r.randint(100, 999)}.00",
            f"{r.randint(1, 9)}.{r.randint(100, 999)},00 €",
            f"{r.randint(1, 99)},{r.randint(10, 99)} €",
            f"£{r.randint(1, 99)}.99",
            f"USD {r.randint(100, 9999)}",
            f"{r.randint(1, 9)} {r.randint(100, 999)} €",
        ]
    ),
    "order": lambda r: r.choice(
        [
            f"#{r.randint(10000, 999999)}",
            f"PO-{r.randint(1000, 9999)}",
            f"2026-{r.randint(1000, 9999)}",
            f"{r.randint(100000000, 599999999)}",
            f"A-2026-{r.randint(1, 999):04d}",
        ]
    ),
    "version": lambda r: r.choice(
        [
            f"v{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}",
            f"{r.randint(1, 5)}.{r.randint(0, 9)}.{r.randint(0, 9)}",
            f"version {r.randint(1, 9)}.{r.randint(0, 9)}.{r.randint(0, 9)}.{r.randint(1, 99)}",
            f"10.0.{r.randint(10000, 22999)}.{r.randint(1, 2000)}",
            f"Python 3.{r.randint(8, 13)}.{r.randint(0, 9)}",
        ]
    ),
    "isbn": isbn,
    "ean": lambda r: f"{r.choice(['EAN', 'GTIN', 'EAN-13:'])} {_ean13(r)}",
    "figure": lambda r: r.choice(
        [
            f"{r.randint(1, 9)},{r.randint(100, 999)},{r.randint(100, 999)} users",
            f"{r.randint(1, 99)}.{r.randint(1, 9)}%",
            f"{r.randint(40, 55)}.{r.randint(1000, 9999)}, {r.randint(1, 20)}.{r.randint(1000, 9999)}",
            f"1.{r.randint(50, 99)} m",
            f"{r.randint(2000, 2015)}-{r.randint(2016, 2030)}",
            f"{r.randint(7, 10)}:00-{r.randint(16, 19)}:30",
            f"{r.randint(100, 999)} {r.randint(100, 999)} {r.randint(100, 999)} visits",
        ]
    ),
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "tracking": lambda r: "1Z" + _token(r, 6, string.ascii_uppercase + string.digits) + _digits(r, 10),
    "zip": lambda r: r.choice(
        [
            f"{r.randint(10000, 99999)} Berlin",
            f"750{r.randint(1, 20):02d} Paris",
            f"280{r.randint(1, 99):02d} Madrid",
            "SW1A 1AA London",
            f"San Francisco, CA 941{r.randint(0, 99):02d}",
            f"D-{r.randint(10000, 99999)} München",
        ]
    ),
}

#: Sentences that name a secret without stating one, by language.
NO_SECRET = {
    "en": ["the password is too short", "reset your password", "Tokens: 1500", "the token expired"],
    "de": ["das Passwort ist abgelaufen", "Passwort vergessen", "der Token ist ungültig"],
    "fr": ["le mot de passe est expiré", "mot de passe oublié", "le jeton est invalide"],
    "es": ["la contraseña es incorrecta", "olvidé la contraseña", "el token caducó"],
}

POSITIVES: dict[str, tuple[PiiKind, Callable[[random.Random], tuple[str, str]]]] = {
    "email": (PiiKind.EMAIL, email),
    "phone": (PiiKind.PHONE, phone),
    "card": (PiiKind.CARD, card),
    "iban": (PiiKind.IBAN, iban),
    "ip": (PiiKind.IP, ip),
    "key": (PiiKind.SECRET, api_key),
    "password": (PiiKind.SECRET, password),
    "token": (PiiKind.SECRET, token),
}

# --------------------------------------------------------------------------------------------
# Phrasings: half A's and half B's, per language
# --------------------------------------------------------------------------------------------

# fmt: off
PHRASES: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "A": {
        "en": {"email": ("write to {}", "my email is {}"), "phone": ("call me at {}", "my number is {}"),
               "card": ("my card number is {}", "charge it to {}"),
               "iban": ("my IBAN is {}", "transfer it to {}"),
               "ip": ("the server is at {}", "I logged in from {}"),
               "key": ("the deploy key is {}", "use {} for the API"),
               "password": ("my password is {}", "password: {}"), "token": ("api key: {}", "token: {}"),
               "date": ("the invoice is due on {}",), "time": ("the meeting starts at {}",),
               "price": ("it costs {}",), "order": ("order {} has shipped",),
               "version": ("we upgraded to {}",), "isbn": ("the book is {}",), "zip": ("she lives in {}",),
               "non-luhn": ("reference number {}",), "bad-iban": ("the old account {} was closed",),
               "ean": ("the barcode reads {}",), "figure": ("we now have {}",),
               "uuid": ("the request id is {}",), "tracking": ("the parcel is {}",)},
        "de": {"email": ("schreib mir an {}", "meine E-Mail ist {}"),
               "phone": ("ruf mich an unter {}", "meine Nummer ist {}"),
               "card": ("meine Kartennummer ist {}", "bitte belasten: {}"),
               "iban": ("meine IBAN ist {}", "überweise es auf {}"),
               "ip": ("der Server läuft auf {}", "Zugriff von {}"),
               "key": ("der Schlüssel ist {}", "nimm {} für die API"),
               "password": ("mein Passwort ist {}", "Passwort: {}"),
               "token": ("API-Schlüssel: {}", "Token: {}"),
               "date": ("die Rechnung ist am {} fällig",), "time": ("das Meeting beginnt um {}",),
               "price": ("es kostet {}",), "order": ("Bestellung {} ist unterwegs",),
               "version": ("wir sind auf {} umgestiegen",), "isbn": ("das Buch ist {}",),
               "zip": ("sie wohnt in {}",), "non-luhn": ("Referenznummer {}",),
               "bad-iban": ("das alte Konto {} ist gekündigt",),
               "ean": ("der Strichcode lautet {}",), "figure": ("wir haben jetzt {}",),
               "uuid": ("die Request-ID ist {}",), "tracking": ("das Paket hat {}",)},
        "fr": {"email": ("écris-moi à {}", "mon adresse est {}"),
               "phone": ("appelle-moi au {}", "mon numéro est le {}"),
               "card": ("mon numéro de carte est {}", "débitez la carte {}"),
               "iban": ("mon IBAN est {}", "virez-le sur {}"),
               "ip": ("le serveur est sur {}", "connexion depuis {}"),
               "key": ("la clé est {}", "utilise {} pour l'API"),
               "password": ("mon mot de passe est {}", "mot de passe : {}"),
               "token": ("clé API : {}", "jeton : {}"),
               "date": ("la facture est due le {}",), "time": ("la réunion commence à {}",),
               "price": ("ça coûte {}",), "order": ("la commande {} est partie",),
               "version": ("on est passés à {}",), "isbn": ("le livre est {}",), "zip": ("elle habite {}",),
               "non-luhn": ("numéro de référence {}",), "bad-iban": ("l'ancien compte {} est clos",),
               "ean": ("le code-barres est {}",), "figure": ("on a maintenant {}",),
               "uuid": ("l'identifiant est {}",), "tracking": ("le colis est {}",)},
        "es": {"email": ("escríbeme a {}", "mi correo es {}"), "phone": ("llámame al {}", "mi número es {}"),
               "card": ("mi número de tarjeta es {}", "cárgalo a {}"),
               "iban": ("mi IBAN es {}", "transfiérelo a {}"),
               "ip": ("el servidor está en {}", "acceso desde {}"),
               "key": ("la clave es {}", "usa {} para la API"),
               "password": ("mi contraseña es {}", "contraseña: {}"), "token": ("clave API: {}", "token: {}"),
               "date": ("la factura vence el {}",), "time": ("la reunión empieza a las {}",),
               "price": ("cuesta {}",), "order": ("el pedido {} ya salió",),
               "version": ("actualizamos a {}",), "isbn": ("el libro es {}",), "zip": ("vive en {}",),
               "non-luhn": ("número de referencia {}",), "bad-iban": ("la cuenta antigua {} está cerrada",),
               "ean": ("el código de barras es {}",), "figure": ("ya tenemos {}",),
               "uuid": ("el id de la petición es {}",), "tracking": ("el paquete es {}",)},
    },
    "B": {
        "en": {"email": ("you can reach Sam at {}", "send the invoice to {}"),
               "phone": ("Sam's mobile is {}", "the office line is {}"),
               "card": ("the corporate Visa is {}", "billing card on file: {}"),
               "iban": ("pay the rent into {}", "the supplier's account: {}"),
               "ip": ("VPN gateway: {}", "requests came from {}"),
               "key": ("rotate {} before Friday", "leaked in the logs: {}"),
               "password": ("the wifi password is {}", "pwd={}"), "token": ("secret={}", "API_KEY={}"),
               "date": ("we met on {}",), "time": ("the train leaves at {}",),
               "price": ("the quote came to {}",), "order": ("see ticket {}",),
               "version": ("the bug is fixed in {}",), "isbn": ("order the title {}",),
               "zip": ("the warehouse is in {}",), "non-luhn": ("tracking code {}",),
               "bad-iban": ("IBAN {} bounced",),
               "ean": ("scan {} at the till",), "figure": ("the dashboard shows {}",),
               "uuid": ("trace {} in the logs",), "tracking": ("UPS says {} is delayed",)},
        "de": {"email": ("erreichbar unter {}", "die Rechnung bitte an {}"),
               "phone": ("Handy von Jonas: {}", "die Hotline erreicht man unter {}"),
               "card": ("die Firmenkreditkarte lautet {}", "Karte hinterlegt: {}"),
               "iban": ("die Miete geht auf {}", "Konto des Lieferanten: {}"),
               "ip": ("VPN-Gateway: {}", "die Anfragen kamen von {}"),
               "key": ("bitte {} bis Freitag rotieren", "im Log gefunden: {}"),
               "password": ("das Kennwort lautet {}", "Passwort für das Portal: {}"),
               "token": ("client_secret={}", "der Token lautet {}"),
               "date": ("wir haben uns am {} getroffen",), "time": ("der Zug fährt um {}",),
               "price": ("das Angebot lag bei {}",), "order": ("siehe Vorgang {}",),
               "version": ("der Fehler ist in {} behoben",), "isbn": ("bestell den Titel {}",),
               "zip": ("das Lager ist in {}",), "non-luhn": ("Sendungsnummer {}",),
               "bad-iban": ("IBAN {} wurde abgelehnt",),
               "ean": ("an der Kasse {} scannen",), "figure": ("das Dashboard zeigt {}",),
               "uuid": ("Trace {} im Log",), "tracking": ("laut UPS ist {} verspätet",)},
        "fr": {"email": ("contactez Marie via {}", "envoyez le devis à {}"),
               "phone": ("le portable de Marie : {}", "le standard répond au {}"),
               "card": ("la carte de l'entreprise est la {}", "carte enregistrée : {}"),
               "iban": ("le loyer est payé sur {}", "compte du fournisseur : {}"),
               "ip": ("passerelle VPN : {}", "les requêtes venaient de {}"),
               "key": ("révoquer {} avant vendredi", "trouvée dans les logs : {}"),
               "password": ("le mot de passe du wifi est {}", "mdp : {}"),
               "token": ("secret={}", "le token est {}"),
               "date": ("on s'est vus le {}",), "time": ("le train part à {}",),
               "price": ("le devis s'élève à {}",), "order": ("voir le ticket {}",),
               "version": ("le bug est corrigé dans {}",), "isbn": ("commandez le titre {}",),
               "zip": ("l'entrepôt est à {}",), "non-luhn": ("numéro de suivi {}",),
               "bad-iban": ("l'IBAN {} a été rejeté",),
               "ean": ("scanner {} en caisse",), "figure": ("le tableau de bord affiche {}",),
               "uuid": ("trace {} dans les logs",), "tracking": ("UPS dit que {} est en retard",)},
        "es": {"email": ("puedes contactar a Lucía en {}", "manda la factura a {}"),
               "phone": ("el móvil de Lucía es el {}", "la centralita: {}"),
               "card": ("la tarjeta de empresa es {}", "tarjeta guardada: {}"),
               "iban": ("el alquiler se paga en {}", "cuenta del proveedor: {}"),
               "ip": ("pasarela VPN: {}", "las peticiones venían de {}"),
               "key": ("rota {} antes del viernes", "filtrada en los logs: {}"),
               "password": ("la contraseña del router es {}", "la clave del wifi es {}"),
               "token": ("secret={}", "el token es {}"),
               "date": ("nos vimos el {}",), "time": ("el tren sale a las {}",),
               "price": ("el presupuesto fue de {}",), "order": ("ver la incidencia {}",),
               "version": ("el fallo está corregido en {}",), "isbn": ("pide el título {}",),
               "zip": ("el almacén está en {}",), "non-luhn": ("número de seguimiento {}",),
               "bad-iban": ("el IBAN {} fue rechazado",),
               "ean": ("escanea {} en caja",), "figure": ("el panel muestra {}",),
               "uuid": ("traza {} en los logs",), "tracking": ("UPS dice que {} va con retraso",)},
    },
}
CONNECTORS = {
    "A": {"en": (", and ", "; "), "de": (", und ", "; "), "fr": (", et ", "; "), "es": (", y ", "; ")},
    "B": {"en": (". Also, ", " - "), "de": (". Außerdem: ", " - "), "fr": (". Aussi, ", " - "),
          "es": (". Además, ", " - ")},
}
#: The shape around the clauses: ``{}`` the clauses, ``{name}`` a sender, ``{ts}`` a timestamp.
SHAPES = {
    "A": ("{}.", "{name}: {}.", "Subject: note\n\nHi,\n{}.\nThanks, {name}", "[{ts}] {}"),
    "B": ("- {}", "{ts} INFO memory: {}", "> {}!", '{{"note": "{}"}}'),
}
# fmt: on


class _Builder:
    """A sentence written piece by piece, remembering where each labelled piece went."""

    def __init__(self) -> None:
        self.text = ""
        self.items: list[Item] = []
        self.negatives: list[Item] = []

    def add(self, text: str, label: tuple[str, str] | None = None, negative: bool = False) -> None:
        if label is not None:
            item = Item(label[0], label[1], len(self.text), len(self.text) + len(text), text)
            (self.negatives if negative else self.items).append(item)
        self.text += text


def _clause(rng: random.Random, half: str, language: str, what: str, out: _Builder) -> None:
    """One phrase of ``half`` with a positive item or a hard negative of type ``what`` in it."""
    if what == "no-secret":
        out.add(rng.choice(NO_SECRET[language]), ("no-secret", language), negative=True)
        return
    before, after = rng.choice(PHRASES[half][language][what]).split("{}")
    out.add(before)
    if what in POSITIVES:
        kind, make = POSITIVES[what]
        value, form = make(rng)
        opening, closing = _around(rng, what, value)
        out.add(opening)
        out.add(value, (kind.value, f"{what}:{form}"))
        out.add(closing)
    else:
        out.add(NEGATIVES[what](rng), (what, what), negative=True)
    out.add(after)


def _around(rng: random.Random, what: str, value: str) -> tuple[str, str]:
    """What is written around an item without being part of it: quotes, brackets, a port."""
    if what == "password" and " " in value:
        return '"', '"'
    if what == "ip" and ":" in value:
        return ("[", "]:443") if rng.random() < 0.3 else ("", "")
    if what == "ip" and rng.random() < 0.3:
        return "", rng.choice([":8080", "/24"])
    if what in ("email", "phone") and rng.random() < 0.2:
        return rng.choice([("(", ")"), ("<", ">")])
    return "", ""


def sentence(index: int, seed: int = SEED) -> Sentence:
    """Sentence ``index``: its half by parity, its language, shape and clauses drawn from its seed."""
    rng = random.Random(f"{seed}-{index}")
    half = HALVES[index % 2]
    language = LANGUAGES[(index // 2) % len(LANGUAGES)]
    whats: list[str] = []
    if rng.random() > 0.12:
        whats += rng.sample(sorted(POSITIVES), rng.choice([1, 1, 2, 2, 3]))
    whats += rng.sample([*NEGATIVES, "no-secret"], rng.choice([0, 1, 1, 2]) if whats else rng.choice([1, 2]))
    rng.shuffle(whats)
    shape = rng.choice(SHAPES[half])
    day, hour, minute = rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    ts = f"2026-{rng.randint(1, 12):02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"
    head, tail = shape.format("\x00", name=rng.choice(NAMES), ts=ts).split("\x00")
    out = _Builder()
    out.add(head)
    for n, what in enumerate(whats):
        if n:
            out.add(rng.choice(CONNECTORS[half][language]))
        _clause(rng, half, language, what, out)
    out.add(tail)
    return Sentence(index, half, language, out.text, tuple(out.items), tuple(out.negatives))


def sentences(n: int = SENTENCES, seed: int = SEED) -> list[Sentence]:
    return [sentence(i, seed) for i in range(n)]


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


def _overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


def evaluate(labelled: list[Sentence], detect: Callable[[str], list[Span]] = find) -> dict[str, Any]:
    """Recall and precision per kind and overall, with the misses and false positives."""
    counts = {kind.value: {"items": 0, "found": 0, "predicted": 0, "correct": 0} for kind in PiiKind}
    misses: list[dict[str, str]] = []
    false_positives: list[dict[str, str]] = []
    for s in labelled:
        predicted = detect(s.text)
        for item in s.items:
            counts[item.kind]["items"] += 1
            if any(p.kind == item.kind and _overlap(p.start, p.end, item.start, item.end) for p in predicted):
                counts[item.kind]["found"] += 1
            else:
                misses.append({"kind": item.kind, "form": item.form, "value": item.value, "text": s.text})
        for p in predicted:
            counts[p.kind.value]["predicted"] += 1
            if any(i.kind == p.kind and _overlap(p.start, p.end, i.start, i.end) for i in s.items):
                counts[p.kind.value]["correct"] += 1
            else:
                hit = [n.form for n in s.negatives if _overlap(p.start, p.end, n.start, n.end)]
                false_positives.append(
                    {
                        "kind": p.kind.value,
                        "span": s.text[p.start : p.end],
                        "negative": ",".join(hit),
                        "text": s.text,
                    }
                )
    total = {key: sum(c[key] for c in counts.values()) for key in ("items", "found", "predicted", "correct")}
    return {
        "sentences": len(labelled),
        "hard_negatives": sum(len(s.negatives) for s in labelled),
        "kinds": {kind: _rates(c) for kind, c in counts.items()},
        "overall": _rates(total),
        "misses": misses,
        "false_positives": false_positives,
    }


def _rates(c: dict[str, int]) -> dict[str, Any]:
    return {
        **c,
        "recall": round(100 * c["found"] / c["items"], 1) if c["items"] else None,
        "precision": round(100 * c["correct"] / c["predicted"], 1) if c["predicted"] else None,
    }


def report(seed: int = SEED) -> dict[str, Any]:
    labelled = sentences(SENTENCES, seed)
    result: dict[str, Any] = {"benchmark": "redaction", "parameters": {"sentences": SENTENCES, "seed": seed}}
    for half in HALVES:
        result[half] = evaluate([s for s in labelled if s.half == half])
    return result


def _print_half(half: str, r: dict[str, Any]) -> None:
    role = "tuned on" if half == "A" else "held out"
    print(f"half {half} ({role}): {r['sentences']} sentences, {r['hard_negatives']} hard negatives")
    print(f"  {'kind':<8} {'items':>5} {'recall %':>9} {'predicted':>9} {'precision %':>11}")
    for kind, c in [*r["kinds"].items(), ("overall", r["overall"])]:
        print(f"  {kind:<8} {c['items']:>5} {c['recall']!s:>9} {c['predicted']:>9} {c['precision']!s:>11}")
    for label, rows in (("missed", r["misses"]), ("false positive", r["false_positives"])):
        for row in rows[:8]:
            what = (
                f"{row['form']} {row['value']!r}"
                if label == "missed"
                else f"{row['span']!r} ({row['negative']})"
            )
            print(f"  {label} {row['kind']}: {what} in {row['text']!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = parser.parse_args()
    result = report()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    for half in HALVES:
        _print_half(half, result[half])


if __name__ == "__main__":
    main()
