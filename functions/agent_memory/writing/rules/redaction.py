"""Personal data and secrets in a text replaced by typed placeholders, before the text goes anywhere.

With redaction on write (a tenant setting, off by default), a memory is embedded, summarized and
stored only after this module has replaced the e-mail addresses, phone numbers, payment card
numbers, IBANs, IP addresses and secrets in it with ``[EMAIL]``, ``[PHONE]``, ``[CARD]``,
``[IBAN]``, ``[IP]`` and ``[SECRET]``. The original is never stored or logged, not even as a hash
or a reversible token: a placeholder names the kind and nothing else, so nothing downstream can
give the value back, and `Redaction` reports how many of each kind were replaced, never what.

A pattern alone over-matches (every 16-digit order number would be a card, every date a phone),
so candidates pass a validator before they count: the Luhn checksum and an issuer's leading digit
for card numbers, mod-97 and the country's length for IBANs, octet ranges for IPv4 and the address
grammar for IPv6, digit counts and grouping for phone numbers (a date, a time, a version, an
amount or an order number is not a phone; those three are in `writing.rules.pii_numbers`). Secrets are
the well-known key shapes (AWS, OpenAI, GitHub, Slack, Stripe, Google, JWTs, PEM private keys)
and values stated after a keyword in English, German, French or Spanish ("password: …", "mein
Passwort ist …", "mot de passe : …", "contraseña: …"): the keyword stays, the value goes.

Where candidates overlap, the longest wins, then the most specific kind (a valid card is not also
a phone, an IBAN not a phone). Redaction repeats until nothing more is found, so it is idempotent,
and no placeholder matches a pattern.

Pure (no I/O). Precision and recall on a labelled set, tuned on one half and reported on the
other: benchmarks/redaction.py.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent_memory.writing.rules.pii_numbers import cards, ibans, phones


class PiiKind(StrEnum):
    """What a redacted span was; its placeholder is the upper-case name in brackets."""

    EMAIL = "email"
    PHONE = "phone"
    CARD = "card"
    IBAN = "iban"
    IP = "ip"
    SECRET = "secret"

    @property
    def placeholder(self) -> str:
        return f"[{self.value.upper()}]"


@dataclass(frozen=True)
class Span:
    """Where a kind of personal data or secret is in a text: ``text[start:end]``."""

    kind: PiiKind
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """The redacted text and how many items of each kind were replaced (never their values)."""

    text: str
    counts: dict[PiiKind, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


#: A pass can make a new candidate out of a placeholder's neighbours; redaction repeats until none.
MAX_PASSES = 5
_PLACEHOLDER = re.compile("|".join(re.escape(k.placeholder) for k in PiiKind))


# --------------------------------------------------------------------------------------------
# E-mail addresses and IP addresses
# --------------------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w+%-])(?=[\w.+%-]{1,64}@)"
    r"[\w+%-]+(?:\.[\w+%-]+)*"
    r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-])"
)


def _emails(text: str) -> Iterator[tuple[int, int]]:
    for match in _EMAIL.finditer(text):
        yield match.span()


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"(?<![\w.-])(?<![0-9A-Fa-f]:)(?:{_OCTET}\.){{3}}{_OCTET}(?![\w-]|\.[0-9])")
_IPV6 = re.compile(
    r"(?<![\w:.])(?>(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4}))"
    r"(?![\w:]|\.[0-9])"
)
#: A dotted number right after one of these is a version, not an address.
_VERSION_BEFORE = re.compile(r"(?i)(?:\bv|\bver\.?|\bversion|\brelease|\bbuild|\bfirmware)\s*:?\s*$")


def _ips(text: str) -> Iterator[tuple[int, int]]:
    for match in _IPV4.finditer(text):
        if not _VERSION_BEFORE.search(text, max(0, match.start() - 12), match.start()):
            yield match.span()
    for match in _IPV6.finditer(text):
        if _is_ipv6(match.group()):
            yield match.span()


def _is_ipv6(candidate: str) -> bool:
    """The address grammar, and either all eight groups or ``::`` with two groups or more."""
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    groups = [g for g in re.split(r"[:.]", candidate) if g]
    return ("::" in candidate and len(groups) >= 2) or candidate.count(":") == 7


# --------------------------------------------------------------------------------------------
# Secrets
# --------------------------------------------------------------------------------------------

_KEY_SHAPES = re.compile(
    r"(?<![\w-])(?:"
    r"(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,255}"
    r"|github_pat_[A-Za-z0-9_]{22,255}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"
    r")(?![\w-])"
    r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s]*)"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/-]{16,}=*"
)

#: Words after which a value is a password (a short one counts).
_PASSWORD_WORDS = (
    r"pass(?:word|wort|phrase|code|wd)|pwd|pw|kennwort|mot de passe|mdp|contrase[ñn]a|senha"
    r"|(?:pin|pin[ -]?code|code pin|c[óo]digo pin)"
)
#: Words after which a value is a key or a token (it must look like one).
_KEY_WORDS = (
    r"(?:client|app|aws|private)?[ _-]?secret(?:[ _-]?(?:access[ _-]?)?key)?"
    r"|api[ _-]?(?:key|token|schl[üu]ssel)|apikey|cl[ée] (?:d['\u2019])?api|clave(?: de)?(?: api)?"
    r"|(?:access|auth|refresh|session)?[ _-]?token|jeton|access[ _-]?key|private[ _-]?key"
)
_KEYWORD_SECRET = re.compile(
    rf"(?i)(?<![^\W\d_])(?:(?P<pw>{_PASSWORD_WORDS})|(?P<key>{_KEY_WORDS}))(?![^\W\d_])"
    r"(?:\s+(?:for|of|to|on|für|zum|zur|vom|von|pour|du|de la|de|para|del)\s+[^\n:=\"]{1,40}?)?"
    r"[\"']?"
    r"(?:\s*(?:[:=]|=>)\s*|\s+(?:is|was|ist|lautet|war|est|était|es|era|é)"
    r"(?:\s+(?:now|still|jetzt|noch|maintenant|toujours|ahora))?\s*:?\s+)"
    r"(?P<v>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|“[^”\n]{1,200}”|[^\s\"'“”]{1,200})"
)
#: What follows "the password is" without being one: its state, or the start of another clause.
# fmt: off
_NOT_A_VALUE = frozenset({
    "a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "this", "that", "too", "not", "no",
    "very", "so", "also", "just", "still", "now", "being", "in", "on", "at", "of", "for", "to", "by",
    "from", "with", "and", "or", "but", "if", "required", "incorrect", "wrong", "correct", "right",
    "expired", "invalid", "valid", "set", "reset", "changed", "unchanged", "same", "different", "secure",
    "insecure", "strong", "weak", "empty", "missing", "stored", "saved", "here", "below", "above",
    "attached", "encrypted", "hashed", "hidden", "secret", "long", "short", "new", "old", "ok", "okay",
    "fine", "simple", "easy", "hard", "unknown", "needed", "needs", "safe", "case-sensitive", "ist",
    "nicht", "kein", "keine", "sehr", "zu", "der", "die", "das", "mein", "dein", "ein", "eine", "falsch",
    "richtig", "abgelaufen", "geheim", "geändert", "gespeichert", "neu", "alt", "sicher", "unsicher",
    "leer", "hier", "unten", "oben", "est", "pas", "très", "trop", "le", "la", "les", "mon", "ton", "un",
    "une", "faux", "expiré", "changé", "nouveau", "ancien", "vide", "ici", "es", "muy",
    "demasiado", "el", "los", "mi", "tu", "una", "incorrecta", "correcta", "caducada", "cambiada",
    "nueva", "vieja", "vacía", "aquí", "segura",
})
# fmt: on


def _secrets(text: str) -> Iterator[tuple[int, int]]:
    for match in _KEY_SHAPES.finditer(text):
        yield match.span()
    for match in _KEYWORD_SECRET.finditer(text):
        span = _secret_value(match)
        if span is not None:
            yield span


def _secret_value(match: re.Match[str]) -> tuple[int, int] | None:
    """The value's span (inside its quotes, without a sentence's closing punctuation), if it is one."""
    value = match.group("v")
    start, end = match.span("v")
    if value[0] in "\"'“":
        return (start + 1, end - 1) if not _PLACEHOLDER.match(value, 1) else None
    if _PLACEHOLDER.match(value):
        return None
    stripped = value.rstrip(".,;:!?)]}>")
    if stripped.casefold() in _NOT_A_VALUE or not stripped:
        return None
    if match.group("key") is not None and not _looks_like_key(stripped):
        return None
    if len(stripped) < 3:
        return None
    return start, start + len(stripped)


def _looks_like_key(value: str) -> bool:
    """Six characters or more with a digit, a symbol or a capital after the first letter."""
    mixed = any(c.isdigit() or not c.isalnum() or c.isupper() for c in value[1:])
    return len(value) >= 6 and mixed


# --------------------------------------------------------------------------------------------
# Finding and replacing
# --------------------------------------------------------------------------------------------

#: Each detector, its kind and its rank: on spans of equal length the lower rank wins.
_DETECTORS: list[tuple[PiiKind, int, Callable[[str], Iterator[tuple[int, int]]]]] = [
    (PiiKind.SECRET, 0, _secrets),
    (PiiKind.IBAN, 1, ibans),
    (PiiKind.CARD, 2, cards),
    (PiiKind.EMAIL, 3, _emails),
    (PiiKind.IP, 4, _ips),
    (PiiKind.PHONE, 5, phones),
]


#: Spans found by another engine (Comprehend) lose ties to the local detectors' own.
_EXTRA_RANK = len(_DETECTORS)


def find(text: str, extra: Sequence[Span] = ()) -> list[Span]:
    """The personal data and secrets in ``text``, in order, none overlapping another.

    Of overlapping candidates the longest is kept, then the one of the more specific kind.
    ``extra`` are spans another engine found: they join the candidates on the same terms.
    """
    candidates = [
        (start, end, rank, kind)
        for kind, rank, detect in _DETECTORS
        for start, end in detect(text)
        if end > start
    ]
    candidates += [(s.start, s.end, _EXTRA_RANK, s.kind) for s in extra if 0 <= s.start < s.end <= len(text)]
    candidates.sort(key=lambda c: (c[0] - c[1], c[2], c[0]))
    starts: list[int] = []
    kept: list[Span] = []
    for start, end, _, kind in candidates:
        at = bisect.bisect_left(starts, start)
        if (at > 0 and kept[at - 1].end > start) or (at < len(kept) and kept[at].start < end):
            continue
        starts.insert(at, start)
        kept.insert(at, Span(kind, start, end))
    return kept


def _replace(text: str, spans: list[Span]) -> str:
    pieces: list[str] = []
    position = 0
    for span in spans:
        pieces += [text[position : span.start], span.kind.placeholder]
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces)


def redact(text: str, detect_more: Callable[[str], Sequence[Span]] | None = None) -> Redaction:
    """``text`` with every item `find` finds replaced by its kind's placeholder, until none is left.

    ``detect_more`` (another engine, such as Comprehend) is asked once, on the original text:
    its spans join the first pass; later passes only find what replacing made visible."""
    counts: Counter[PiiKind] = Counter()
    for attempt in range(MAX_PASSES):
        extra = detect_more(text) if detect_more is not None and attempt == 0 else ()
        spans = find(text, extra)
        if not spans:
            break
        text = _replace(text, spans)
        counts.update(span.kind for span in spans)
    return Redaction(text, dict(counts))


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (JSON: metadata) with ``change`` applied to every string in it, keys left as
    they are: a redacted write redacts the free text in its metadata too."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, change) for v in value]
    return value
