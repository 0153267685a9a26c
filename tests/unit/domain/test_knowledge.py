"""Shared knowledge's documents and passages (`knowledge.rules.passages`): `split_passages` checked against a
plain reference (offsets, order, the limit, every visible character of the body in exactly one
passage, heading paths that follow markdown nesting, fenced code), `passages_of` (deterministic
ids), and `KnowledgeDocument` (validation, `same_as` and `fingerprint`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agent_memory.knowledge.rules.passages import (
    CITATION_SEPARATOR,
    MAX_DOCUMENT_CHARS,
    MAX_HEADING_CHARS,
    MAX_TITLE_CHARS,
    PASSAGE_CHARS,
    DocumentFormat,
    KnowledgeDocument,
    PassageSpan,
    document_hash,
    passages_of,
    split_passages,
)
from agent_memory.model.limits import MAX_TAGS
from agent_memory.model.types import visible

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PROPERTY = settings(max_examples=120, deadline=None)

# --- the reference ------------------------------------------------------------------------------

_ATX = re.compile(r"(#{1,6})[ \t]+(.*)")
_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_OPENER = re.compile(r"(`{3,}|~{3,})(.*)")

#: What the reference says of one character: ``None`` when it is on a heading line, else the
#: heading path of the section it is in.
Owner = tuple[str, ...] | None


def _heading_title(content: str) -> str:
    """A heading's text as CommonMark reads it: the closing run of ``#`` (after a space) dropped."""
    content = _CLOSING.sub("", content.rstrip(" \t"))
    return " ".join(content.split())[:MAX_HEADING_CHARS]


def reference_owners(text: str, markdown: bool) -> list[Owner]:
    """Line by line (lines end at ``\\n`` only), tracking fenced code (a fence is closed only by a
    bare run of its own character, at least as long) and a stack of heading levels."""
    owners: list[Owner] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    lines = text.split("\n")
    for n, line in enumerate(lines):
        heading = False
        if markdown and fence is not None:
            if re.fullmatch(re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*", line):
                fence = None
        elif (
            markdown
            and (opener := _OPENER.match(line))
            and not (opener.group(1)[0] == "`" and "`" in opener.group(2))
        ):
            fence = opener.group(1)
        elif markdown and (m := _ATX.fullmatch(line)):
            heading = True
            level = len(m.group(1))
            stack = [(lvl, t) for lvl, t in stack if lvl < level]
            stack.append((level, _heading_title(m.group(2))))
        path = tuple(t for _, t in stack)
        owners.extend([None if heading else path] * len(line))
        if n < len(lines) - 1:
            owners.append(path)  # the line's "\n" belongs to the section below the heading
    return owners


def check_structure(text: str, spans: Sequence[PassageSpan], limit: int) -> None:
    """Offsets inside the text, in order, not overlapping, within the limit, trimmed, visible."""
    previous_end = 0
    for span in spans:
        assert previous_end <= span.start < span.end <= len(text)
        assert span.end - span.start <= limit
        piece = text[span.start : span.end]
        assert not piece[0].isspace() and not piece[-1].isspace()
        assert visible(piece)
        previous_end = span.end


def covered_by(spans: Sequence[PassageSpan], length: int) -> list[int]:
    """How many passages hold each character of the text."""
    counts = [0] * length
    for span in spans:
        for i in range(span.start, span.end):
            counts[i] += 1
    return counts


# --- strategies ---------------------------------------------------------------------------------

WORDS = [
    "deploy",
    "the",
    "primary",
    "database",
    "Ünïcode",
    "日本語の文。",
    "end.",
    "Why?",
    "Stop!",
    "(see",
    "below).",
    '"quoted."',
    "a.b",
    "C#",
    "#tag",
    "x" * 45,  # longer than the smallest limits: cut mid-word
    "\u200b",  # zero-width space: not visible, not white space
    "\x00",
]
TITLE_WORDS = ["Runbook", "Failover", "DNS", "Ünïcode", "ADR-12", "x.y", "(draft)", "#1"]

heading_lines = st.builds(
    lambda level, sep, words, closing: "#" * level + sep + " ".join(words) + closing,
    st.integers(1, 7),
    st.sampled_from([" ", "\t", "  "]),
    st.lists(st.sampled_from(TITLE_WORDS), min_size=1, max_size=4),
    st.sampled_from(["", " #", " ##  ", "\t###", "   "]),
)
text_lines = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
blank_lines = st.sampled_from(["", " ", "\t", "  \t"])
other_lines = st.sampled_from(
    ["#hashtag here", "    # indented code", "####### seven deep", "#", "#no-space"]
)
markdown_lines = st.one_of(heading_lines, text_lines, text_lines, blank_lines, st.just("```"), other_lines)
markdown_documents = st.lists(markdown_lines, max_size=40).map("\n".join)
limits = st.one_of(st.integers(40, 300), st.just(PASSAGE_CHARS))
#: Raw text over the characters the splitter reacts to, to find what the structured documents miss.
raw_text = st.text(
    alphabet=st.sampled_from([*"ab c#`~\n\n\t.!?。\"')", "\x00", "\u200b", "\u2028", "\r", "\x0b"]),
    max_size=600,
)

# --- split_passages: against the reference ------------------------------------------------------


@given(markdown_documents, limits)
@PROPERTY
def test_markdown_passages_are_the_bodys_visible_text_once_each_under_their_heading_path(
    text: str, limit: int
) -> None:
    """Each passage is text[start:end], in order, within the limit; every character of a passage
    is in a section body whose heading path (the reference's) is the passage's; every visible
    character off the heading lines is in exactly one passage, and none on a heading line is."""
    spans = split_passages(text, "markdown", limit)
    owners = reference_owners(text, markdown=True)
    check_structure(text, spans, limit)
    for span in spans:
        assert {owners[i] for i in range(span.start, span.end)} == {span.heading_path}
    counts = covered_by(spans, len(text))
    for i, char in enumerate(text):
        if owners[i] is None:
            assert counts[i] == 0, (i, char)
        elif visible(char):
            assert counts[i] == 1, (i, char)


@given(markdown_documents, limits)
@PROPERTY
def test_plain_text_has_one_section_and_every_visible_character_once(text: str, limit: int) -> None:
    """Format "text": no heading paths, "#" lines are text, every visible character in exactly one
    passage."""
    spans = split_passages(text, "text", limit)
    check_structure(text, spans, limit)
    assert all(span.heading_path == () for span in spans)
    counts = covered_by(spans, len(text))
    assert all(counts[i] == 1 for i, char in enumerate(text) if visible(char))


@given(raw_text, st.integers(1, 120), st.sampled_from(["markdown", "text"]))
@PROPERTY
def test_raw_text_never_loses_a_visible_character_off_a_heading_like_line(
    text: str, limit: int, format: DocumentFormat
) -> None:
    """On any text (a limit as small as 1), passages are in order, apart, within the limit, and
    every visible character is in exactly one, except (markdown) on a line that starts like an
    ATX heading."""
    spans = split_passages(text, format, limit)
    check_structure(text, spans, limit)
    counts = covered_by(spans, len(text))
    assert max(counts, default=0) <= 1
    position = 0
    for line in text.split("\n"):
        heading_like = format == "markdown" and re.match(r"#{1,6}[ \t]", line)
        for offset, char in enumerate(line):
            if visible(char) and not heading_like:
                assert counts[position + offset] == 1, (position + offset, char)
        position += len(line) + 1


@given(
    st.lists(st.sampled_from(["deploy", "primary", "x" * 70, "Stop!", "end.", "a,b"]), max_size=120),
    st.integers(20, 200),
)
@PROPERTY
def test_a_long_sentence_of_spaced_words_is_cut_mid_word_only_inside_a_word_longer_than_the_limit(
    words: list[str], limit: int
) -> None:
    """Where two passages touch (no white space between them), the run of non-space characters
    they cut is at least as long as the limit."""
    text = " ".join(words)
    spans = split_passages(text, "text", limit)
    for before, after in itertools.pairwise(spans):
        if before.end == after.start:
            run_start = text.rfind(" ", 0, before.end) + 1
            run_end = text.find(" ", after.start)
            run_end = len(text) if run_end < 0 else run_end
            assert run_end - run_start >= limit


@pytest.mark.parametrize("separator", ["\n", "\t"])
def test_a_long_sentence_of_words_on_separate_lines_is_cut_at_white_space(separator: str) -> None:
    # GIVEN one "sentence" (no blank line, no sentence end) of short words, longer than the limit
    words = [f"item{n:03d}" for n in range(40)]
    text = separator.join(words)

    # WHEN it is split with a small limit
    spans = split_passages(text, "text", 50)

    # THEN no passage starts or ends inside a word
    assert len(spans) > 1
    for span in spans:
        assert set(text[span.start : span.end].split()) <= set(words)


def test_heading_paths_follow_markdown_nesting() -> None:
    # GIVEN headings that go down two levels, skip one, and come back up
    text = "intro\n# A\na\n## B\nb\n#### D\nd\n### C\nc\n## E\ne\n# F\nf"

    # WHEN
    spans = split_passages(text)

    # THEN
    assert [(text[s.start : s.end], s.heading_path) for s in spans] == [
        ("intro", ()),
        ("a", ("A",)),
        ("b", ("A", "B")),
        ("d", ("A", "B", "D")),
        ("c", ("A", "B", "C")),
        ("e", ("A", "E")),
        ("f", ("F",)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "```bash\n# restart the primary\nsystemctl restart db\n```\nafter",
        "~~~\n# not a heading\n~~~\nafter",
        "````\n# not a heading\n````\nafter",
        "```\n# an unclosed fence runs to the end\n\nmore code",
    ],
)
def test_hash_lines_inside_a_fence_are_code_not_headings(text: str) -> None:
    # WHEN
    spans = split_passages(text)

    # THEN every passage is outside any heading, and the '#' line is in one of them
    assert all(span.heading_path == () for span in spans)
    assert any("# " in text[s.start : s.end] for s in spans)


#: Fences CommonMark keeps open over a '#' line that the splitter's fence pairing closes first.
NESTED_FENCES = [
    "```\n~~~\n# a shell comment\n```\nafter",
    "```\ncode\n```python\n# a comment\n```\nafter",
    "````markdown\n```bash\n# a comment\n```\n````\nafter",
]


@pytest.mark.parametrize("text", NESTED_FENCES)
def test_the_reference_keeps_these_fences_open_over_the_hash_line(text: str) -> None:
    # WHEN / THEN
    assert set(reference_owners(text, markdown=True)) == {()}


@pytest.mark.parametrize("text", NESTED_FENCES)
def test_a_fence_is_closed_only_by_a_bare_fence_of_its_own_kind(text: str) -> None:
    # WHEN
    spans = split_passages(text)

    # THEN as in the reference: no headings at all
    assert [s.heading_path for s in spans] == [() for _ in spans]


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("## Failover ##", "Failover"),
        ("##\tFailover   ", "Failover"),
        ("### Fail   over\t#", "Fail over"),
        ("# " + "h" * 300, "h" * MAX_HEADING_CHARS),
    ],
)
def test_a_heading_title_is_normalised(line: str, title: str) -> None:
    # WHEN
    spans = split_passages(f"{line}\nbody")

    # THEN
    assert [s.heading_path for s in spans] == [(title,)]


def test_a_heading_that_ends_in_a_hash_keeps_it() -> None:
    # WHEN
    spans = split_passages("# Using C#\nbody\n## F#\nmore")

    # THEN
    assert [s.heading_path for s in spans] == [("Using C#",), ("Using C#", "F#")]


@pytest.mark.parametrize("line", ["#hashtag", "####### seven", "    # indented code", "#", "#x"])
def test_lines_that_are_not_atx_headings_stay_text(line: str) -> None:
    # WHEN
    spans = split_passages(f"{line}\nbody")

    # THEN the line is in the one passage, under no heading
    assert [s.heading_path for s in spans] == [()]
    assert line.strip() in f"{line}\nbody"[spans[0].start : spans[0].end]


def test_windows_line_endings_give_the_same_headings() -> None:
    # WHEN
    spans = split_passages("# A\r\nbody\r\n## B\r\nmore\r\n")

    # THEN
    assert [s.heading_path for s in spans] == [("A",), ("A", "B")]


def test_a_long_section_is_cut_at_paragraphs_then_sentences() -> None:
    # GIVEN a section of two paragraphs, the second of three sentences, each near the limit
    first = "a" * 30 + " " + "b" * 30
    sentences = ["Alpha " + "c" * 40 + ".", "Beta " + "d" * 40 + "!", "Gamma " + "e" * 40 + "?"]
    text = first + "\n\n" + " ".join(sentences)

    # WHEN
    spans = split_passages(text, "text", 70)

    # THEN
    assert [text[s.start : s.end] for s in spans] == [first, *sentences]


def test_an_empty_or_blank_document_has_no_passages() -> None:
    # WHEN / THEN
    assert [split_passages(t) for t in ["", "  \n\t\n", "# Only a heading\n", "\u200b\x00"]] == [[]] * 4


# --- passages_of ------------------------------------------------------------------------------------


def document(text: str = "# Runbook\nRestart the primary.", **fields: Any) -> KnowledgeDocument:
    values: dict[str, Any] = {
        "tenant_id": "acme",
        "doc_id": "ADR-12",
        "version": "v1",
        "title": "ADR 12",
        "text": text,
        "content_hash": document_hash(text),
        "created_at": NOW,
        "updated_at": NOW,
        **fields,
    }
    return KnowledgeDocument(**values)


def under_title(path: tuple[str, ...], title: str) -> list[str]:
    """The reference's path of a passage: a top heading that only repeats the title is left out."""
    return list(path[1:] if path and path[0] == title else path)


@given(markdown_documents, st.sampled_from(["ADR 12", "Runbook", "Failover"]))
@settings(max_examples=60, deadline=None)
def test_passages_of_is_deterministic_and_its_ids_are_the_documents_own(text: str, title: str) -> None:
    """The same document makes the same passages; another version, tenant or document id makes
    none of the same ids; each passage is its span's text, numbered in order, under its span's
    heading path (without a top heading that repeats the title), and inherits the document's
    title, tags, dates and source."""
    base = document(
        text, title=title, tags=["ops"], valid_from=date(2026, 1, 1), source_uri="https://x/adr-12"
    )
    passages = passages_of(base)
    assert passages == passages_of(base.model_copy())
    ids = [p.id for p in passages]
    assert len(set(ids)) == len(ids)
    spans = split_passages(text, "markdown")
    assert [(p.start, p.end, p.heading_path, p.ordinal) for p in passages] == [
        (s.start, s.end, under_title(s.heading_path, title), n) for n, s in enumerate(spans)
    ]
    for p in passages:
        assert p.text == text[p.start : p.end]
        assert (p.tenant_id, p.doc_id, p.version, p.title) == ("acme", "ADR-12", "v1", title)
        assert (p.tags, p.valid_from, p.source_uri) == (["ops"], date(2026, 1, 1), "https://x/adr-12")
    for other in (
        document(text, version="v2"),
        document(text, tenant_id="b"),
        document(text, doc_id="ADR-13"),
    ):
        assert not set(ids) & {p.id for p in passages_of(other)}


def test_a_top_heading_that_repeats_the_title_is_not_cited_twice() -> None:
    # WHEN
    passages = passages_of(document("# ADR 12\nContext.\n## Consequences\nMore work.\n# Appendix\nNotes."))

    # THEN
    assert [p.heading_path for p in passages] == [[], ["Consequences"], ["Appendix"]]
    assert passages[1].citation == CITATION_SEPARATOR.join(["ADR 12", "Consequences"])


def test_passages_of_a_plain_text_document_keep_hash_lines() -> None:
    # WHEN
    passages = passages_of(document("# not a heading\nbody", format="text"))

    # THEN
    assert [(p.text, p.heading_path) for p in passages] == [("# not a heading\nbody", [])]


def test_a_passage_cites_its_title_and_headings() -> None:
    # WHEN
    [passage] = passages_of(document("# Runbook\n## DNS\nFlush the cache."))

    # THEN
    assert passage.citation == CITATION_SEPARATOR.join(["ADR 12", "Runbook", "DNS"])
    assert passage.embedded_text == CITATION_SEPARATOR.join(["ADR 12", "Runbook", "DNS: Flush the cache."])


# --- KnowledgeDocument: validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"doc_id": ""},
        {"doc_id": "-lead"},
        {"doc_id": ".hidden"},
        {"doc_id": "a/b"},
        {"doc_id": "../etc"},
        {"doc_id": "a b"},
        {"doc_id": "adr:12"},
        {"doc_id": "x" * 129},
        {"tenant_id": "a:b"},
        {"tenant_id": ""},
        {"version": ""},
        {"version": ":v1"},
        {"version": "v 1"},
        {"version": "v/1"},
        {"version": "v1\n"},
        {"version": "x" * 65},
        {"title": ""},
        {"title": "   "},
        {"title": "\u200b\u200d"},
        {"title": "\x00\t"},
        {"title": "t" * (MAX_TITLE_CHARS + 1)},
        {"valid_from": date(2026, 6, 1), "valid_until": date(2026, 5, 31)},
        {"text": "x" * (MAX_DOCUMENT_CHARS + 1)},
        {"tags": [f"t{n}" for n in range(MAX_TAGS + 1)]},
        {"tags": [""]},
        {"tags": ["  "]},
        {"tags": ["a\x1fb"]},
        {"format": "html"},
        {"passages": -1},
        {"hits": -1},
        {"source_uri": "u" * 2049},
        {"text": "a\ud800b"},  # a lone surrogate: no store can keep it
        {"title": "x\udfff"},
        {"valid_from": date(1, 1, 1)},
        {"surprise": True},
    ],
    ids=repr,
)
def test_an_invalid_document_is_rejected(fields: dict[str, Any]) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        document(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"doc_id": "ADR-12.v_2"},
        {"doc_id": "x" * 128},
        {"version": "2026-03-01T10:00:00+00:00"},
        {"version": "1.2.3+build.7"},
        {"version": "x" * 64},
        {"title": "t" * MAX_TITLE_CHARS},
        {"valid_from": date(2026, 6, 1), "valid_until": date(2026, 6, 1)},
        {"valid_until": date(2026, 6, 1)},
        {"text": "x" * MAX_DOCUMENT_CHARS},
        {"text": ""},
        {"tags": [f"t{n}" for n in range(MAX_TAGS)]},
        {"format": "text"},
    ],
    ids=repr,
)
def test_a_valid_document_is_accepted(fields: dict[str, Any]) -> None:
    # WHEN / THEN
    assert document(**fields).doc_id


def test_tags_are_trimmed() -> None:
    # WHEN / THEN
    assert document(tags=["  ops "]).tags == ["ops"]


@pytest.mark.parametrize(
    ("day", "valid"),
    [
        (date(2026, 2, 28), False),
        (date(2026, 3, 1), True),
        (date(2026, 3, 31), True),
        (date(2026, 4, 1), False),
    ],
)
def test_valid_on_includes_both_ends(day: date, valid: bool) -> None:
    # GIVEN
    doc = document(valid_from=date(2026, 3, 1), valid_until=date(2026, 3, 31))

    # WHEN / THEN
    assert doc.valid_on(day) is valid
    assert document().valid_on(day)


# --- KnowledgeDocument: same_as and fingerprint ----------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"hits": 7, "last_hit_at": NOW},
        {"updated_at": NOW + timedelta(days=1), "created_at": NOW - timedelta(days=1)},
        {"passages": 3},
    ],
    ids=repr,
)
def test_what_a_put_does_not_change_keeps_the_document_the_same(change: dict[str, Any]) -> None:
    # GIVEN
    base = document()

    # WHEN
    other = base.model_copy(update=change)

    # THEN
    assert base.same_as(other)
    assert other.fingerprint == base.fingerprint


@pytest.mark.parametrize(
    "change",
    [
        {"version": "v2"},
        {"title": "ADR 12 (amended)"},
        {"format": "text"},
        {"source_uri": "https://wiki/adr-12"},
        {"tags": ["ops"]},
        {"valid_from": date(2026, 1, 1)},
        {"valid_until": date(2027, 1, 1)},
        {
            "text": "# Runbook\nRestart the replica.",
            "content_hash": document_hash("# Runbook\nRestart the replica."),
        },
    ],
    ids=repr,
)
def test_what_changes_what_is_found_or_shown_makes_another_document(change: dict[str, Any]) -> None:
    # GIVEN
    base = document()

    # WHEN
    other = document(**{**base.model_dump(), **change})

    # THEN
    assert not base.same_as(other)
    assert other.fingerprint != base.fingerprint or "version" in change


def test_tags_in_another_order_or_split_differently_are_another_fingerprint() -> None:
    # GIVEN
    fingerprints = {document(tags=tags).fingerprint for tags in (["a", "b"], ["b", "a"], ["a b"], ["ab"])}

    # WHEN / THEN
    assert len(fingerprints) == 4


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Do NOT restart the primary.", "Do not restart the primary."),
        ("Intro\n# Setup\nInstall it.", "Intro # Setup Install it."),
    ],
)
def test_a_text_change_that_changes_the_passages_is_another_document(before: str, after: str) -> None:
    # GIVEN the same version with two texts whose passages differ
    old, new = document(before), document(after)
    assert [p.text for p in passages_of(old)] != [p.text for p in passages_of(new)]

    # WHEN / THEN
    assert not old.same_as(new)
