"""Hypothesis strategies shared by the property and fuzz tests, and the settings they run under.

- `hostile`: text built from the pieces that break naive code (`HOSTILE_PIECES`), optionally
  with lone surrogates; `encodes_as_utf8` tells the text UTF-8 (and so a queue or a database)
  can carry from the text it cannot.
- `mutations`: a text truncated, corrupted or repeated, as a wire or a bug would leave it.
- Time keys: `summary_grains`, `valid_keys` (a real key of some grain) and `key_like` (text
  made of a key's characters and their look-alikes: other scripts' digits, separators, NUL).

A strategy used by one module stays in it; once a second module needs it, it moves here.
"""

from __future__ import annotations

from datetime import date

from hypothesis import settings
from hypothesis import strategies as st

from agent_memory.model.grains import SUMMARY_GRAINS, time_key_for


def examples(n: int) -> int:
    """How many examples a costly property or stateful test runs: ``n`` under the repeatable
    profile every ``make test`` uses (the same fixed examples on every run, sized to the suite's
    15 minutes), ten times as many under ``HYPOTHESIS_PROFILE=explore``, where a long search for
    a new counter-example belongs."""
    return n * 10 if settings.get_current_profile_name() == "explore" else n


#: How the property tests run unless they say otherwise: enough examples to reach the edges, and
#: no deadline (a slow first example is an import, not a regression).
FUZZ = settings(max_examples=150, deadline=None)

#: Pieces that break naive code: controls, bidi and zero-width marks, combining marks,
#: non-characters, path traversal, and the operators of FTS5, Lucene and SQL.
HOSTILE_PIECES = [
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x85",
    "\x9b",
    "\u202e",  # right-to-left override
    "\u202d",
    "\u2066",
    "\u2069",
    "\u200f",
    "\u200d",  # zero-width joiner
    "\ufeff",  # byte order mark
    "\u0301",  # combining acute
    "e\u0301\u0336\u0338",
    "\u2028",
    "\u2029",
    "\uffff",
    "\U0010ffff",
    "\U0001f4a5",
    "\uff0f",  # fullwidth solidus
    "\u2024\u2024/",  # one-dot leaders
    "../",
    "..\\",
    "%2e%2e%2f",
    "/etc/passwd",
    '"',
    "'",
    "*",
    "^",
    ":",
    "(",
    ")",
    "NEAR(",
    "content:",
    "{content topic}:",
    " OR ",
    " AND ",
    " NOT ",
    "') OR 1=1 --",
    "%",
    "_",
    "\\",
    "${jndi:ldap://x}",
    "<script>",
    "tenant_id:*",
]
LONE_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


def hostile(*, surrogates: bool = True, max_pieces: int = 10) -> st.SearchStrategy[str]:
    parts: list[st.SearchStrategy[str]] = [st.sampled_from(HOSTILE_PIECES), st.text(max_size=6)]
    if surrogates:
        parts.append(LONE_SURROGATES)
    return st.lists(st.one_of(*parts), max_size=max_pieces).map("".join)


def encodes_as_utf8(text: str) -> bool:
    """False for text UTF-8 cannot carry (a lone surrogate): what JSON may hold but SQS, SQLite
    and every store refuse."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def mutations(text: str) -> st.SearchStrategy[str]:
    """``text`` with a slice deleted, replaced or repeated: what truncation and corruption do."""
    n = len(text)
    cut = st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted)
    noise = st.one_of(
        st.sampled_from(['"', "\\", "{", "}", "[", "]", ",", ":", "\\u", "\\ud800", "\x00"]),
        st.text(max_size=4),
    )
    return st.one_of(
        cut.map(lambda ab: text[: ab[0]] + text[ab[1] :]),
        st.tuples(cut, noise).map(lambda t: text[: t[0][0]] + t[1] + text[t[0][1] :]),
        cut.map(lambda ab: text[: ab[1]] + text[ab[0] :]),
    )


# --- time keys ------------------------------------------------------------------------------------

summary_grains = st.sampled_from(SUMMARY_GRAINS)
#: ASCII digits, and digits of other scripts that ``int()`` would read (Arabic-Indic, fullwidth,
#: Devanagari, mathematical double-struck).
any_digit = st.sampled_from(["0", "1", "2", "9", "\u0662", "\uff11", "\u0967", "\U0001d7d8"])
key_like = st.lists(
    st.one_of(any_digit, st.sampled_from(["-", "W", "w", "Q", "q", " ", "\n", "+", "\x00", "T", ":"])),
    max_size=12,
).map("".join)
valid_keys = st.tuples(summary_grains, st.dates(date(1, 1, 1), date(9998, 12, 1))).map(
    lambda gd: time_key_for(gd[0], gd[1])
)
